/*
 * pointwise.c: kernels of elementwise ops over one iteration space.
 *
 * One entry, `<kernel>_pw`. A thread takes one chunk of V consecutive
 * elements (V fills 16 bytes of the narrowest tensor the kernel streams), so
 * that full-shape operands and outputs move as one 16-byte vector access
 * each, with no bounds check and no scalar fallback in its code (launch.c
 * gives a block per 256 chunks). The rest goes element by element in a
 * grid-stride loop, before the chunk: the last n % V elements, all of them
 * when a full-shape pointer is not aligned for vectors (and any chunks a
 * grid too small to give each a thread leaves, so that any grid is
 * correct). The two parts share nothing but the prologue, so the vector part
 * keeps the registers of a kernel without a fallback: a fallback inside the
 * chunk's loads merges its values with the vectors' and costs registers
 * (silu(a) * b in bf16: 44 instead of 38, five blocks an SM instead of six),
 * and registers are what limits these kernels (docs/performance.md).
 *
 * Operands, by how their shape broadcasts into the iteration space:
 *   full     the same shape: element i
 *   scalar   all axes broadcast: loaded once, in the prologue
 *   bcast    anything else, e.g. [N] in [B, N] or [B, 1] in [B, N]: element
 *            off(i) (index.c's cg_offset_lambda), decided chunk by chunk: a
 *            chunk within one run of the operand's innermost axes is
 *            contiguous in it or one element (fz_ldb), so that an odd row
 *            length never sends the whole launch to the scalar path
 * Sizes are long long kernel arguments, so one module serves every size.
 */
#include "codegen/cgint.h"

typedef enum { OPD_FULL, OPD_SCALAR, OPD_BCAST } OpdKind;

typedef struct PwOpd {
	OpdKind kind;
	CgRun runs[FZ_MAX_RANK];
	int nruns;
} PwOpd;

/* An entry being written: its kernel (for rows of one, the row kernel seen
 * with its last axis as a literal 1), operands, chunk width, needed nodes. */
typedef struct Pw {
	Cg *c;
	const Kernel *k;
	PwOpd *opd;
	const char **ext;          /* bcast operands: the extent of their innermost run */
	int vec;
	int32_t need;              /* the stamp of the nodes the outputs need */
	bool rows;                 /* rows of one element: reductions of one value */
} Pw;

static bool classify(Cg *c, const Kernel *k, int i, PwOpd *o)
{
	const KParam *kp = &k->params[i];
	const Node *n = &c->g->nodes[kp->node];
	if (n->rank > k->rank)
		return cg_internal(c, "operand %%%d of kernel %s has a higher rank than its domain", kp->node, k->name);
	o->nruns = cg_runs(n, k->rank, k->domain, k->rank, o->runs);
	if (o->nruns < 0)
		return cg_internal(c, "operand %%%d of kernel %s does not broadcast to its domain", kp->node, k->name);
	bool all_kept = true, none = true;
	for (int r = 0; r < o->nruns; r++) {
		all_kept &= o->runs[r].kept;
		none &= !o->runs[r].kept;
	}
	o->kind = none ? OPD_SCALAR : all_kept ? OPD_FULL : OPD_BCAST;
	if (kp->kind == PARAM_OUT && o->kind != OPD_FULL && !(o->kind == OPD_SCALAR && o->nruns == 0))
		return cg_internal(c, "output %%%d of kernel %s does not have the kernel's shape", kp->node, k->name);
	return true;
}

/* Needed nodes: a descending sweep from the outputs over the kernel's nodes. */
static int32_t mark_needed(Cg *c, const Kernel *k)
{
	int32_t s = cg_new_stamp(c);
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].kind == PARAM_OUT)
			c->mark[k->params[i].node] = s;
	for (int i = k->nnodes - 1; i >= 0; i--) {
		NodeId id = k->nodes[i];
		if (c->mark[id] != s || cg_is_leaf(c, id))
			continue;
		const Node *n = &c->g->nodes[id];
		for (int a = 0; a < ir_ops[n->op].arity; a++)
			c->mark[n->args[a]] = s;
	}
	return s;
}

