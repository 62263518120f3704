/*
 * build.c: from the AST to the op graph.
 *
 * Statements are taken in order, so a name is visible from the statement
 * after the one that binds it; inputs, bindings and fns share one namespace
 * (a hash table of Syms), and every name is bound once. Expressions are
 * built bottom-up by build_expr, a recursion over the AST (whose height the
 * parser bounds) that makes each node through the type rules (types.c), the
 * broadcasting rules (shape.c) and the folding, hash-consing constructor
 * (fold.c).
 *
 * A fn is not a node: a call inlines the fn's body with the parameters bound
 * to the argument nodes. Calls are memoised on (fn, argument node ids), so a
 * chain of fns that each call the one before twice is built in linear time,
 * not exponential. Inlining nests the recursion (a body within a body), so
 * the combined depth is bounded (IR_MAX_INLINE_DEPTH), which bounds the C
 * stack whatever the program. A fn's body is checked for names and arities
 * where the fn is defined, so an error in a fn is reported even when nothing
 * calls it; its types and shapes are known only at a call, so those errors
 * are reported there, inside the body, with the call site added.
 *
 * Unused inputs keep their OP_INPUT node (see passes.c), so Graph.inputs
 * always lists every declared input with a valid node.
 */
#include "ir/build.h"

#include <string.h>
#include <xxhash.h>

/* ---- names -------------------------------------------------------------------------- */

typedef enum SymKind {
	SYM_VALUE, /* an input or a binding: a node */
	SYM_FN     /* a fn: its statement */
} SymKind;

typedef struct Sym {
	const char *name;
	int len;
	SymKind kind;
	NodeId node;      /* SYM_VALUE */
	const Stmt *fn;   /* SYM_FN */
	int fn_index;     /* SYM_FN: fns defined before this one (order of definition) */
	Span def;         /* the defining statement */
	bool is_out;
	Span out_at;      /* the statement that made it an output */
} Sym;

typedef struct Syms {
	Sym **table; /* open addressing, NULL = empty */
	uint32_t cap;
	int n;
	int nfns;
} Syms;

static uint64_t name_hash(const char *s, int len) { return XXH3_64bits(s, (size_t)len); }

static Sym *sym_find(Builder *b, const char *name, int len)
{
	Syms *t = b->syms;
	uint32_t mask = t->cap - 1;
	for (uint32_t i = (uint32_t)name_hash(name, len) & mask; t->table[i]; i = (i + 1) & mask) {
		Sym *s = t->table[i];
		if (s->len == len && memcmp(s->name, name, (size_t)len) == 0)
			return s;
	}
	return NULL;
}

static void sym_insert(Builder *b, Sym *s)
{
	Syms *t = b->syms;
	if ((uint32_t)(t->n + 1) * 2 > t->cap) {
		Sym **old = t->table;
		uint32_t oldcap = t->cap;
		t->cap *= 2;
		t->table = ARENA_ARRAY(b->a, Sym *, t->cap);
		t->n = 0;
		for (uint32_t i = 0; i < oldcap; i++)
			if (old[i])
				sym_insert(b, old[i]);
	}
	uint32_t mask = t->cap - 1;
	uint32_t i = (uint32_t)name_hash(s->name, s->len) & mask;
	while (t->table[i])
		i = (i + 1) & mask;
	t->table[i] = s;
	t->n++;
}

/* What a name means where it is used. */
typedef enum RefKind { REF_NONE, REF_PARAM, REF_VALUE, REF_FN, REF_BUILTIN } RefKind;

typedef struct Ref {
	RefKind kind;
	int index;      /* REF_PARAM: parameter; REF_BUILTIN: op */
	const Sym *sym; /* REF_VALUE, REF_FN */
} Ref;

/* The fn body being inlined (or checked, with args NULL). */
typedef struct Scope {
	const Stmt *fn;
	int fn_index;
	const NodeId *args; /* the argument nodes, one per parameter */
	struct Scope *up;
} Scope;

static int param_index(const Stmt *fn, const char *name, int len)
{
	for (int i = 0; i < fn->nparams; i++)
		if (fn->param_lens[i] == len && memcmp(fn->params[i], name, (size_t)len) == 0)
			return i;
	return -1;
}

/* Resolve a name: a parameter of the fn being built, a binding or input
 * (not seen from a fn body), an fn (from a body: only an earlier one), or a
 * builtin. Unknown is an error. */
