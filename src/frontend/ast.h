/*
 * ast.h: the syntax tree of an fz program, with source spans.
 *
 * The parser builds it, --emit=ast prints it, and ir/build.c turns it into the
 * op graph (name resolution, fn inlining and type checking happen there, where
 * types and shapes are known). Names point into the source (no copies).
 */
#ifndef FUSEC_AST_H
#define FUSEC_AST_H

#include "frontend/lex.h"

typedef enum AstKind {
	AST_INT,     /* integer literal: ival */
	AST_FLOAT,   /* float literal: fval */
	AST_NAME,    /* a name: name */
	AST_UNARY,   /* op a[0]: op is TK_MINUS, TK_BANG or TK_TILDE */
	AST_BINARY,  /* a[0] op a[1]: op is the operator's token kind */
	AST_COND,    /* a[0] ? a[1] : a[2] */
	AST_CALL,    /* name(a[0], ..., a[nargs-1]): builtins and fns */
	AST_CAST     /* dtype(a[0]): cast, e.g. f16(x) */
} AstKind;

typedef struct Ast Ast;
struct Ast {
	AstKind kind;
	Span span;       /* the whole expression, with parentheses around it */
	Span op_span;    /* the operator, the callee's or cast's name, the literal or name itself */
	TokKind op;      /* AST_UNARY, AST_BINARY */
	const char *name; /* AST_NAME, AST_CALL: points into the source */
	int name_len;
	int dtype;       /* AST_CAST */
	uint64_t ival;   /* AST_INT (fits in i64; the lexer rejects larger) */
	double fval;     /* AST_FLOAT, correctly rounded from the text */
	Ast **args;
	int nargs;
	int depth;       /* height of this tree: 0 for a leaf, at most FZ_MAX_DEPTH */
};

/* A dimension in a declaration: a name or a positive integer. */
typedef struct AstDim {
	Span span;
	const char *name; /* NULL for a literal size */
	int name_len;
	int64_t size;     /* literal size when name is NULL */
} AstDim;

typedef enum StmtKind {
	STMT_IN,      /* in NAME: TYPE */
	STMT_LET,     /* NAME = EXPR, or out NAME = EXPR (is_out) */
	STMT_OUT,     /* out NAME */
	STMT_FN       /* fn NAME(P1, ..., Pk) = EXPR */
} StmtKind;

typedef struct Stmt {
	StmtKind kind;
	Span span;       /* the whole statement */
	Span name_span;
	const char *name;
	int name_len;
	bool is_out;     /* STMT_LET written as `out NAME = EXPR` */
	/* STMT_IN */
	int dtype;
	int rank;        /* 0 for a scalar */
	AstDim *dims;    /* rank entries, NULL for a scalar (a pointer, not an
	                  * array of FZ_MAX_RANK: a program may hold millions
	                  * of statements) */
	/* STMT_LET, STMT_FN */
	Ast *expr;
	/* STMT_FN */
	int nparams;
	Span *param_spans;
	const char **params;
	int *param_lens;
} Stmt;

typedef struct AstProgram {
	Stmt *stmts;
	int n;
} AstProgram;

/* Parse tokens into a program. Syntax errors fill *d with messages of the form
 * "expected ')', saw ','" at the offending token, and return false. The
 * grammar is in parse.c, one function per rule. A fn may have 0 to
 * FZ_MAX_FN_PARAMS parameters, all distinct. Every expression tree is at most
 * FZ_MAX_DEPTH high (Ast.depth), so later stages may recurse over it. */
bool fe_parse(const Source *src, const TokenList *toks, Arena *a, AstProgram *out, Diag *d);

/* --emit=ast: an indented tree, one node a line, with LINE:COL (ast_print.c). */
void fe_print_ast(StrBuf *sb, const Source *src, const AstProgram *p);

#endif