/* Every input's and output's kind and runs (pw->opd), once an entry. */
static bool classify_all(Pw *pw)
{
	for (int i = 0; i < pw->k->nparams; i++) {
		int kind = pw->k->params[i].kind;
		if ((kind == PARAM_IN || kind == PARAM_OUT) && !classify(pw->c, pw->k, i, &pw->opd[i]))
			return false;
	}
	return true;
}

/* The entry's arguments: the kernel's parameters, then the magic number of
 * each divisor of the broadcast operands' offsets (cg_offset_lambda), once
 * for each range of axes. */
static int entry_args(const Pw *pw, CgArg **out)
{
	Cg *c = pw->c;
	const Kernel *k = pw->k;
	CgArg *args = ARENA_ARRAY(c->a, CgArg, k->nparams + k->nparams * FZ_MAX_RANK + 1);
	int n = 0;
	for (int i = 0; i < k->nparams; i++)
		args[n++] = (CgArg){CGARG_PARAM, i};
	for (int i = 0; i < k->nparams; i++) {
		if (k->params[i].kind != PARAM_IN || pw->opd[i].kind != OPD_BCAST)
			continue;
		const PwOpd *o = &pw->opd[i];
		for (int q = 0; q < cg_offset_divisions(o->runs, o->nruns); q++) {
			CgArg a = {CGARG_DIVMAGIC, o->runs[q].lo * CG_DIV_AXES + o->runs[q].hi};
			bool seen = false;
			for (int j = k->nparams; j < n && !seen; j++)
				seen = args[j].index == a.index;
			if (!seen)
				args[n++] = a;
		}
	}
	*out = args;
	return n;
}

static void emit_header(const Pw *pw, const Kernel *rowk)
{
	Cg *c = pw->c;
	CgArg *args;
	int nargs = entry_args(pw, &args);
	cg_begin_entry(c, CG_PATH_POINTWISE, 0, pw->rows ? "one" : "pw", args, nargs);
	const char *shape = ir_shape_str(c->a, c->g, rowk->rank, rowk->domain);
	if (pw->rows)
		cg_entry_header(c, arena_printf(c->a, "rows of one element of %s, pointwise, %d rows a chunk", shape, pw->vec),
		                "each reduction of one value, computed once an element");
	else
		cg_entry_header(c, arena_printf(c->a, "pointwise over %s, %d elements a chunk", shape, pw->vec),
		                "a chunk a thread as vectors, then the rest element by element");
	cg_entry_signature(c, "__launch_bounds__(256)");
	cw_begin(c->w);
	c->helpers |= CGH_PW | (pw->rows ? CGH_ACC | CGH_MINMAX : 0); /* the reductions' functors */
}

/* The first broadcast input that reads the same elements as input i (the
 * same runs of the same axes: a layernorm's weight and bias), whose offset
 * i shares; i itself if none does. */
static int offset_owner(const Pw *pw, int i)
{
	for (int j = 0; j < i; j++) {
		const PwOpd *a = &pw->opd[j], *b = &pw->opd[i];
		if (pw->k->params[j].kind != PARAM_IN || a->kind != OPD_BCAST || a->nruns != b->nruns)
			continue;
		bool same = true;
		for (int r = 0; r < a->nruns && same; r++)
			same = a->runs[r].lo == b->runs[r].lo && a->runs[r].hi == b->runs[r].hi &&
			       a->runs[r].kept == b->runs[r].kept;
		if (same)
			return j;
	}
	return i;
}

/* Whether param i is an input the loads read (once per node). */
static bool loaded(const Pw *pw, int i)
{
	const KParam *kp = &pw->k->params[i];
	return kp->kind == PARAM_IN && pw->opd[i].kind != OPD_SCALAR && pw->c->pin[kp->node] == i;
}