static Ref resolve(Builder *b, const char *name, int len, Span at)
{
	Scope *s = b->scope;
	Ref r = {REF_NONE, -1, NULL};
	if (s && (r.index = param_index(s->fn, name, len)) >= 0) {
		r.kind = REF_PARAM;
		return r;
	}
	const Sym *sym = sym_find(b, name, len);
	if (sym && s && !(sym->kind == SYM_FN && sym->fn_index < s->fn_index))
		sym = NULL;
	if (sym) {
		r.kind = sym->kind == SYM_FN ? REF_FN : REF_VALUE;
		r.sym = sym;
	} else if ((r.index = ir_builtin(name, (size_t)len)) >= 0) {
		r.kind = REF_BUILTIN;
	} else if (s) {
		diag_error(b->d, b->a, at, "unknown name '%.*s' (a fn sees only its parameters and earlier fns)", len,
		           name);
	} else {
		diag_error(b->d, b->a, at, "unknown name '%.*s'", len, name);
	}
	return r;
}

/* A name used as a value must not be a function. */
static bool check_value_ref(Builder *b, Ref r, const char *name, int len, Span at)
{
	if (r.kind == REF_FN)
		return diag_error(b->d, b->a, at, "'%.*s' is a function, not a value", len, name);
	if (r.kind == REF_BUILTIN)
		return diag_error(b->d, b->a, at, "'%.*s' is a builtin function, not a value", len, name);
	return r.kind != REF_NONE;
}

/* A called name must be a function taking that many arguments. */
static bool check_call_ref(Builder *b, Ref r, const Ast *call)
{
	if (r.kind == REF_NONE)
		return false;
	if (r.kind == REF_PARAM || r.kind == REF_VALUE)
		return diag_error(b->d, b->a, call->op_span, "'%.*s' is not a function", call->name_len, call->name);
	int want = r.kind == REF_FN ? r.sym->fn->nparams : ir_ops[r.index].arity;
	if (call->nargs != want)
		return diag_error(b->d, b->a, call->op_span, "'%.*s' takes %d argument%s, got %d", call->name_len,
		                  call->name, want, want == 1 ? "" : "s", call->nargs);
	return true;
}

/* A name a statement binds: not a builtin, not bound before. */
static bool check_new_name(Builder *b, const char *name, int len, Span at)
{
	if (ir_builtin(name, (size_t)len) >= 0)
		return diag_error(b->d, b->a, at, "'%.*s' is a builtin function and cannot be redefined", len, name);
	const Sym *old = sym_find(b, name, len);
	if (old)
		return diag_error(b->d, b->a, at, "'%.*s' is already defined (at %d:%d)", len, name, old->def.line,
		                  old->def.col);
	return true;
}

static Sym *define(Builder *b, const Stmt *s, SymKind kind)
{
	Sym *sym = ARENA_NEW(b->a, Sym);
	sym->name = s->name;
	sym->len = s->name_len;
	sym->kind = kind;
	sym->node = -1;
	sym->def = s->span;
	if (kind == SYM_FN) {
		sym->fn = s;
		sym->fn_index = b->syms->nfns++;
	}
	sym_insert(b, sym);
	return sym;
}

/* ---- fn call memo ------------------------------------------------------------------------- */

typedef struct MemoEntry {
	int fn;
	int nargs;
	const NodeId *args;
	NodeId result;
	uint64_t hash;
} MemoEntry;

typedef struct Memo {
	MemoEntry **table;
	uint32_t cap;
	int n;
} Memo;

static uint64_t memo_hash(int fn, int nargs, const NodeId *args)
{
	XXH64_hash_t h = XXH3_64bits_withSeed(args, sizeof(NodeId) * (size_t)nargs, (XXH64_hash_t)fn);
	return h;
}

static NodeId memo_find(Builder *b, int fn, int nargs, const NodeId *args)
{
	Memo *m = b->memo;
	uint64_t h = memo_hash(fn, nargs, args);
	uint32_t mask = m->cap - 1;
	for (uint32_t i = (uint32_t)h & mask; m->table[i]; i = (i + 1) & mask) {
		const MemoEntry *e = m->table[i];
		if (e->hash == h && e->fn == fn && e->nargs == nargs &&
		    memcmp(e->args, args, sizeof(NodeId) * (size_t)nargs) == 0)
			return e->result;
	}
	return -1;
}

