/*
 * cli.h: the fusec command's pieces. main.c parses the compile options and
 * dispatches; each subcommand lives in its own file. Only the CLI prints.
 *
 * Exit codes: 0 success, 1 program or input error, 2 usage error.
 */
#ifndef FUSEC_CLI_H
#define FUSEC_CLI_H

#include <stdio.h>

#include "pipeline.h"

enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2 };

/* Read a whole file ("-" is standard input) into malloc'ed memory. On error
 * prints "fusec: cannot read FILE: REASON" and returns NULL. */
char *cli_read_file(const char *path, size_t *len);

/* Compile `path` up to `stop`; on a program error prints the diagnostic and
 * returns NULL. */
Compilation *cli_compile(const char *path, PipeStage stop, bool fuse);

/* The value of an option given as "--opt VALUE" or "--opt=VALUE"; NULL if
 * argv[*i] is not this option (advances *i past a separate value). Sets
 * *missing when the value is absent. */
const char *cli_opt_value(int argc, char **argv, int *i, const char *opt, bool *missing);

/* Print "fusec: " + message to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int cmd_run(int argc, char **argv);   /* fusec run ... (run.c) */
int cmd_bench(int argc, char **argv); /* fusec bench ... (bench.c) */
int cmd_cache(int argc, char **argv); /* fusec cache ... (cache.c) */

#endif
