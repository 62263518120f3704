/* STUB: placeholder until the owning stage lands; replace this whole file. */
#include "tensor.h"
bool npy_read(const char *path, Tensor *out, char *err, size_t errlen) { return false; }
bool npy_write(const char *path, const Tensor *t, char *err, size_t errlen) { return false; }
