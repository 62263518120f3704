/*
 * expr.c: the pieces of generated code that do not depend on the schedule:
 * C types, parameter names, source comments, literals, and the expression
 * that computes each op from the names of its arguments: the op's text in
 * ir/sem.def (the interpreter's) with the arguments in place of x, y, z, or a
 * call of the helper the prelude writes from that text.
 *
 * User identifiers are never pasted raw: a parameter is `in_`, `out_` or
 * `dim_` followed by the identifier (which holds only [A-Za-z0-9_]; anything
 * else would be hex-escaped), and everything the generator names itself
 * starts with `fz_`, `t`, `l`, `f`, `s`, `a` or `st` followed by a digit, so
 * no user name can be a CUDA keyword or clash with a generated one. Source
 * text only appears in // comments, made harmless: printable ASCII on one
 * line, never ending in a backslash (which would splice the next line in).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen/cgint.h"

const char *cg_store_type(fz_dtype t)
{
	switch (t) {
	case FZ_BOOL: return "unsigned char";
	case FZ_I32: return "int";
	case FZ_I64: return "long long";
	case FZ_F16: return "fz_f16";
	case FZ_BF16: return "fz_bf16";
	case FZ_F32: return "float";
	case FZ_F64: return "double";
	default: return "void";
	}
}

const char *cg_compute_type(fz_dtype t)
{
	switch (t) {
	case FZ_BOOL: return "bool";
	case FZ_I32: return "int";
	case FZ_I64: return "long long";
	case FZ_F64: return "double";
	default: return "float";
	}
}

int cg_compute_size(fz_dtype t)
{
	switch (t) {
	case FZ_BOOL: return 1;
	case FZ_I64:
	case FZ_F64: return 8;
	default: return 4;
	}
}

bool cg_internal(Cg *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = arena_vprintf(c->a, fmt, ap);
	va_end(ap);
	Span none = {0, 0, 0, 0};
	return diag_error(c->d, c->a, none, "internal error in code generation: %s", msg);
}

int32_t cg_new_stamp(Cg *c) { return ++c->stamp; }

/* An identifier made safe: [A-Za-z0-9_] kept, anything else as _xHH. */
static const char *mangle(Cg *c, const char *prefix, const char *name)
{
	StrBuf sb;
	sb_init(&sb, c->a);
	sb_puts(&sb, prefix);
	for (const unsigned char *s = (const unsigned char *)(name ? name : ""); *s; s++) {
		bool ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_';
		if (ok)
			sb_putn(&sb, (const char *)s, 1);
		else
			sb_printf(&sb, "_x%02x", *s);
	}
	return sb_str(&sb);
}

const char *cg_param_name(Cg *c, int i)
{
	const KParam *kp = &c->k->params[i];
	const Graph *g = c->g;
	switch (kp->kind) {
	case PARAM_DIM:
		return mangle(c, "dim_", kp->dim >= 0 && kp->dim < g->ndims ? g->dims[kp->dim] : "");
	case PARAM_OUT:
		if (kp->output >= 0 && kp->output < g->noutputs)
			return mangle(c, "out_", g->outputs[kp->output].name);
		return arena_printf(c->a, "st%d", kp->node);
	default: {
		const Node *n = &g->nodes[kp->node];
		if (n->op == OP_INPUT && n->input >= 0 && n->input < g->ninputs)
			return mangle(c, "in_", g->inputs[n->input].name);
		return arena_printf(c->a, "st%d", kp->node);
	}
	}
}

const char *cg_dim_expr(Cg *c, const Kernel *k, Dim d)
{
	if (!dim_is_sym(d))
		return arena_printf(c->a, "%lldLL", (long long)d);
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].kind == PARAM_DIM && k->params[i].dim == dim_sym(d))
			return cg_param_name(c, i);
	cg_internal(c, "kernel %s has no parameter for dimension %s", k->name,
	            dim_sym(d) < c->g->ndims ? c->g->dims[dim_sym(d)] : "?");
	return "0LL";
}

