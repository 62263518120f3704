/*
 * sem_fns.h: sem.def's texts as a function per compute type, each a switch
 * with a case for every op that has a text for it. Included, once, by the
 * CPU interpreter (eval.c, as C) and by the GPU interpreter
 * (runtime/interpret.cu, as CUDA C++), which define first:
 *
 *   SEM_FN                  the functions' qualifiers
 *   SEM_I32 SEM_U32 SEM_I64 SEM_U64   the integer types of each width
 *   SEM_NAN                 a float NaN
 *
 * Callers call a function only for an op sem.def has a text for, so the
 * value after a switch is never returned.
 */
#define SEM_NONE(op, ...)
#define SEM_EXPR(op, ...) case op: return __VA_ARGS__;
#define SEM_BODY(op, ...) case op: { __VA_ARGS__ }

#define FLOAT SEM_EXPR
#define FLOAT_FN SEM_BODY
#define INT SEM_NONE
#define INT_FN SEM_NONE
#define BOOL SEM_NONE
#define BOOL_FN SEM_NONE
#define ALL SEM_EXPR
SEM_FN float sem_f32(int op, float x, float y, float z)
{
	typedef float T;
	switch (op) {
#include "ir/sem.def"
	default: break;
	}
	return (T)SEM_NAN;
}

SEM_FN double sem_f64(int op, double x, double y, double z)
{
	typedef double T;
	switch (op) {
#include "ir/sem.def"
	default: break;
	}
	return (T)SEM_NAN;
}
#undef FLOAT
#undef FLOAT_FN
#undef INT
#undef INT_FN
#define FLOAT SEM_NONE
#define FLOAT_FN SEM_NONE
#define INT SEM_EXPR
#define INT_FN SEM_BODY

SEM_FN SEM_I32 sem_i32(int op, SEM_I32 x, SEM_I32 y, SEM_I32 z)
{
	typedef SEM_I32 T;
	typedef SEM_U32 U;
	switch (op) {
#include "ir/sem.def"
	default: break;
	}
	return (T)(U)0;
}

SEM_FN SEM_I64 sem_i64(int op, SEM_I64 x, SEM_I64 y, SEM_I64 z)
{
	typedef SEM_I64 T;
	typedef SEM_U64 U;
	switch (op) {
#include "ir/sem.def"
	default: break;
	}
	return (T)(U)0;
}
#undef INT
#undef INT_FN
#undef BOOL
#undef BOOL_FN
#define INT SEM_NONE
#define INT_FN SEM_NONE
#define BOOL SEM_EXPR
#define BOOL_FN SEM_BODY

SEM_FN bool sem_bool(int op, bool x, bool y, bool z)
{
	switch (op) {
#include "ir/sem.def"
	default: break;
	}
	return false;
}
#undef FLOAT
#undef FLOAT_FN
#undef INT
#undef INT_FN
#undef BOOL
#undef BOOL_FN
#undef ALL
#undef SEM_EXPR
#undef SEM_BODY
#undef SEM_NONE
