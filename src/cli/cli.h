/*
 * cli.h: the fusec command's pieces. main.c parses the compile options and
 * dispatches; each subcommand lives in its own file. Only the CLI prints.
 *
 * Every command parses its options with getopt_long (cli_getopt), so
 * "--opt=VALUE" and "--opt VALUE" both work everywhere and options may come
 * before or after the file; main() checks that standard output was written
 * whole before it exits.
 *
 * Exit statuses (fusec --help lists them):
 *   0   success
 *   1   an error in the program, its inputs or outputs, or a failed write
 *   2   a usage error (bad options)
 *   77  no usable GPU: no CUDA driver, no device, or not the device asked for
 *       (77 is what test harnesses count as "skipped", as examples/embed.c
 *       and the GPU tests do)
 */
#ifndef FUSEC_CLI_H
#define FUSEC_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "pipeline.h"

enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_NO_GPU = 77 };

/* The exit-status table every command's usage ends with. */
#define CLI_EXIT_STATUS_TEXT                                                            \
	"exit status: 0 success; 1 an error in the program, its inputs or outputs;\n" \
	"2 a usage error; 77 no usable GPU (no CUDA driver, no device, or not the\n"  \
	"one asked for: the status test harnesses count as skipped).\n"

/* Read a whole program file ("-" is standard input) into malloc'ed memory.
 * On error prints "fusec: cannot read FILE: REASON" and returns NULL. */
char *cli_read_file(const char *path, size_t *len);

/* Write n bytes to stdout, remembering why a write failed for the message
 * main() prints at exit (stdio keeps only that one did). */
void cli_write(const void *buf, size_t n);

/* Compile `path` up to `stop`; on a program error prints the diagnostic and
 * returns NULL. */
Compilation *cli_compile(const char *path, PipeStage stop, bool fuse);

/* One command's option handler: called for each option getopt_long returns
 * (its val and argument); returns -1 to go on, else the exit code. */
typedef int (*CliOptionFn)(void *ctx, int opt, const char *arg);

/* Parse argv with getopt_long and `opts` (which should hold "help" 'h' and
 * "verbose" 'v': handled here, -v by setting FUSEC_LOG=1). Errors name the
 * option and `cmd` ("fusec run"). Returns -1 to go on, with the operands in
 * argv[*first..argc-1], else the exit code (EXIT_OK after --help). */
int cli_getopt(int argc, char **argv, const struct option *opts, const char *cmd, const char *usage,
               CliOptionFn fn, void *ctx, int *first);

/* An integer option from lo to hi: -1, or EXIT_USAGE after a message. */
int cli_parse_int(const char *opt, const char *v, long long lo, long long hi, long long *out);

/* --device N: 0 to 1023 (fz_context_create says how many the driver sees). */
int cli_parse_device(const char *v, int *device);

/* The exit status of a failed fz_context_create: EXIT_NO_GPU for no driver
 * or no device, else EXIT_ERROR. */
int cli_gpu_exit(fz_status s);

/* Print "fusec: " + message to stderr; names longer than the message
 * shortener's limit are cut (msg_shorten). */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int cmd_run(int argc, char **argv);   /* fusec run ... (run.c) */
int cmd_bench(int argc, char **argv); /* fusec bench ... (bench.c) */
int cmd_cache(int argc, char **argv); /* fusec cache ... (cache.c) */

/* A progress line on stderr while a long command works (progress.c): shown
 * only when stderr is a terminal and the work has taken more than a second,
 * rewritten in place ("\r") and erased when it stops. */
void progress_start(const char *what);
void progress_phase(const char *phase);
void progress_stop(void);

#endif