Dim cg_dim_at(const Node *n, int r, int ax)
{
	int i = ax - (r - n->rank);
	return i < 0 ? 1 : n->shape[i];
}

const char *cg_comment(Cg *c, const Node *n)
{
	const Source *src = c->g->src;
	StrBuf sb;
	sb_init(&sb, c->a);
	size_t off = n->span.off, len = n->span.len;
	if (!src || !src->text || off >= src->len || len == 0)
		return ir_ops[n->op].name;
	if (len > src->len - off)
		len = src->len - off;
	const size_t max = 64;
	bool space = false;
	size_t shown = 0;
	for (size_t i = 0; i < len && shown < max; i++) {
		unsigned char ch = (unsigned char)src->text[off + i];
		if (ch < 0x20 || ch >= 0x7f || ch == ' ') {
			space = shown > 0;
			continue;
		}
		if (space)
			sb_puts(&sb, " "), shown++;
		space = false;
		if (ch == '\\')
			sb_puts(&sb, "\\\\");
		else if (ch == '?' && sb.len > 0 && sb.buf[sb.len - 1] == '?')
			sb_puts(&sb, " ?"); /* no trigraph */
		else
			sb_putn(&sb, (const char *)&ch, 1);
		shown++;
	}
	if (shown >= max && len > max)
		sb_puts(&sb, " ...");
	if (sb.len > 0 && sb.buf[sb.len - 1] == '\\')
		sb_puts(&sb, " |"); /* never end a line in a backslash */
	return sb.len ? sb_str(&sb) : ir_ops[n->op].name;
}

/* ---- literals ---------------------------------------------------------------- */

static const char *float_literal(Cg *c, double v, bool dbl)
{
	if (isnan(v))
		return dbl ? "__longlong_as_double(0x7ff8000000000000ll)" : "__uint_as_float(0x7fc00000u)";
	if (isinf(v))
		return v > 0 ? (dbl ? "__longlong_as_double(0x7ff0000000000000ll)" : "__uint_as_float(0x7f800000u)")
		             : (dbl ? "(-__longlong_as_double(0x7ff0000000000000ll))" : "(-__uint_as_float(0x7f800000u))");
	char buf[64];
	if (dbl)
		snprintf(buf, sizeof buf, "%.17g", v);
	else
		snprintf(buf, sizeof buf, "%.9g", (double)(float)v);
	if (!dbl && isinf((float)v)) /* a double beyond float's range */
		return v > 0 ? "__uint_as_float(0x7f800000u)" : "(-__uint_as_float(0x7f800000u))";
	if (!strpbrk(buf, ".e"))
		strcat(buf, ".0");
	bool neg = buf[0] == '-';
	return arena_printf(c->a, "%s%s%s%s", neg ? "(" : "", buf, dbl ? "" : "f", neg ? ")" : "");
}

static const char *const_literal(Cg *c, const Node *n)
{
	switch (n->dtype) {
	case FZ_BOOL: return n->c.i ? "true" : "false";
	case FZ_I32: {
		int32_t v = (int32_t)n->c.i;
		if (v == INT32_MIN)
			return "(-2147483647 - 1)";
		return arena_printf(c->a, v < 0 ? "(%d)" : "%d", v);
	}
	case FZ_I64: {
		long long v = (long long)n->c.i;
		if (v == INT64_MIN)
			return "(-9223372036854775807LL - 1)";
		return arena_printf(c->a, v < 0 ? "(%lldLL)" : "%lldLL", v);
	}
	case FZ_F64: return float_literal(c, n->c.f, true);
	default: return float_literal(c, n->c.f, false);
	}
}

