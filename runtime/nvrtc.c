/* STUB: placeholder until the owning stage lands; replace this whole file. */
#include "runtime/nvrtc.h"
bool rt_nvrtc_compile(Arena *a, const char *source, const char *name, int major, int minor, bool cubin, RtNvrtcResult *out) { out->message = "not implemented\n"; return false; }
int rt_nvrtc_version(void) { return 0; }
