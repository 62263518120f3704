/*
 * row_ring.c: how the split rows' entry without a row cache (_stream) keeps
 * bytes in flight in kernels of halves.
 *
 * That entry reads every pass's inputs from the L2 or DRAM, a few blocks of
 * 512 threads an SM (launch_rules.c's stream_rules). A group of chunks held in
 * registers (row_loop.c's group_chunks) was too little: in the lab (the
 * emitted kernel of rmsnorm bf16 4x4194304 edited, on the H200) its first
 * pass alone read at 2 TB/s, and the epilogue's column operands
 * (rmsnorm's w), loaded where they were used, exposed their latency at
 * every chunk. Each thread instead copies its chunks of a pass's streams,
 * column operands included, stages ahead into a ring of its own in shared
 * memory (cp.async: no registers held while they fly) and reads each back
 * when its turn comes. Nothing is shared between threads, so no barrier:
 * a thread waits for its own copies (fz_cpa_wait_but), one group a stage.
 *
 * A stage holds a piece of 16 bytes per thread for each 16 bytes of a chunk
 * of the pass's ringed streams (those whose chunk is a multiple of 16 bytes,
 * in order, while a stage stays within half of CG_RING_BYTES); the stages,
 * a power of two up to CG_RING_STAGES, fill CG_RING_BYTES a thread. The
 * chunks the ring cannot copy whole (a row's first and last, a stream not
 * 16-byte aligned there) and the other streams are loaded where they are
 * used, as before.
 *
 * Only where a chunk is 8 elements or more (halves): at f32's 4 a chunk the
 * ring's own work (a copy issued, a group committed and waited for, two
 * whole-chunk tests, a chunk at a time) made every f32 point slower. H200,
 * bench/replay_ab.py, the entry's groups -> the ring, us (docs/performance.md,
 * "The stream entry's ring"): rmsnorm bf16 4x4194304 40.0 -> 35.1, softmax
 * bf16 4x4194304 37.8 -> 35.0, rmsnorm bf16 5x3000017 37.2 -> 34.7,
 * layernorm bf16 130x128256 47.0 -> 45.9; but, in an earlier call, layernorm
 * f32 63x131072 36.7 -> 50.3, softmax f32 64x131072 31.1 -> 37.9.
 */
#include <string.h>

#include "codegen/rowint.h"

bool row_ring_here(const RowK *R) { return R->vec >= 8; }

/* A stream the pass copies through the ring: its leaf, parameter, chunk bytes
 * and first piece in a stage. */
typedef struct Ringed {
	NodeId id;
	int param, bytes, piece;
} Ringed;

static int chunk_bytes(const RowK *R, NodeId id)
{
	return R->vec * (int)fz_dtype_size((fz_dtype)R->c->g->nodes[id].dtype);
}

/* Pass m's ringed streams into out; returns how many, *pieces the pieces of
 * a stage. */
static int ringed(const RowK *R, const Closure *m, Ringed *out, int *pieces)
{
	Cg *c = R->c;
	int n = 0, p = 0;
	for (int i = 0; i < m->nleaf; i++) {
		NodeId id = m->leaf[i];
		int b = chunk_bytes(R, id);
		if (c->pin[id] < 0 || b % 16 != 0 || 16 * p + b > CG_RING_BYTES / 2)
			continue;
		out[n++] = (Ringed){.id = id, .param = c->pin[id], .bytes = b, .piece = p};
		p += b / 16;
	}
	*pieces = p;
	return n;
}

/* Stages of p pieces a thread: a power of two, CG_RING_BYTES in all at most. */
static int ring_stages(int p)
{
	int s = CG_RING_STAGES;
	while (s > 2 && s * 16 * p > CG_RING_BYTES)
		s /= 2;
	return s;
}

/* A stage's bytes (p pieces, fz_rs apart), and where piece k of the stage at fz_d is. */
static const char *stage_stride(const RowK *R, int p)
{
	return p == 1 ? "fz_rs" : arena_printf(R->c->a, "%d * fz_rs", p);
}

static const char *piece(const RowK *R, int k)
{
	return k == 0 ? "fz_d" : k == 1 ? "fz_d + fz_rs" : arena_printf(R->c->a, "fz_d + %d * fz_rs", k);
}

/* The copies of stage `it` (an int expression) into its place, if it is one
 * of the thread's chunks; a group committed either way, so that a wait
 * counts stages. */