/* Whether the broadcast inputs reading where input o does are contiguous
 * in their innermost run (a weight [C]), not one element of it ([T, 1]). */
static bool group_contig(const Pw *pw, int o)
{
	return pw->opd[o].runs[0].kept;
}

/* Whether param i is a loaded broadcast input of input o's group (the
 * inputs that read where o does, o first). */
static bool in_group(const Pw *pw, int i, int o)
{
	return loaded(pw, i) && pw->opd[i].kind == OPD_BCAST && offset_owner(pw, i) == o;
}

/* fz_a<o>: every pointer of the contiguous broadcast group of input o is
 * aligned for its chunks' vectors (emit_group). */
static void emit_group_alignment(const Pw *pw)
{
	Cg *c = pw->c;
	const Kernel *k = pw->k;
	for (int o = 0; o < k->nparams; o++) {
		if (!in_group(pw, o, o) || !group_contig(pw, o))
			continue;
		StrBuf cond;
		sb_init(&cond, c->a);
		for (int i = o; i < k->nparams; i++)
			if (in_group(pw, i, o))
				sb_printf(&cond, "%sfz_aligned(%s, %d)", cond.len ? " && " : "", cg_param_name(c, i),
				          cg_vec_align(pw->vec, (fz_dtype)c->g->nodes[k->params[i].node].dtype));
		cw_line(c->w, "const bool fz_a%d = %s;", o, sb_str(&cond));
	}
}

/* Before the chunks: the element count, the scalar operands, the broadcast
 * operands' offsets (ext[i]: the extent of operand i's innermost run; one
 * offset function for the operands that read the same elements) and the
 * vector test (every full-shape pointer aligned). */
static bool emit_prologue(const Pw *pw)
{
	Cg *c = pw->c;
	const Kernel *k = pw->k;
	PwOpd *opd = pw->opd;
	const char **ext = pw->ext;
	int vec = pw->vec;
	CgW *w = c->w;
	cw_line(w, "const long long fz_n = %s;", cg_extent(c, k, 0, k->rank));
	StrBuf cond;
	sb_init(&cond, c->a);
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind != PARAM_IN && kp->kind != PARAM_OUT && kp->kind != PARAM_SCALAR)
			continue;
		const Node *n = &c->g->nodes[kp->node];
		const char *name = cg_param_name(c, i);
		if (kp->kind == PARAM_SCALAR) {
			cw_line(w, "const %s t%d = fz_in(%s);", cg_compute_type((fz_dtype)n->dtype), kp->node, name);
			c->vname[kp->node] = arena_printf(c->a, "t%d", kp->node);
			continue;
		}
		if (kp->kind == PARAM_IN && opd[i].kind == OPD_SCALAR) {
			cw_line(w, "const %s t%d = fz_in(%s[0]); // %s: one element, everywhere", cg_compute_type((fz_dtype)n->dtype),
			        kp->node, name, ir_shape_str(c->a, c->g, n->rank, n->shape));
			c->vname[kp->node] = arena_printf(c->a, "t%d", kp->node);
			continue;
		}
		if (opd[i].kind == OPD_SCALAR)
			continue; /* a rank-0 output (of a rank-0 domain: one element) */
		if (opd[i].kind == OPD_BCAST) {
			c->helpers |= CGH_BCAST;
			int o = offset_owner(pw, i);
			cw_line(w, "// %s broadcasts: %s in %s%s", name, ir_shape_str(c->a, c->g, n->rank, n->shape),
			        ir_shape_str(c->a, c->g, k->rank, k->domain),
			        o < i ? arena_printf(c->a, ", read where %s is (fz_o%d)", cg_param_name(c, o), o) : "");
			ext[i] = o < i ? ext[o] : cg_offset_lambda(c, k, opd[i].runs, opd[i].nruns, arena_printf(c->a, "fz_o%d", i), w);
			continue;
		}
		sb_printf(&cond, "%sfz_aligned(%s, %d)", cond.len ? " && " : "", name, cg_vec_align(vec, (fz_dtype)n->dtype));
	}
	cw_line(w, "const bool fz_valign = %s;", cond.len ? sb_str(&cond) : "true");
	emit_group_alignment(pw);
	return true;
}