static void memo_insert(Builder *b, MemoEntry *e)
{
	Memo *m = b->memo;
	if ((uint32_t)(m->n + 1) * 2 > m->cap) {
		MemoEntry **old = m->table;
		uint32_t oldcap = m->cap;
		m->cap *= 2;
		m->table = ARENA_ARRAY(b->a, MemoEntry *, m->cap);
		m->n = 0;
		for (uint32_t i = 0; i < oldcap; i++)
			if (old[i])
				memo_insert(b, old[i]);
	}
	uint32_t mask = m->cap - 1;
	uint32_t i = (uint32_t)e->hash & mask;
	while (m->table[i])
		i = (i + 1) & mask;
	m->table[i] = e;
	m->n++;
}

static void memo_put(Builder *b, int fn, int nargs, const NodeId *args, NodeId result)
{
	MemoEntry *e = ARENA_NEW(b->a, MemoEntry);
	e->fn = fn;
	e->nargs = nargs;
	e->args = args;
	e->result = result;
	e->hash = memo_hash(fn, nargs, args);
	memo_insert(b, e);
}

/* ---- expressions --------------------------------------------------------------------------- */

static NodeId build_expr(Builder *b, const Ast *e);

/* The op of each operator token, unary and binary (messages name the
 * operator by its token: "'+'"). */
static const struct {
	TokKind tok;
	int arity;
	Op op;
} operators[] = {
	{TK_MINUS, 1, OP_NEG},  {TK_BANG, 1, OP_NOT},   {TK_TILDE, 1, OP_BITNOT}, {TK_PLUS, 2, OP_ADD},
	{TK_MINUS, 2, OP_SUB},  {TK_STAR, 2, OP_MUL},   {TK_SLASH, 2, OP_DIV},    {TK_PERCENT, 2, OP_MOD},
	{TK_EQ, 2, OP_EQ},      {TK_NE, 2, OP_NE},      {TK_LT, 2, OP_LT},        {TK_LE, 2, OP_LE},
	{TK_GT, 2, OP_GT},      {TK_GE, 2, OP_GE},      {TK_ANDAND, 2, OP_AND},   {TK_OROR, 2, OP_OR},
	{TK_AMP, 2, OP_BITAND}, {TK_PIPE, 2, OP_BITOR}, {TK_CARET, 2, OP_BITXOR}, {TK_SHL, 2, OP_SHL},
	{TK_SHR, 2, OP_SHR},
};

/* A reduction: the last axis becomes 1. Over an axis that is already the
 * literal 1 there is nothing to reduce, and the value is the operand's, in
 * the result dtype. */
static NodeId reduce(Builder *b, Op op, const Ast *e, NodeId x, const OpType *ty)
{
	const Node *n = irb_node(b, x);
	int rank = n->rank;
	Dim shape[FZ_MAX_RANK];
	memcpy(shape, n->shape, sizeof shape);
	if (shape[rank - 1] == 1)
		return irb_convert(b, x, ty->result, e->span);
	NodeId arg = irb_convert(b, x, ty->operand, e->args[0]->span);
	if (arg < 0)
		return -1;
	shape[rank - 1] = 1;
	return irb_make(b, op, ty->result, rank, shape, &arg, 0, e->span);
}

/* op applied to its built arguments: type rule, broadcast, conversions of
 * the operands, then the node (folded when they are constants). Kept out of
 * the recursion's frames. */
static __attribute__((noinline)) NodeId apply(Builder *b, Op op, const Ast *e, const NodeId *args,
                                              const char *what)
{
	OpType ty;
	if (!irb_type(b, op, args, e->op_span, what, &ty))
		return -1;
	if (ir_ops[op].cls == OC_REDUCE)
		return reduce(b, op, e, args[0], &ty);
	int rank;
	Dim shape[FZ_MAX_RANK];
	int n = ir_ops[op].arity;
	if (!irb_broadcast(b, n, args, e->op_span, &rank, shape))
		return -1;
	NodeId conv[3];
	for (int k = 0; k < n; k++) {
		fz_dtype want = op == OP_WHERE && k == 0 ? FZ_BOOL : ty.operand;
		if ((conv[k] = irb_convert(b, args[k], want, e->args[k]->span)) < 0)
			return -1;
	}
	return irb_make(b, op, ty.result, rank, shape, conv, ty.weak ? NF_WEAK : 0, e->span);
}

static bool build_args(Builder *b, const Ast *e, NodeId *args)
{
	for (int k = 0; k < e->nargs; k++)
		if ((args[k] = build_expr(b, e->args[k])) < 0)
			return false;
	return true;
}