const char *cg_value(Cg *c, NodeId id)
{
	const Node *n = &c->g->nodes[id];
	if (n->op == OP_CONST)
		return const_literal(c, n);
	if (c->vname[id])
		return c->vname[id];
	cg_internal(c, "node %%%d (%s) is used but not available in kernel %s", id, ir_ops[n->op].name,
	            c->k ? c->k->name : "?");
	return "0";
}

bool cg_store_cast(Cg *c, CgW *w, NodeId id)
{
	if (!c->store_cast[id])
		return false;
	const Node *n = &c->g->nodes[id];
	c->vname[id] = cg_value(c, n->args[0]);
	cw_line(w, "// t%d = %s: rounded where it is stored", id, cg_comment(c, n));
	return true;
}

/* ---- expressions -------------------------------------------------------------- */

static const char *cast_expr(Cg *c, fz_dtype from, fz_dtype to, const char *a)
{
	bool fdbl = from == FZ_F64, ffloat = dtype_is_float(from) && !fdbl;
	switch (to) {
	case FZ_BOOL:
		if (from == FZ_BOOL)
			return a;
		return arena_printf(c->a, "%s != %s", a, dtype_is_float(from) ? (fdbl ? "0.0" : "0.0f") : "0");
	case FZ_I32:
		if (ffloat)
			return arena_printf(c->a, "__float2int_rz(%s)", a);
		if (fdbl)
			return arena_printf(c->a, "__double2int_rz(%s)", a);
		if (from == FZ_I64)
			return arena_printf(c->a, "(int)(unsigned)(unsigned long long)%s", a);
		return from == FZ_I32 ? a : arena_printf(c->a, "(int)%s", a);
	case FZ_I64:
		if (ffloat)
			return arena_printf(c->a, "__float2ll_rz(%s)", a);
		if (fdbl)
			return arena_printf(c->a, "__double2ll_rz(%s)", a);
		return from == FZ_I64 ? a : arena_printf(c->a, "(long long)%s", a);
	case FZ_F64: return fdbl ? a : arena_printf(c->a, "(double)%s", a);
	case FZ_F32: return ffloat ? a : arena_printf(c->a, "(float)%s", a);
	case FZ_F16:
	case FZ_BF16: {
		c->helpers |= CGH_ROUND;
		const char *v = ffloat ? a
		                : fdbl ? arena_printf(c->a, "fz_odd(%s)", a)
		                : from == FZ_BOOL ? arena_printf(c->a, "(float)%s", a)
		                                  : arena_printf(c->a, "fz_odd((long long)%s)", a);
		return arena_printf(c->a, "fz_round_%s(%s)", to == FZ_F16 ? "f16" : "bf16", v);
	}
	case FZ_DTYPE_COUNT: break;
	}
	return NULL;
}

/* The end of the token at p: a word ([A-Za-z_][A-Za-z0-9_]*, *word set), a
 * number (digits, letters and points, so the e of 1e5 is no word), or one
 * other character. */
static const char *token_end(const char *p, bool *word)
{
	bool digit = *p >= '0' && *p <= '9';
	*word = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_';
	if (!digit && !*word)
		return p + 1;
	const char *q = p;
	while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_' ||
	       (digit && *q == '.'))
		q++;
	return q;
}

/* How many times the text names identifier `id` as a whole word. */
static int word_count(const char *text, const char *id)
{
	size_t n = strlen(id);
	int count = 0;
	bool word;
	for (const char *p = text, *q; *p; p = q) {
		q = token_end(p, &word);
		count += word && (size_t)(q - p) == n && memcmp(p, id, n) == 0;
	}
	return count;
}

bool cg_text_names(const char *text, const char *id) { return word_count(text, id) > 0; }

/* `text` with the operands x, y, z replaced by the values' names (whole
 * words only: the x of exp is not an operand). Values are names, literals
 * or parenthesised, so no parentheses are needed around them. */