/* Element fz_i of every streamed input, into arrays of one. */
static void emit_loads_one(const Pw *pw)
{
	Cg *c = pw->c;
	const Kernel *k = pw->k;
	for (int i = 0; i < k->nparams; i++) {
		if (!loaded(pw, i))
			continue;
		const KParam *kp = &k->params[i];
		const Node *n = &c->g->nodes[kp->node];
		bool full = pw->opd[i].kind == OPD_FULL;
		const char *at = full ? "fz_i" : arena_printf(c->a, "fz_o%d(fz_i, fz_r, fz_div64())", offset_owner(pw, i));
		cw_line(c->w, "const %s l%d[1] = {fz_in(%s[%s])};", cg_compute_type((fz_dtype)n->dtype), kp->node,
		        cg_param_name(c, i), at);
		c->vname[kp->node] = arena_printf(c->a, "l%d[u]", kp->node);
	}
}

/* The broadcast inputs that read where input o does, chunk fz_c of each:
 * one offset (a division a run boundary) and one test for the group. A
 * chunk inside one run of a contiguous group, with every pointer aligned,
 * loads vectors, kept in the caches (other chunks read the same elements);
 * anything else goes through fz_ldb, operand by operand. One test a group,
 * not one an operand, and the cache hint: DyT bf16 4095x4096 (weight and
 * bias [C]) 28.3 -> 26.4 us, x * w + x f16 [64, 256, 1024] with w [256, 1024]
 * 22.6 -> 20.2 (H200, docs/performance.md "Broadcast chunks, packed and kept"). */
static void emit_group(const Pw *pw, int o)
{
	Cg *c = pw->c;
	const Kernel *k = pw->k;
	CgW *w = c->w;
	int vec = pw->vec;
	bool contig = group_contig(pw, o);
	cw_line(w, "long long fz_r%d;", o);
	cw_line(w, "const long long fz_b%d = fz_o%d(fz_c * %d, fz_r%d, fz_divm());", o, o, vec, o);
	for (int i = o; i < k->nparams; i++)
		if (in_group(pw, i, o)) {
			const Node *n = &c->g->nodes[k->params[i].node];
			cw_line(w, "fz_vec<%s, %d> l%d;", cg_store_type((fz_dtype)n->dtype), vec, k->params[i].node);
			c->vname[k->params[i].node] = arena_printf(c->a, "fz_get(l%d, u)", k->params[i].node);
		}
	if (contig)
		cw_open(w, "if (fz_r%d + %d <= %s && (fz_b%d & %d) == 0 && fz_a%d)", o, vec, pw->ext[o], o, vec - 1, o);
	for (int pass = contig ? 0 : 1; pass < 2; pass++) {
		if (pass == 1 && contig)
			cw_else(w);
		for (int i = o; i < k->nparams; i++) {
			if (!in_group(pw, i, o))
				continue;
			int id = k->params[i].node;
			const char *name = cg_param_name(c, i);
			if (pass == 0)
				cw_line(w, "fz_ldk(l%d, %s + fz_b%d);", id, name, o);
			else
				cw_line(w, "fz_ldb<%s>(l%d, %s, fz_b%d, fz_r%d, %s, fz_c * %d, fz_o%d);", contig ? "true" : "false",
				        id, name, o, o, pw->ext[i], vec, o);
		}
	}
	if (contig)
		cw_close(w);
}

/* Chunk fz_c of every streamed input, in its storage type: the full-shape
 * ones as vectors, then the broadcast ones a group at a time. */
