/* STUB: placeholder until the lexer lands; replace this whole file. */
#include "frontend/lex.h"
const char *fe_token_name(TokKind k) { (void)k; return "?"; }
bool fe_lex(const Source *src, Arena *a, TokenList *out, Diag *d) { (void)out; return diag_error(d, a, (Span){0,0,1,1}, "lexer not implemented"); }
void fe_print_tokens(StrBuf *sb, const Source *src, const TokenList *toks) { (void)sb; (void)src; (void)toks; }