static const char *substitute(Cg *c, const char *text, const char *const *v)
{
	StrBuf sb;
	sb_init(&sb, c->a);
	bool word;
	for (const char *p = text, *q; *p; p = q) {
		q = token_end(p, &word);
		int k = word && q - p == 1 && *p >= 'x' && *p <= 'z' ? *p - 'x' : -1;
		if (k >= 0 && v[k])
			sb_puts(&sb, v[k]);
		else
			sb_putn(&sb, p, (size_t)(q - p));
	}
	return sb_str(&sb);
}

/* fz_<name>(a, b, ...) */
static const char *helper_call(Cg *c, Op op, const char *const *v)
{
	StrBuf sb;
	sb_init(&sb, c->a);
	sb_printf(&sb, "fz_%s(", ir_ops[op].name);
	for (int k = 0; k < ir_ops[op].arity; k++)
		sb_printf(&sb, "%s%s", k ? ", " : "", v[k]);
	sb_puts(&sb, ")");
	return sb_str(&sb);
}

/* exp, sigmoid, silu and division of half-precision values: the prelude's
 * fz_<name>_h, which compute them with the hardware's exp2 and an
 * approximate division (prelude_ops.c's cg_pre_halfmath says why that is
 * exact enough for a half; a row kernel's division by a value of the row is
 * row_chunk.c's). */
static const char *half_form(Cg *c, const Node *n, const char *const *v)
{
	if (n->dtype != FZ_F16 && n->dtype != FZ_BF16)
		return NULL;
	if (n->op != OP_EXP && n->op != OP_SIGMOID && n->op != OP_SILU && n->op != OP_DIV)
		return NULL;
	c->helpers |= CGH_HALFMATH;
	if (n->op == OP_DIV)
		return arena_printf(c->a, "fz_div_h(%s, %s)", v[0], v[1]);
	return arena_printf(c->a, "fz_%s_h(%s)", ir_ops[n->op].name, v[0]);
}

/* An op from its text in ir/sem.def for the node's operand kind: pasted in
 * place when it is an expression that names each operand once and nothing
 * else of its own (x + y, exp(x)), else a call of the helper fz_<name> the
 * prelude writes from the same text (it names the types T or U, repeats an
 * operand, or is a function body). */
static const char *sem_expr(Cg *c, const Node *n, const char *const *v)
{
	Op op = (Op)n->op;
	const char *half = half_form(c, n, v);
	if (half)
		return half;
	CgKind kind = cg_kind((fz_dtype)n->operand);
	bool body = false;
	const char *text = kind < CG_KIND_COUNT ? cg_sem_text(op, kind, &body) : NULL;
	if (!text)
		return NULL;
	bool inline_ok = !body && !cg_text_names(text, "T") && !cg_text_names(text, "U");
	for (int k = 0; k < ir_ops[op].arity; k++)
		inline_ok &= word_count(text, (const char *[]){"x", "y", "z"}[k]) <= 1;
	if (inline_ok)
		return substitute(c, text, v);
	c->ophelp[op] |= (uint8_t)(1u << kind);
	return helper_call(c, op, v);
}

/* ---- reductions ------------------------------------------------------------------------ */

const char *cg_acc_type(Cg *c, NodeId red)
{
	const Graph *g = c->g;
	const Node *n = &g->nodes[red];
	fz_dtype in = (fz_dtype)g->nodes[n->args[0]].dtype;
	if (n->op == OP_SUM || n->op == OP_MEAN)
		return !dtype_is_float(in) ? "long long" : in == FZ_F64 ? "double" : "float";
	return in == FZ_BOOL ? "int" : cg_compute_type(in);
}

const char *cg_acc_op(const Node *n) { return n->op == OP_MAX ? "fz_max" : n->op == OP_MIN ? "fz_min" : "fz_sum"; }

