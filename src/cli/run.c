/* STUB: placeholder until the owning stage lands; replace this whole file. */
#include "cli.h"
int cmd_run(int argc, char **argv) { cli_error("run: not implemented"); return EXIT_ERROR; }