static void emit_loads_chunk(const Pw *pw)
{
	Cg *c = pw->c;
	const Kernel *k = pw->k;
	for (int i = 0; i < k->nparams; i++) {
		if (!loaded(pw, i) || pw->opd[i].kind != OPD_FULL)
			continue;
		const KParam *kp = &k->params[i];
		const Node *n = &c->g->nodes[kp->node];
		cw_line(c->w, "fz_vec<%s, %d> l%d;", cg_store_type((fz_dtype)n->dtype), pw->vec, kp->node);
		cw_line(c->w, "fz_ldv(l%d, %s, fz_c);", kp->node, cg_param_name(c, i));
		c->vname[kp->node] = arena_printf(c->a, "fz_get(l%d, u)", kp->node);
	}
	for (int i = 0; i < k->nparams; i++)
		if (in_group(pw, i, i))
			emit_group(pw, i);
}

/* A reduction over a row of one element: its accumulator's identity combined
 * with that element, then its result over n = 1, as the row paths compute it
 * (sum(-0.0) is +0.0 there too). */
static const char *reduce_one(Cg *c, NodeId id)
{
	const char *acc = arena_printf(c->a, "%s::f(%s, %s)", cg_acc_op(&c->g->nodes[id]), cg_acc_identity(c, id),
	                               cg_acc_arg(c, id));
	return cg_acc_result(c, id, acc, "1");
}

/* The u-loop: every needed node of the chunk's V elements, into s<out>: its
 * element u of the compute type, or, for a chunk (not one), of the storage
 * type. */
static bool emit_elements(const Pw *pw, bool one, int32_t outs)
{
	Cg *c = pw->c;
	const Kernel *k = pw->k;
	cw_unroll(c->w);
	cw_open(c->w, "for (int u = 0; u < %d; u++)", one ? 1 : pw->vec);
	for (int i = 0; i < k->nnodes; i++) {
		NodeId id = k->nodes[i];
		if ((c->mark[id] != pw->need && c->mark[id] != outs) || cg_is_leaf(c, id))
			continue;
		const Node *n = &c->g->nodes[id];
		bool red = ir_ops[n->op].cls == OC_REDUCE;
		if (cg_store_cast(c, c->w, id))
			continue;
		if (red && !pw->rows)
			return cg_internal(c, "reduction %%%d in pointwise kernel %s", id, k->name);
		const char *e = red ? reduce_one(c, id) : cg_node_expr(c, id);
		if (!e)
			return false;
		cw_line(c->w, "const %s t%d = %s; // %s", cg_compute_type((fz_dtype)n->dtype), id, e, cg_comment(c, n));
		c->vname[id] = arena_printf(c->a, "t%d", id);
	}
	int32_t done = cg_new_stamp(c);
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind != PARAM_OUT || c->mark[kp->node] == done)
			continue;
		c->mark[kp->node] = done;
		if (one)
			cw_line(c->w, "s%d[u] = %s;", kp->node, cg_value(c, kp->node));
		else
			cw_line(c->w, "fz_out(s%d.e[u], %s);", kp->node, cg_value(c, kp->node));
	}
	cw_close(c->w);
	return true;
}

/* Loads, values and stores of one chunk of V elements (or, with one, of one
 * element: V = 1). */
static bool emit_part(const Pw *pw, bool one)
{
	Cg *c = pw->c;
	const Kernel *k = pw->k;
	CgW *w = c->w;
	if (one)
		emit_loads_one(pw);
	else
		emit_loads_chunk(pw);
	int32_t outs = cg_new_stamp(c);
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		if (kp->kind != PARAM_OUT || c->mark[kp->node] == outs)
			continue;
		c->mark[kp->node] = outs;
		fz_dtype t = (fz_dtype)c->g->nodes[kp->node].dtype;
		if (one)
			cw_line(w, "%s s%d[1];", cg_compute_type(t), kp->node);
		else
			cw_line(w, "fz_vec<%s, %d> s%d;", cg_store_type(t), pw->vec, kp->node);
	}
	if (!emit_elements(pw, one, outs))
		return false;
	for (int i = 0; i < k->nparams; i++) {
		const KParam *kp = &k->params[i];
		const char *name = cg_param_name(c, i);
		if (kp->kind == PARAM_OUT && one)
			cw_line(w, "fz_out(%s[fz_i], s%d[0]);", name, kp->node);
		else if (kp->kind == PARAM_OUT)
			cw_line(w, "fz_stv(%s, fz_c, s%d);", name, kp->node);
	}
	return true;
}

