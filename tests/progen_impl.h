/*
 * progen_impl.h: what the generator's files share (not for tests).
 *
 * progen_expr.c holds the abstract values (one rule per op, op_attr) and the
 * expression generators; progen.c the statements, sizes and printing;
 * progen_check.c the inputs and the comparison.
 */
#ifndef FUSEC_PROGEN_IMPL_H
#define FUSEC_PROGEN_IMPL_H

#include "progen.h"

/* ---- random numbers (splitmix64) ------------------------------------------ */

typedef struct Rng {
	uint64_t s;
} Rng;

static inline uint64_t rng_next(Rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A uniform integer in [lo, hi]. */
static inline int rng_int(Rng *r, int lo, int hi) { return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1)); }
static inline bool rng_pct(Rng *r, int pct) { return (int)(rng_next(r) % 100) < pct; }
/* A uniform double in [0, 1). */
static inline double rng_unit(Rng *r) { return (double)(rng_next(r) >> 11) * 0x1p-53; }

/* An index drawn with the given weights. */
static inline int rng_pick(Rng *r, const int *w, int n)
{
	int total = 0;
	for (int i = 0; i < n; i++)
		total += w[i];
	int x = (int)(rng_next(r) % (uint64_t)total);
	for (int i = 0; i < n; i++) {
		if (x < w[i])
			return i;
		x -= w[i];
	}
	return n - 1;
}

#define PICK(r, w) rng_pick((r), (w), (int)(sizeof(w) / sizeof((w)[0])))
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- abstract values --------------------------------------------------------- */

typedef struct PAttr {
	fz_dtype dt;     /* dtype; a weak value's is FZ_I32 (integer literal) or FZ_F32 */
	bool weak;       /* made of literals only */
	int uni;         /* universe, -1 for a scalar */
	int rank;        /* the value spans the last `rank` axes of its universe */
	unsigned mask;   /* bit i: universe axis i is full size (else 1) */
	double lo, hi;   /* bounds of the exact value for finite inputs */
	double abs, rel; /* |computed - exact| <= abs + rel * |exact| */
	bool det;        /* bit-identical everywhere (then abs = rel = 0) */
	bool nonfin;     /* may be NaN or infinite because an input may be */
	double ulow;     /* largest unit roundoff of a float result it went through */
	int64_t row;     /* longest reduced row it depends on */
} PAttr;

typedef enum PKind { PK_OP, PK_LIT, PK_VAL, PK_PARAM, PK_CALL } PKind;

typedef struct PNode PNode;
struct PNode {
	PKind kind;
	Op op;            /* PK_OP */
	fz_dtype to;      /* OP_CAST: the target dtype */
	bool ternary;     /* OP_WHERE written c ? a : b */
	int nargs;
	PNode *arg[3];
	int index;        /* PK_VAL: value; PK_PARAM: parameter; PK_CALL: fn */
	const char *text; /* PK_LIT: as written */
	PAttr at;
};

typedef struct PVal {
	const char *name;
	PAttr at;
	bool input, output;
	bool declared;    /* inputs: its `in` statement is written */
	double lo, hi;    /* inputs: the range values are drawn from */
} PVal;

typedef struct PFn {
	const char *name;
	int nparams;
	const char *pnames[3];
	PNode *body;
} PFn;

typedef struct Axis {
	int dim;     /* symbolic dim index, or -1 */
	int64_t lit; /* literal size when dim < 0 */
} Axis;

typedef struct Uni {
	int rank;
	Axis ax[4];
} Uni;

enum { MAX_VALS = 256, MAX_FNS = 4, FN_UNI = 2 };

typedef struct G {
	Rng rng;
	Arena *a;
	const ProgenOptions *opt;
	ProgenInfo *info;
	int nuni;
	Uni uni[3];        /* [FN_UNI]: the pseudo-universe of fn parameters */
	PVal vals[MAX_VALS];
	int nvals;
	PFn fns[MAX_FNS];
	int nfns;
	int cur;           /* universe of the statement being written */
	PAttr params[3];   /* while writing a fn body: its parameters */
	int nparams;       /* > 0 while writing a fn body */
	int budget;        /* nodes left for the current statement */
	int names;         /* counter that makes names unique */
	int nreductions;   /* reductions made */
	Rng style;         /* cosmetic choices (spacing, parentheses), apart from `rng` */
	const PFn *printing; /* the fn whose body is being printed */
	StrBuf sb;
} G;

typedef struct Lit {
	const char *text;
	double v;
} Lit;

extern const Lit pg_lit_exact[14], pg_lit_eps[6];

double pg_unit_of(fz_dtype t);
double pg_mag(const PAttr *x);
int64_t pg_axis_size(const G *g, int uni, int axis);

/* Constructors: NULL when an argument is NULL or the op is rejected. */
PNode *pg_mk(G *g, Op op, int nargs, PNode *a, PNode *b, PNode *c);
PNode *pg_mk_cast(G *g, fz_dtype to, PNode *a);
PNode *pg_mk_lit(G *g, const Lit *l, bool is_float);
PNode *pg_mk_ref(G *g, int val);
PNode *pg_anchor(G *g);

/* Generators of the current universe's values, depth d. Never NULL while
 * the universe has its anchor input (or a fn body its parameters). */
PNode *pg_gen_float(G *g, int d);
PNode *pg_gen_small(G *g, int d, double bound);
PNode *pg_gen_pos(G *g, int d);
PNode *pg_gen_exact(G *g, int d);
PNode *pg_gen_bool(G *g, int d);
PNode *pg_gen_int(G *g, int d);

#endif
