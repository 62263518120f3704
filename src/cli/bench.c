/* STUB: placeholder until the owning stage lands; replace this whole file. */
#include "cli.h"
int cmd_bench(int argc, char **argv) { cli_error("bench: not implemented"); return EXIT_ERROR; }
