/*
 * ops.c: the op table (from ops.def) and the builtin functions of the
 * language.
 *
 * A builtin is an op whose table name is the function's name: every OC_MATH
 * and OC_REDUCE op, and minimum, maximum, pow, clamp and where. Operators
 * (add, neg, ...) and leaves have table names too, but those are printer
 * names, not callable: the list below says which ops are builtins, so that
 * "add" stays an ordinary identifier.
 */
#include "ir/ir.h"

#include <string.h>

const OpInfo ir_ops[OP_COUNT] = {
#define OP(e, n, ar, c) [e] = {n, ar, c},
#include "ir/ops.def"
#undef OP
};

bool ir_op_is_builtin(Op op)
{
	OpClass c = ir_ops[op].cls;
	return c == OC_MATH || c == OC_REDUCE || op == OP_MINIMUM || op == OP_MAXIMUM || op == OP_POW ||
	       op == OP_CLAMP || op == OP_WHERE;
}

int ir_builtin(const char *name, size_t len)
{
	for (int op = 0; op < OP_COUNT; op++)
		if (ir_op_is_builtin((Op)op) && strlen(ir_ops[op].name) == len && memcmp(ir_ops[op].name, name, len) == 0)
			return op;
	return -1;
}