/* unary, binary and ?: operators */
static NodeId build_operator(Builder *b, const Ast *e)
{
	NodeId args[3];
	if (!build_args(b, e, args))
		return -1;
	if (e->kind == AST_COND)
		return apply(b, OP_WHERE, e, args, "'?:'");
	for (size_t i = 0; i < sizeof operators / sizeof operators[0]; i++)
		if (operators[i].tok == e->op && operators[i].arity == e->nargs)
			return apply(b, operators[i].op, e, args, fe_token_name(e->op));
	diag_error(b->d, b->a, e->op_span, "internal error: unknown operator");
	return -1;
}

/* An explicit cast. To the dtype a value already has it is that value,
 * except that a cast to f16 or bf16 rounds: a half-typed value computed in
 * f32 is rounded only where stored or cast, so f16(a * b) is a rounding
 * point (but an input or a cast is rounded already). */
static NodeId build_cast(Builder *b, const Ast *e)
{
	NodeId x = build_expr(b, e->args[0]);
	if (x < 0)
		return -1;
	const Node *n = irb_node(b, x);
	fz_dtype t = (fz_dtype)e->dtype;
	bool weak = (n->flags & NF_WEAK) != 0;
	if (!weak && n->dtype == t && (!dtype_is_half(t) || n->op == OP_INPUT || n->op == OP_CAST))
		return x;
	int rank = n->rank;
	Dim shape[FZ_MAX_RANK];
	memcpy(shape, n->shape, sizeof shape);
	return irb_make(b, OP_CAST, t, rank, shape, &x, 0, e->span);
}

/* " (in 'f' called at L:C)" on an error found inside f's body, once. */
static void add_call_context(Builder *b, const Stmt *fn, const Ast *call)
{
	Diag *d = b->d;
	if (!d->set || b->call_noted)
		return;
	if (d->span.off < fn->span.off || d->span.off >= fn->span.off + fn->span.len)
		return; /* in the arguments: the caller's error */
	d->message = arena_printf(b->a, "%s (in '%.*s' called at %d:%d)", d->message, fn->name_len, fn->name,
	                          call->op_span.line, call->op_span.col);
	b->call_noted = true;
}

static NodeId inline_fn(Builder *b, const Sym *fn, const Ast *call, const NodeId *args)
{
	const Stmt *s = fn->fn;
	NodeId hit = memo_find(b, fn->fn_index, s->nparams, args);
	if (hit >= 0)
		return hit;
	if (b->depth + s->expr->depth > IR_MAX_INLINE_DEPTH) {
		diag_error(b->d, b->a, call->op_span, "functions nested too deeply (the limit is %d levels of "
		           "expression, counting the bodies of called fns)", IR_MAX_INLINE_DEPTH);
		return -1;
	}
	Scope scope = {s, fn->fn_index, args, b->scope};
	b->scope = &scope;
	NodeId r = build_expr(b, s->expr);
	b->scope = scope.up;
	if (r < 0) {
		add_call_context(b, s, call);
		return -1;
	}
	memo_put(b, fn->fn_index, s->nparams, args, r);
	return r;
}

static __attribute__((noinline)) NodeId call_builtin(Builder *b, const Ast *e, Op op, const NodeId *args)
{
	const char *what = arena_printf(b->a, "'%s'", ir_ops[op].name);
	return apply(b, op, e, args, what);
}

static NodeId build_call(Builder *b, const Ast *e)
{
	Ref r = resolve(b, e->name, e->name_len, e->op_span);
	if (!check_call_ref(b, r, e))
		return -1;
	NodeId *args = ARENA_ARRAY(b->a, NodeId, e->nargs ? e->nargs : 1);
	if (!build_args(b, e, args))
		return -1;
	if (r.kind == REF_BUILTIN)
		return call_builtin(b, e, (Op)r.index, args);
	return inline_fn(b, r.sym, e, args);
}

static NodeId build_name(Builder *b, const Ast *e)
{
	Ref r = resolve(b, e->name, e->name_len, e->op_span);
	if (!check_value_ref(b, r, e->name, e->name_len, e->op_span))
		return -1;
	return r.kind == REF_PARAM ? b->scope->args[r.index] : r.sym->node;
}