/* The rest first, then the chunk: with nothing of the element loop left
 * alive across the vector part, that part keeps the registers of a kernel
 * without the loop (silu in bf16: 32 instead of 38, 8 blocks an SM instead
 * of 6). */
static bool emit_body(const Pw *pw)
{
	Cg *c = pw->c;
	const Kernel *k = pw->k;
	const PwOpd *opd = pw->opd;
	int vec = pw->vec;
	CgW *w = c->w;
	int shift = 0;
	while ((1 << shift) < vec)
		shift++;
	cw_line(w, "const long long fz_nv = fz_valign ? fz_n >> %d : 0; // whole chunks of %d, as vectors", shift, vec);
	cw_line(w, "const long long fz_c = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
	cw_line(w, "const long long fz_t = (long long)gridDim.x * blockDim.x;");
	cw_line(w, "// element by element: the last partial chunk, everything when a pointer is not aligned,");
	cw_line(w, "// and the chunks past the grid's threads if it has too few");
	cw_open(w, "for (long long fz_i = (fz_nv < fz_t ? fz_nv : fz_t) * %d + fz_c; fz_i < fz_n; fz_i += fz_t)", vec);
	for (int i = 0; i < k->nparams; i++)
		if (k->params[i].kind == PARAM_IN && opd[i].kind == OPD_BCAST && c->pin[k->params[i].node] == i) {
			cw_line(w, "long long fz_r;");
			break;
		}
	if (!emit_part(pw, true))
		return false;
	cw_close(w);
	cw_line(w, "// chunk fz_c, as vectors");
	cw_open(w, "if (fz_c < fz_nv)");
	if (!emit_part(pw, false))
		return false;
	cw_close(w);
	cw_close(w);
	return true;
}

static bool emit_entry(Pw *pw, const Kernel *rowk)
{
	Cg *c = pw->c;
	pw->opd = ARENA_ARRAY(c->a, PwOpd, pw->k->nparams + 1);
	pw->ext = ARENA_ARRAY(c->a, const char *, pw->k->nparams + 1);
	pw->need = mark_needed(c, pw->k);
	if (!classify_all(pw))
		return false;
	emit_header(pw, rowk);
	bool ok = emit_prologue(pw) && emit_body(pw);
	cg_end_entry(c);
	return ok;
}

bool cg_pointwise(Cg *c)
{
	Pw pw = {.c = c, .k = c->k, .vec = cg_vec_width(c, false)};
	c->vec = pw.vec;
	c->info->vec = pw.vec;
	c->info->max_threads = 256;
	return emit_entry(&pw, c->k);
}

/* Rows of one element (cg.h): the row kernel as a pointwise one over its
 * rows, seen with its last axis as a literal 1, so that an operand of the
 * rows' shape ([B, N] or [B, 1]) is element i, one of the row's ([N]) a
 * scalar, and anything else broadcasts over the rows. V rows a chunk, the
 * row paths' V (launch.c counts the chunks so). Staged as short rows
 * (TILE), a thread's chunk of V held one element, its other lanes computed
 * for nothing, and a block moved 1 KiB a barrier; here every reduction is
 * its one value and nothing is exchanged. */
bool cg_rows_of_one(Cg *c, int vec)
{
	const Kernel *rowk = c->k;
	Kernel *view = ARENA_NEW(c->a, Kernel);
	*view = *rowk;
	view->domain[rowk->rank - 1] = 1;
	Pw pw = {.c = c, .k = view, .vec = vec, .rows = true};
	c->k = view;
	bool ok = emit_entry(&pw, rowk);
	c->k = rowk;
	c->info->one = ok;
	return ok;
}
