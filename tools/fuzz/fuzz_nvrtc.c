/*
 * fuzz_nvrtc.c: fuzz_compile plus NVRTC. Every program that reaches codegen
 * has its CUDA (fused and per-op) compiled to a cubin for sm_90; a failure or
 * a non-empty log aborts. NVRTC takes tens of milliseconds a module, so this
 * is a target of its own, run after fuzz_compile has grown a corpus.
 */
#define FUZZ_NVRTC 1
#include "fuzz_compile.c"