static NodeId build_expr(Builder *b, const Ast *e)
{
	if (b->depth >= IR_MAX_INLINE_DEPTH + FZ_MAX_DEPTH) { /* unreachable with the parser's bound */
		diag_error(b->d, b->a, e->span, "expression nested too deeply");
		return -1;
	}
	b->depth++;
	NodeId r = -1;
	switch (e->kind) {
	case AST_INT: r = irb_const(b, FZ_I64, (Scalar){.i = (int64_t)e->ival}, NF_WEAK, e->op_span); break;
	case AST_FLOAT: r = irb_const(b, FZ_F64, (Scalar){.f = e->fval}, NF_WEAK, e->op_span); break;
	case AST_NAME: r = build_name(b, e); break;
	case AST_UNARY:
	case AST_BINARY:
	case AST_COND: r = build_operator(b, e); break;
	case AST_CALL: r = build_call(b, e); break;
	case AST_CAST: r = build_cast(b, e); break;
	}
	b->depth--;
	return r;
}

/* A fn body's names and arities, checked where the fn is defined (types and
 * shapes are checked at each call). Recursion bounded by the AST height. */
static bool check_body(Builder *b, const Ast *e)
{
	if (e->kind == AST_NAME) {
		Ref r = resolve(b, e->name, e->name_len, e->op_span);
		return check_value_ref(b, r, e->name, e->name_len, e->op_span);
	}
	if (e->kind == AST_CALL && !check_call_ref(b, resolve(b, e->name, e->name_len, e->op_span), e))
		return false;
	for (int k = 0; k < e->nargs; k++)
		if (!check_body(b, e->args[k]))
			return false;
	return true;
}

/* ---- statements ----------------------------------------------------------------------------- */

static int dim_index(Builder *b, const AstDim *d)
{
	Graph *g = b->g;
	for (int k = 0; k < g->ndims; k++)
		if ((int)strlen(g->dims[k]) == d->name_len && memcmp(g->dims[k], d->name, (size_t)d->name_len) == 0)
			return k;
	int cap = g->ndims; /* dims grows by one: exact-size copies keep it simple */
	const char **dims = ARENA_ARRAY(b->a, const char *, cap + 1);
	if (cap)
		memcpy(dims, g->dims, sizeof(const char *) * (size_t)cap);
	dims[cap] = arena_strndup(b->a, d->name, (size_t)d->name_len);
	g->dims = dims;
	return g->ndims++;
}

/* in NAME: TYPE */
static bool stmt_in(Builder *b, const Stmt *s)
{
	Graph *g = b->g;
	if (!check_new_name(b, s->name, s->name_len, s->name_span))
		return false;
	if (g->ninputs == FZ_MAX_INPUTS)
		return diag_error(b->d, b->a, s->name_span, "too many inputs (the limit is %d)", FZ_MAX_INPUTS);
	Dim shape[FZ_MAX_RANK];
	int64_t literal = 1; /* elements counted over the literal dims */
	for (int k = 0; k < s->rank; k++) {
		const AstDim *d = &s->dims[k];
		shape[k] = d->name ? DIM_SYM(dim_index(b, d)) : d->size;
		if (!d->name && d->size > ((int64_t)1 << 62) / literal)
			return diag_error(b->d, b->a, d->span, "'%.*s' has more than 2^62 elements", s->name_len, s->name);
		if (!d->name)
			literal *= d->size;
	}
	NodeId id = irb_input(b, g->ninputs, (fz_dtype)s->dtype, s->rank, shape, s->name_span);
	if (id < 0)
		return false;
	IrInput in = {arena_strndup(b->a, s->name, (size_t)s->name_len), id, s->name_span};
	int cap = g->ninputs; /* exact-size growth: at most FZ_MAX_INPUTS */
	IrInput *items = ARENA_ARRAY(b->a, IrInput, cap + 1);
	if (cap)
		memcpy(items, g->inputs, sizeof(IrInput) * (size_t)cap);
	items[cap] = in;
	g->inputs = items;
	g->ninputs++;
	define(b, s, SYM_VALUE)->node = id;
	return true;
}

/* Make a value an output, under its binding's name. A weak constant takes
 * its default dtype (i32 or f32) here, as the contract says. */
static bool add_output(Builder *b, Sym *sym, const Stmt *s, Span at)
{
	Graph *g = b->g;
	if (sym->is_out)
		return diag_error(b->d, b->a, at, "'%.*s' is already an output (at %d:%d)", sym->len, sym->name,
		                  sym->out_at.line, sym->out_at.col);
	if (g->noutputs == FZ_MAX_OUTPUTS)
		return diag_error(b->d, b->a, at, "too many outputs (the limit is %d)", FZ_MAX_OUTPUTS);
	NodeId id = irb_convert(b, sym->node, irb_value_dtype(b, sym->node), s->expr ? s->expr->span : at);
	if (id < 0)
		return false;
	sym->is_out = true;
	sym->out_at = s->span;
	IrOutput out = {arena_strndup(b->a, sym->name, (size_t)sym->len), id, at};
	int cap = g->noutputs;
	IrOutput *items = ARENA_ARRAY(b->a, IrOutput, cap + 1);
	if (cap)
		memcpy(items, g->outputs, sizeof(IrOutput) * (size_t)cap);
	items[cap] = out;
	g->outputs = items;
	g->noutputs++;
	return true;
}

