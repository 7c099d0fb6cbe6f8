/* token.h - the token kinds of the script language and their names, from
 * one X-macro list so the lexer, the parser's messages and the tests can
 * never disagree. */
#ifndef SONDE_TOKEN_H
#define SONDE_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "../base/diag.h"

/* X(ID, "spelling as shown in messages") */
#define TOKENS(X) \
	X(EOF, "<eof>") X(ERROR, "<error>") \
	X(IDENT, "<name>") X(INT, "<integer>") X(STR, "<string>") \
	X(VAR, "<$variable>") X(POSITIONAL, "<$N>") X(POSCOUNT, "$#") \
	X(MAP, "<@map>") X(ATTACH, "<probe>") \
	/* keywords */ \
	X(IF, "if") X(ELSE, "else") X(UNROLL, "unroll") X(WHILE, "while") \
	X(BREAK, "break") X(CONTINUE, "continue") X(RETURN, "return") \
	/* punctuation */ \
	X(LBRACE, "{") X(RBRACE, "}") X(LPAREN, "(") X(RPAREN, ")") \
	X(LBRACKET, "[") X(RBRACKET, "]") X(SEMI, ";") X(COMMA, ",") \
	X(DOT, ".") X(ARROW, "->") X(QUESTION, "?") X(COLON, ":") \
	X(ASSIGN, "=") X(PLUS, "+") X(MINUS, "-") X(STAR, "*") \
	X(SLASH, "/") X(PERCENT, "%") X(AMP, "&") X(PIPE, "|") \
	X(CARET, "^") X(TILDE, "~") X(BANG, "!") X(SHL, "<<") X(SHR, ">>") \
	X(LT, "<") X(LE, "<=") X(GT, ">") X(GE, ">=") X(EQ, "==") \
	X(NE, "!=") X(LAND, "&&") X(LOR, "||") X(INC, "++") X(DEC, "--") \
	X(ADD_ASSIGN, "+=") X(SUB_ASSIGN, "-=") X(MUL_ASSIGN, "*=") \
	X(DIV_ASSIGN, "/=") X(MOD_ASSIGN, "%=") X(AND_ASSIGN, "&=") \
	X(OR_ASSIGN, "|=") X(XOR_ASSIGN, "^=") X(SHL_ASSIGN, "<<=") \
	X(SHR_ASSIGN, ">>=") X(DOTDOT, "..")

enum tok {
#define X(id, s) T_##id,
	TOKENS(X)
#undef X
	T_COUNT_
};

extern const char *const token_names[T_COUNT_];

struct token {
	enum tok kind;
	struct pos pos;
	size_t offset;           /* byte offset of the first character */
	const char *start;       /* the source text of the token */
	size_t len;
	uint64_t ival;           /* T_INT, T_POSITIONAL */
	const char *sval;        /* T_STR: unescaped; T_VAR/T_MAP/T_IDENT/
				  * T_ATTACH: the name (arena, NUL-ended) */
	uint32_t slen;           /* T_STR: bytes before the NUL */
};

#endif
