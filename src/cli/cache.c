/* STUB: placeholder until the owning stage lands; replace this whole file. */
#include "cli.h"
int cmd_cache(int argc, char **argv) { cli_error("cache: not implemented"); return EXIT_ERROR; }