/* NAME = EXPR, out NAME = EXPR */
static bool stmt_let(Builder *b, const Stmt *s)
{
	if (!check_new_name(b, s->name, s->name_len, s->name_span))
		return false;
	NodeId id = build_expr(b, s->expr);
	if (id < 0)
		return false;
	Sym *sym = define(b, s, SYM_VALUE);
	sym->node = id;
	return !s->is_out || add_output(b, sym, s, s->name_span);
}

/* out NAME */
static bool stmt_out(Builder *b, const Stmt *s)
{
	Sym *sym = sym_find(b, s->name, s->name_len);
	if (!sym) {
		if (ir_builtin(s->name, (size_t)s->name_len) >= 0)
			return diag_error(b->d, b->a, s->name_span, "'%.*s' is a builtin function, not a value", s->name_len,
			                  s->name);
		return diag_error(b->d, b->a, s->name_span, "unknown name '%.*s'", s->name_len, s->name);
	}
	if (sym->kind == SYM_FN)
		return diag_error(b->d, b->a, s->name_span, "'%.*s' is a function, not a value", s->name_len, s->name);
	return add_output(b, sym, s, s->name_span);
}

/* fn NAME(P...) = EXPR: parameters must not be builtins; the body is
 * checked for names now, inlined at each call later. A parameter may share
 * a name with an input, binding or earlier fn: inside the body it wins. */
static bool stmt_fn(Builder *b, const Stmt *s)
{
	if (!check_new_name(b, s->name, s->name_len, s->name_span))
		return false;
	for (int i = 0; i < s->nparams; i++)
		if (ir_builtin(s->params[i], (size_t)s->param_lens[i]) >= 0)
			return diag_error(b->d, b->a, s->param_spans[i], "'%.*s' is a builtin function and cannot be redefined",
			                  s->param_lens[i], s->params[i]);
	Scope scope = {s, b->syms->nfns, NULL, NULL};
	b->scope = &scope;
	bool ok = check_body(b, s->expr);
	b->scope = NULL;
	if (ok)
		define(b, s, SYM_FN);
	return ok;
}

/* Where "no outputs" points: just past the last character that is not
 * white space, or 1:1 for an empty program. */
static Span end_of_program(const Source *src)
{
	size_t end = src->len;
	while (end > 0 && (src->text[end - 1] == ' ' || src->text[end - 1] == '\t' || src->text[end - 1] == '\n' ||
	                   src->text[end - 1] == '\r'))
		end--;
	Span sp = {(uint32_t)end, 1, 1, 1};
	for (size_t i = 0; i < end; i++) {
		if (src->text[i] == '\n') {
			sp.line++;
			sp.col = 1;
		} else {
			sp.col++;
		}
	}
	return sp;
}

bool ir_build(const Source *src, const AstProgram *p, Arena *a, const char *name, Graph *out, Diag *d)
{
	memset(out, 0, sizeof *out);
	out->arena = a;
	out->name = name;
	out->src = src;
	Builder *b = ARENA_NEW(a, Builder);
	b->a = a;
	b->src = src;
	b->g = out;
	b->d = d;
	irb_init(b);
	b->syms = ARENA_NEW(a, Syms);
	b->syms->cap = 256;
	b->syms->table = ARENA_ARRAY(a, Sym *, b->syms->cap);
	b->memo = ARENA_NEW(a, Memo);
	b->memo->cap = 64;
	b->memo->table = ARENA_ARRAY(a, MemoEntry *, b->memo->cap);
	for (int i = 0; i < p->n; i++) {
		const Stmt *s = &p->stmts[i];
		bool ok = false;
		switch (s->kind) {
		case STMT_IN: ok = stmt_in(b, s); break;
		case STMT_LET: ok = stmt_let(b, s); break;
		case STMT_OUT: ok = stmt_out(b, s); break;
		case STMT_FN: ok = stmt_fn(b, s); break;
		}
		if (!ok)
			return false;
	}
	if (out->noutputs == 0)
		return diag_error(d, a, end_of_program(src), "program has no outputs (mark a value with 'out')");
	return true;
}