const char *cg_acc_identity(Cg *c, NodeId red)
{
	const char *t = cg_acc_type(c, red);
	Op op = (Op)c->g->nodes[red].op;
	bool dbl = strcmp(t, "double") == 0, flt = strcmp(t, "float") == 0, ll = strcmp(t, "long long") == 0;
	if (op == OP_SUM || op == OP_MEAN)
		return dbl ? "0.0" : flt ? "0.0f" : "0LL";
	bool mx = op == OP_MAX;
	if (flt)
		return mx ? "(-__uint_as_float(0x7f800000u))" : "__uint_as_float(0x7f800000u)";
	if (dbl)
		return mx ? "(-__longlong_as_double(0x7ff0000000000000ll))" : "__longlong_as_double(0x7ff0000000000000ll)";
	if (ll)
		return mx ? "(-9223372036854775807LL - 1)" : "9223372036854775807LL";
	bool is_bool = c->g->nodes[c->g->nodes[red].args[0]].dtype == FZ_BOOL;
	if (is_bool)
		return mx ? "0" : "1";
	return mx ? "(-2147483647 - 1)" : "2147483647";
}

const char *cg_acc_arg(Cg *c, NodeId red)
{
	NodeId x = c->g->nodes[red].args[0];
	const char *t = cg_acc_type(c, red), *v = cg_value(c, x);
	if (strcmp(t, cg_compute_type((fz_dtype)c->g->nodes[x].dtype)) != 0)
		v = arena_printf(c->a, "(%s)%s", t, v);
	return v;
}

const char *cg_acc_result(Cg *c, NodeId red, const char *acc, const char *n)
{
	const Node *nd = &c->g->nodes[red];
	const char *t = cg_acc_type(c, red);
	if (nd->op == OP_MEAN) {
		if (strcmp(t, "long long") == 0)
			return arena_printf(c->a, "(float)%s / (float)%s", acc, n);
		return arena_printf(c->a, "%s / (%s)%s", acc, t, n);
	}
	if (nd->dtype == FZ_BOOL)
		return arena_printf(c->a, "%s != 0", acc);
	return acc;
}

const char *cg_node_expr(Cg *c, NodeId id)
{
	const Graph *g = c->g;
	const Node *n = &g->nodes[id];
	const char *v[3] = {NULL, NULL, NULL};
	for (int i = 0; i < ir_ops[n->op].arity && i < 3; i++)
		v[i] = cg_value(c, n->args[i]);
	const char *e = NULL;
	switch (ir_ops[n->op].cuda) {
	case CU_SEM: e = sem_expr(c, n, v); break;
	case CU_MINMAX:
		c->helpers |= CGH_MINMAX;
		e = helper_call(c, (Op)n->op, v);
		break;
	case CU_SELECT: e = arena_printf(c->a, "%s ? %s : %s", v[0], v[1], v[2]); break;
	case CU_CAST: e = cast_expr(c, (fz_dtype)n->operand, (fz_dtype)n->dtype, v[0]); break;
	case CU_NONE: break;
	}
	if (!e)
		cg_internal(c, "cannot compute %s of %s in kernel %s", ir_ops[n->op].name,
		            fz_dtype_name((fz_dtype)n->operand), c->k ? c->k->name : "?");
	return e;
}

/* ---- signatures and parameters --------------------------------------------------- */

void cg_bind_params(Cg *c, const Kernel *k)
{
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if ((kp->kind == PARAM_IN || kp->kind == PARAM_SCALAR) && c->pin[kp->node] < 0)
			c->pin[kp->node] = i;
	}
}

void cg_unbind_params(Cg *c, const Kernel *k)
{
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind == PARAM_IN || kp->kind == PARAM_SCALAR)
			c->pin[kp->node] = -1;
	}
}

bool cg_long_math(Op op) { return ir_ops[op].cost == COST_LONG; }

bool cg_is_leaf(Cg *c, NodeId id)
{
	const Node *n = &c->g->nodes[id];
	return n->op == OP_CONST || n->op == OP_INPUT || c->pin[id] >= 0;
}
