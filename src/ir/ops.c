/*
 * ops.c: the op table (from ops.def) and the builtin functions of the
 * language.
 *
 * A builtin is an op marked CALL in the table: its table name is the
 * function's name. Operators and leaves have table names too, but those are
 * printer names, not callable, so "add" stays an ordinary identifier.
 */
#include "ir/ir.h"

#include <string.h>

#define COST_OF_LIGHT COST_LIGHT
#define COST_OF_LONG COST_LONG
#define CALLED_CALL true
#define CALLED_OPER false

const OpInfo ir_ops[OP_COUNT] = {
#define OP(e, n, ar, c, ty, cost, call, cu) [e] = {n, ar, c, ty, COST_OF_##cost, CALLED_##call, cu},
#include "ir/ops.def"
#undef OP
};

int ir_builtin(const char *name, size_t len)
{
	for (int op = 0; op < OP_COUNT; op++)
		if (ir_ops[op].call && strlen(ir_ops[op].name) == len && memcmp(ir_ops[op].name, name, len) == 0)
			return op;
	return -1;
}