static void emit_issue(RowK *R, const Ringed *r, int n, int P, int NS, const char *it)
{
	CgW *w = R->w;
	cw_begin(w);
	const char *e = strchr(it, ' ') ? arena_printf(R->c->a, "(%s)", it) : it;
	cw_line(w, "const long long ji = fz_j1 + (long long)%s * fz_step;", e);
	cw_line(w, "unsigned char *fz_d = fz_rg + (unsigned)(%s & %d) * %s;", e, NS - 1, stage_stride(R, P));
	cw_open(w, "if (%s < fz_nit)", it);
	for (int i = 0; i < n; i++) {
		const char *ptr = row_ptr(R, r[i].param);
		cw_line(w, "if (fz_whole<%d>(%s, ji, fz_e))", R->vec, ptr);
		cw_in(w);
		cw_line(w, "fz_ringcp<%d>(%s, fz_rs, %s + ji);", r[i].bytes, piece(R, r[i].piece), ptr);
		cw_out(w);
	}
	cw_close(w);
	cw_line(w, "fz_cpa_commit();");
	cw_close(w);
}

/* Opens pass m's loop over the thread's chunks from `start` through the ring:
 * the first stages issued, then each chunk's stage NS - 1 ahead issued, its
 * own waited for, and its leaves read (from the ring, or loaded where the
 * ring holds no copy) as l<id>[u]. The caller writes the chunk's body and
 * closes the loop (one block). */
void row_ring_open(RowK *R, const Closure *m, const char *start)
{
	Cg *c = R->c;
	CgW *w = R->w;
	Ringed *r = ARENA_ARRAY(c->a, Ringed, m->nleaf + 1);
	int P, n = ringed(R, m, r, &P), NS = ring_stages(P);
	if (n > 0 && NS * 16 * P > R->ring_bytes)
		R->ring_bytes = NS * 16 * P;
	cw_line(w, "const long long fz_j1 = %s;", start);
	cw_line(w, "const int fz_nit = fz_j1 < fz_e ? (int)((fz_e - fz_j1 + fz_step - 1) / fz_step) : 0;");
	if (n > 0) {
		c->helpers |= CGH_CPA | CGH_RING;
		cw_line(w, "// the ring: %d stages of %d bytes a thread, %d ahead", NS, 16 * P, NS - 1);
		/* not unrolled: once a pass, and NVRTC's time grows with its copies */
		cw_line(w, "#pragma unroll 1");
		cw_open(w, "for (int fz_i = 0; fz_i < %d; fz_i++)", NS - 1);
		emit_issue(R, r, n, P, NS, "fz_i");
		cw_close(w);
	}
	cw_open(w, "for (int fz_it = 0; fz_it < fz_nit; fz_it++)");
	if (n > 0) {
		emit_issue(R, r, n, P, NS, arena_printf(c->a, "fz_it + %d", NS - 1));
		cw_line(w, "fz_cpa_wait_but<%d>();", NS - 1);
	}
	cw_line(w, "const long long j0 = fz_j1 + (long long)fz_it * fz_step;");
	if (n > 0)
		cw_line(w, "const unsigned char *fz_d = fz_rg + (unsigned)(fz_it & %d) * %s;", NS - 1, stage_stride(R, P));
	for (int i = 0; i < m->nleaf; i++) {
		NodeId id = m->leaf[i];
		int p = c->pin[id], k = 0;
		if (p < 0) {
			cg_internal(c, "leaf %%%d of kernel %s has no parameter", id, R->k->name);
			return;
		}
		while (k < n && r[k].id != id)
			k++;
		cw_line(w, "%s l%d[%d];", cg_compute_type((fz_dtype)c->g->nodes[id].dtype), id, R->vec);
		const char *load = row_load(R, p, arena_printf(c->a, "l%d", id), "j0", "fz_e");
		if (k < n) {
			const char *ptr = row_ptr(R, p);
			cw_line(w, "if (fz_whole<%d>(%s, j0, fz_e))", R->vec, ptr);
			cw_in(w);
			cw_line(w, "fz_ringrd<%s>(l%d, %s, fz_rs);", cg_store_type((fz_dtype)c->g->nodes[id].dtype), id,
			        piece(R, r[k].piece));
			cw_out(w);
			cw_line(w, "else");
			cw_in(w);
		}
		cw_line(w, "%s", load);
		if (k < n)
			cw_out(w);
		c->vname[id] = arena_printf(c->a, "l%d[u]", id);
	}
}

/* The ring's base and a piece row's stride, before the loop over rows. */
void row_ring_prologue(RowK *R, CgW *w)
{
	(void)R;
	cw_line(w, "// the ring (row_ring.c): this thread's pieces, a row of the block's threads apart");
	cw_line(w, "unsigned char *fz_rg = reinterpret_cast<unsigned char *>(fz_smem) + threadIdx.x * 16;");
	cw_line(w, "const unsigned fz_rs = blockDim.x * 16;");
}
