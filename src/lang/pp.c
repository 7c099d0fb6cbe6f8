/* pp.c - the C preprocessor for a script's definitions: files, #include,
 * conditionals and the other directives.
 *
 * How it works. Each file is cut into preprocessing tokens once
 * (pp_lex.c); its list is copied each time it is included and spliced in
 * front of what remains, ending in a PT_END_FILE marker that pops the
 * include depth. One loop (preprocess) walks the list: a token that names
 * a macro is replaced by its expansion (pp_macro.c, Prosser's algorithm
 * with hide sets, as chibicc and clang do), a '#' first on its line is a
 * directive, anything else is output. Skipped #if branches are walked
 * over, looking only at the conditional directives they nest.
 *
 * It searches headers as bpftrace 0.17's clang does: "..." first beside
 * the including header (a script's own #include "x" from the working
 * directory), then the -I directories, then sonde's built-in compiler
 * headers (stddef.h and the like, pp_builtin.c), then /usr/local/include,
 * /usr/include/x86_64-linux-gnu and /usr/include; #include_next goes on
 * after the directory the current header was found in.
 *
 * Headers are untrusted: include depth, bytes read, files, tokens (made,
 * copied or expanded), errors and wall time are bounded (pp_int.h); going
 * past one is an error naming the place, and stops the run. Include
 * guards and #pragma once are recognised, so a header included from
 * many places is read and expanded once. */
#include "pp_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const default_sys_dirs[] = {
	"/usr/local/include", "/usr/include/x86_64-linux-gnu", "/usr/include",
};

struct pp *pp_new(void)
{
	struct pp *pp = calloc(1, sizeof(*pp));
	if (!pp)
		return NULL;
	arena_init(&pp->arena);
	pp->eof.kind = PT_EOF;
	pp->eof.text = "";
	pp->eof.bol = true;
	return pp;
}

void pp_free(struct pp *pp)
{
	if (!pp)
		return;
	for (size_t i = 0; i < pp->files.n; i++)
		if (pp->files.v[i].owned)
			free((char *)pp->files.v[i].text);
	vec_free(&pp->files);
	vec_free(&pp->dirs);
	vec_free(&pp->conds);
	vec_free(&pp->out);
	free(pp->mtab);
	arena_free(&pp->arena);
	free(pp);
}

const char *pp_file_name(const struct pp *pp, uint32_t file)
{
	return file < pp->files.n ? pp->files.v[file].path : "?";
}

bool pp_in_script(const struct pp *pp, const struct ptok *t)
{
	(void)pp;
	return t->file == 0;
}

struct pos pp_pos(struct pp *pp, const struct ptok *t, struct diags *d)
{
	struct pos p = { t->line, t->col, t->len ? t->len : 1, 0 };
	if (t->file == 0 || t->file >= pp->files.n)
		return p;
	struct pp_file *f = &pp->files.v[t->file];
	if (!f->diag)
		f->diag = diags_add_source(d, f->path, f->text, f->len);
	p.file = f->diag;
	if (!p.file) /* out of memory: no caret rather than a wrong one */
		p.line = 0;
	return p;
}

static void vreport(struct pp *pp, const struct ptok *t, const char *tag,
		    const char *fmt, va_list ap)
{
	if (pp->nerrors >= PP_MAX_ERRORS) {
		pp->fatal = true;
		return;
	}
	pp->nerrors++;
	struct pos p = t ? pp_pos(pp, t, pp->diags) : (struct pos){ 0 };
	diag_vadd(pp->diags, DIAG_ERROR, p, tag, fmt, ap);
	if (pp->nerrors >= PP_MAX_ERRORS)
		pp->fatal = true;
}

void pp_error(struct pp *pp, const struct ptok *t, const char *tag,
	      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(pp, t, tag, fmt, ap);
	va_end(ap);
}

void pp_fatal(struct pp *pp, const struct ptok *t, const char *tag,
	      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (!pp->fatal)
		vreport(pp, t, tag, fmt, ap);
	va_end(ap);
	pp->fatal = true;
}

static bool past_deadline(const struct pp *pp)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > pp->deadline.tv_sec ||
	       (now.tv_sec == pp->deadline.tv_sec &&
		now.tv_nsec > pp->deadline.tv_nsec);
}

bool pp_over_budget(struct pp *pp, const struct ptok *t)
{
	if (pp->fatal)
		return true;
	if (pp->ntokens > PP_MAX_TOKENS) {
		pp_fatal(pp, t, "PP_LIMIT", "preprocessing makes more than %u "
			 "tokens; headers or macros too large", PP_MAX_TOKENS);
		return true;
	}
	if ((pp->ntokens & 0xffff) == 0 && past_deadline(pp)) {
		pp_fatal(pp, t, "PP_LIMIT", "preprocessing takes longer than "
			 "%d s", PP_MAX_SECONDS);
		return true;
	}
	return false;
}

struct ptok *pp_new_tok(struct pp *pp, const struct ptok *like)
{
	pp->ntokens++;
	if (pp->ntokens > PP_MAX_TOKENS)
		return NULL;
	struct ptok *t = arena_new(&pp->arena, struct ptok);
	if (like)
		*t = *like;
	t->next = NULL;
	return t;
}

int pp_add_file(struct pp *pp, const char *path, const char *text,
		size_t len, bool owned, int dir)
{
	struct pp_file f = { .path = arena_strdup(&pp->arena, path),
			     .text = text, .len = len, .owned = owned,
			     .dir = dir };
	if (vec_push(&pp->files, f))
		return -ENOMEM;
	return (int)pp->files.n - 1;
}

static bool is_hash(const struct ptok *t)
{
	return t->bol && t->kind == PT_PUNCT && ptok_is(t, "#");
}

static bool is_word(const struct ptok *t, const char *w)
{
	return t->kind == PT_IDENT && ptok_is(t, w);
}

/* The rest of a directive line is not expected: warn as clang does? clang
 * only warns ("extra tokens"); so do nothing but skip it. */
struct ptok *pp_skip_line(struct pp *pp, struct ptok *tok)
{
	(void)pp;
	while (!tok->bol)
		tok = tok->next;
	return tok;
}

/* Copy the tokens up to the end of the line into a new list ending in an
 * EOF (for #if and #include arguments); *rest is the next line. */
struct ptok *pp_copy_line(struct pp *pp, struct ptok **rest,
			  struct ptok *tok)
{
	struct ptok head = { 0 }, *tail = &head;
	for (; !tok->bol; tok = tok->next) {
		struct ptok *c = pp_new_tok(pp, tok);
		if (!c)
			break;
		tail = tail->next = c;
	}
	struct ptok *e = pp_new_tok(pp, tok);
	if (!e)
		e = &pp->eof;
	e->kind = PT_EOF;
	e->len = 0;
	e->text = "";
	tail->next = e;
	*rest = tok;
	return head.next;
}

/* Read a file under the bounds; NULL if it is not there or a directory
 * (errno ENOENT), not a regular file (ENODEV), or too large (EFBIG).
 * O_NONBLOCK: a FIFO named like a header must not hang the open (nor a
 * device); only a regular file is read. */
static char *read_bounded(struct pp *pp, const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *buf = NULL;
	if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode)) {
		errno = ENOENT;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		errno = ENODEV;
		goto out;
	}
	if ((uint64_t)st.st_size > PP_MAX_FILE_BYTES ||
	    pp->total_bytes + (size_t)st.st_size > PP_MAX_TOTAL_BYTES) {
		errno = EFBIG;
		goto out;
	}
	size_t cap = (size_t)st.st_size, n = 0;
	buf = malloc(cap + 1);
	if (!buf)
		goto out;
	while (n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
	pp->total_bytes += n;
out:
	close(fd);
	return buf;
}

/* A NUL byte in header F is an error at its position, as in a script:
 * the lexer would take it for the end of the text and cut the line
 * (`#define FOO 1\0 + 5` made FOO 1). */
static bool nul_byte(struct pp *pp, uint32_t f)
{
	const struct pp_file *pf = &pp->files.v[f];
	const char *nul = memchr(pf->text, '\0', pf->len);
	if (!nul)
		return false;
	struct ptok at = { .kind = PT_OTHER, .file = f, .line = 1, .col = 1,
			   .len = 1, .text = nul };
	for (const char *c = pf->text; c < nul; c++) {
		if (*c == '\n') {
			at.line++;
			at.col = 1;
		} else {
			at.col++;
		}
	}
	pp_fatal(pp, &at, "SYNTAX", "a NUL byte in '%s' (byte %zu): a header "
		 "is text", pf->path, (size_t)(nul - pf->text));
	return true;
}

/* The file number of `path` (read now if it is new), or -1 if there is
 * no such file; errors on a file too large, not a regular file, or
 * holding a NUL byte. */
static int open_file(struct pp *pp, const char *path, int dir,
		     const struct ptok *at)
{
	for (size_t i = 1; i < pp->files.n; i++)
		if (!strcmp(pp->files.v[i].path, path))
			return (int)i;
	if (pp->files.n >= PP_MAX_FILES) {
		pp_fatal(pp, at, "PP_LIMIT", "more than %d header files",
			 PP_MAX_FILES);
		return -1;
	}
	const char *builtin = NULL;
	size_t len = 0;
	char *text = NULL;
	if ((size_t)dir == pp->builtin_dir && dir >= 0) {
		builtin = pp_builtin_header(path + strlen(pp->dirs.v[dir]) + 1);
		if (!builtin)
			return -1;
		len = strlen(builtin);
	} else {
		text = read_bounded(pp, path, &len);
		if (!text) {
			if (errno == EFBIG)
				pp_fatal(pp, at, "PP_LIMIT", "'%s' is larger "
					 "than sonde reads (%u MiB a file, "
					 "%u MiB in all)", path,
					 PP_MAX_FILE_BYTES >> 20,
					 PP_MAX_TOTAL_BYTES >> 20);
			else if (errno == ENODEV)
				pp_fatal(pp, at, "INCLUDE_NOT_FOUND", "'%s' is "
					 "not a regular file (a FIFO, socket or "
					 "device): headers are read from regular "
					 "files only", path);
			return -1;
		}
	}
	int f = pp_add_file(pp, path, builtin ? builtin : text, len,
			    text != NULL, dir);
	if (f < 0) {
		free(text);
		return f;
	}
	if (text && nul_byte(pp, (uint32_t)f))
		return -1;
	return f;
}

static const char *dir_of(struct pp *pp, const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return ".";
	return arena_strndup(&pp->arena, path, (size_t)(slash - path));
}

/* Search for a header: *dir_out is the directory index it was found in
 * (-1 beside the includer). */
static int find_header(struct pp *pp, const char *name, bool quoted,
		       const struct ptok *at, bool next, int *dir_out)
{
	const struct pp_file *cur = &pp->files.v[at->file];
	size_t from = 0;
	*dir_out = -1;
	if (pp->opts->builtin_only) {
		const char *path = arena_printf(&pp->arena, "%s/%s",
						pp->dirs.v[pp->builtin_dir], name);
		*dir_out = (int)pp->builtin_dir;
		return open_file(pp, path, (int)pp->builtin_dir, at);
	}
	if (name[0] == '/') {
		return open_file(pp, name, -1, at);
	}
	if (next && cur->dir >= 0) {
		from = (size_t)cur->dir + 1;
	} else if (quoted) {
		const char *path = at->file == 0 ? name :
			arena_printf(&pp->arena, "%s/%s", dir_of(pp, cur->path),
				     name);
		if (at->file != 0 && cur->dir == (int)pp->builtin_dir)
			path = NULL;
		int f = path ? open_file(pp, path, -1, at) : -1;
		if (f >= 0 || pp->fatal)
			return f;
	}
	for (size_t i = from; i < pp->dirs.n; i++) {
		const char *path = arena_printf(&pp->arena, "%s/%s",
						pp->dirs.v[i], name);
		int f = open_file(pp, path, (int)i, at);
		if (f >= 0 || pp->fatal) {
			*dir_out = (int)i;
			return f;
		}
	}
	return -1;
}

/* An #ifndef X ... #endif around the whole file: X is its guard. */
static const char *detect_guard(struct pp *pp, struct ptok *t)
{
	if (!is_hash(t) || !is_word(t->next, "ifndef") ||
	    t->next->next->kind != PT_IDENT)
		return NULL;
	struct ptok *name = t->next->next;
	int depth = 0;
	for (t = name->next; t->kind != PT_EOF; t = t->next) {
		if (!is_hash(t))
			continue;
		struct ptok *w = t->next;
		if (is_word(w, "if") || is_word(w, "ifdef") ||
		    is_word(w, "ifndef")) {
			depth++;
		} else if (is_word(w, "endif") && depth-- == 0) {
			t = pp_skip_line(pp, w->next);
			return t->kind == PT_EOF ?
				arena_strndup(&pp->arena, name->text,
					      name->len) : NULL;
		}
	}
	return NULL;
}

/* Splice file f's tokens in front of `rest`. */
static struct ptok *include_file(struct pp *pp, int f, struct ptok *rest,
				 const struct ptok *at)
{
	struct pp_file *file = &pp->files.v[f];
	if (file->once)
		return rest;
	if (file->guard && pp_find_macro(pp, file->guard,
					 strlen(file->guard)))
		return rest;
	if (pp->depth >= PP_MAX_INCLUDE_DEPTH) {
		pp_fatal(pp, at, "PP_LIMIT", "#include nested more than %d "
			 "deep (at '%s')", PP_MAX_INCLUDE_DEPTH, file->path);
		return rest;
	}
	if (!file->toks) {
		file->toks = pp_tokenize(pp, (uint32_t)f);
		file = &pp->files.v[f];
		file->guard = detect_guard(pp, file->toks);
	}
	struct ptok head = { 0 }, *tail = &head;
	for (struct ptok *t = file->toks; t; t = t->next) {
		struct ptok *c = pp_new_tok(pp, t);
		if (!c) {
			pp_over_budget(pp, at);
			return rest;
		}
		tail = tail->next = c;
		if (t->kind == PT_EOF)
			break;
	}
	tail->kind = PT_END_FILE;
	tail->len = (uint32_t)pp->conds.n; /* to check it closed its #ifs */
	tail->next = rest;
	pp->depth++;
	return head.next;
}

/* The header name of an #include: "x" or <x>, after macro expansion if
 * it is neither (#include MACRO). */
static const char *header_name(struct pp *pp, struct ptok **rest,
			       struct ptok *tok, bool *quoted)
{
	if (tok->kind == PT_STR && tok->text[0] == '"') {
		*quoted = true;
		*rest = pp_skip_line(pp, tok->next);
		return arena_strndup(&pp->arena, tok->text + 1, tok->len - 2);
	}
	if (tok->kind == PT_PUNCT && ptok_is(tok, "<")) {
		struct ptok *s = tok->next, *e = s;
		while (!e->bol && !(e->kind == PT_PUNCT && ptok_is(e, ">")))
			e = e->next;
		if (e->bol) {
			pp_error(pp, tok, "PP_DIRECTIVE", "expected '>' to close "
				 "the header name in #include");
			*rest = e;
			return NULL;
		}
		*quoted = false;
		*rest = pp_skip_line(pp, e->next);
		size_t len;
		return pp_spell(pp, s, e, &len);
	}
	if (tok->kind == PT_IDENT) {
		struct ptok *line = pp_copy_line(pp, rest, tok);
		struct ptok head = { 0 }, *tail = &head;
		for (struct ptok *t = line; t && t->kind != PT_EOF;) {
			if (pp_expand(pp, &t, t))
				continue;
			tail = tail->next = t;
			t = t->next;
		}
		if (!head.next || pp->fatal)
			goto bad;
		struct ptok *first = head.next;
		struct ptok *eol = pp_new_tok(pp, tok);
		if (!eol)
			goto bad;
		eol->bol = true;
		eol->kind = PT_EOF;
		tail->next = eol;
		first->bol = false;
		struct ptok *ignore;
		if (first->kind == PT_STR ||
		    (first->kind == PT_PUNCT && ptok_is(first, "<")))
			return header_name(pp, &ignore, first, quoted);
	}
bad:
	pp_error(pp, tok, "PP_DIRECTIVE", "expected \"FILENAME\" or <FILENAME> "
		 "after #include");
	*rest = pp_skip_line(pp, tok);
	return NULL;
}

static struct ptok *do_include(struct pp *pp, struct ptok *hash,
			       struct ptok *tok, bool next)
{
	bool quoted = false;
	struct ptok *rest;
	const char *name = header_name(pp, &rest, tok, &quoted);
	if (!name)
		return rest;
	int dir;
	int f = find_header(pp, name, quoted, hash, next, &dir);
	if (pp->fatal)
		return rest;
	if (f < 0) {
		struct ptok at = *tok; /* underline the whole name */
		at.len = (uint32_t)strlen(name) + 2;
		pp_fatal(pp, &at, "INCLUDE_NOT_FOUND", "'%s' file not found "
			 "(searched%s the -I directories and the system "
			 "include directories)", name, quoted ?
			 " beside the includer," : "");
		return rest;
	}
	return include_file(pp, f, rest, tok);
}

bool pp_has_include(struct pp *pp, struct ptok **rest, struct ptok *tok,
		    bool next)
{
	/* __has_include ( "x" ) or ( <x> ): tok is the '(' */
	if (!(tok->kind == PT_PUNCT && ptok_is(tok, "("))) {
		pp_error(pp, tok, "PP_EXPR", "expected '(' after "
			 "__has_include");
		*rest = tok;
		return false;
	}
	struct ptok *t = tok->next;
	bool quoted = t->kind == PT_STR;
	const char *name = NULL;
	if (quoted) {
		name = arena_strndup(&pp->arena, t->text + 1, t->len - 2);
		t = t->next;
	} else if (t->kind == PT_PUNCT && ptok_is(t, "<")) {
		struct ptok *s = t->next;
		while (t->kind != PT_EOF && !(t->kind == PT_PUNCT &&
					      ptok_is(t, ">")))
			t = t->next;
		size_t len;
		name = pp_spell(pp, s, t, &len);
		if (t->kind != PT_EOF)
			t = t->next;
	}
	if (!name || !(t->kind == PT_PUNCT && ptok_is(t, ")"))) {
		pp_error(pp, tok, "PP_EXPR", "malformed __has_include");
		*rest = t;
		return false;
	}
	*rest = t->next;
	int dir;
	return find_header(pp, name, quoted, tok, next, &dir) >= 0;
}

/* Skip a false #if branch up to its #elif, #else or #endif (returned at
 * the '#'), nested conditionals included. */
static struct ptok *skip_branch(struct pp *pp, struct ptok *tok)
{
	int depth = 0;
	while (tok->kind != PT_EOF && tok->kind != PT_END_FILE) {
		if (is_hash(tok)) {
			struct ptok *w = tok->next;
			if (is_word(w, "if") || is_word(w, "ifdef") ||
			    is_word(w, "ifndef")) {
				depth++;
			} else if (is_word(w, "endif")) {
				if (depth-- == 0)
					return tok;
			} else if (depth == 0 &&
				   (is_word(w, "elif") || is_word(w, "else"))) {
				return tok;
			}
		}
		tok = tok->next;
	}
	return tok;
}

enum { IN_THEN, IN_ELIF, IN_ELSE };

static struct ptok *push_cond(struct pp *pp, struct ptok *hash,
			      struct ptok *rest, bool taken)
{
	struct cond c = { .ctx = IN_THEN, .included = taken, .tok = hash };
	if (vec_push(&pp->conds, c)) {
		pp_fatal(pp, hash, "PP_LIMIT", "out of memory");
		return rest;
	}
	return taken ? rest : skip_branch(pp, rest);
}

static const char *dname(const struct ptok *w)
{
	static const char *const names[] = {
		"if", "ifdef", "ifndef", "elif", "else", "endif", "include",
		"include_next", "define", "undef", "error", "warning",
		"pragma", "line", "ident", "sccs", "assert", "unassert",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (is_word(w, names[i]))
			return names[i];
	return NULL;
}

/* Is there an open #if of the current file to close? */
static bool cond_open(struct pp *pp, size_t file_base)
{
	return pp->conds.n > file_base;
}

/* One directive: `hash` is the '#', the result the token after it. */
static struct ptok *directive(struct pp *pp, struct ptok *hash,
			      size_t file_base)
{
	struct ptok *w = hash->next;
	if (w->bol)
		return w; /* the null directive */
	const char *d = dname(w);
	struct ptok *tok = w->next;
	if (!d) {
		if (w->kind == PT_NUM) /* # 12 "file": line markers */
			return pp_skip_line(pp, tok);
		pp_error(pp, w, "PP_DIRECTIVE", "invalid preprocessing "
			 "directive '#%.*s'", (int)w->len, w->text);
		return pp_skip_line(pp, tok);
	}
	if (!strcmp(d, "include") || !strcmp(d, "include_next"))
		return do_include(pp, hash, tok, d[7] == '_');
	if (!strcmp(d, "define")) {
		struct ptok *rest;
		pp_read_define(pp, &rest, tok);
		return rest;
	}
	if (!strcmp(d, "undef")) {
		if (tok->kind != PT_IDENT || tok->bol)
			pp_error(pp, w, "PP_DIRECTIVE", "macro name expected "
				 "after #undef");
		else
			pp_undef(pp, tok->text, tok->len);
		return pp_skip_line(pp, tok->bol ? tok : tok->next);
	}
	if (!strcmp(d, "ifdef") || !strcmp(d, "ifndef")) {
		if (tok->kind != PT_IDENT || tok->bol) {
			pp_error(pp, w, "PP_DIRECTIVE", "macro name expected "
				 "after #%s", d);
			return push_cond(pp, hash, pp_skip_line(pp, tok), false);
		}
		bool def = pp_find_macro(pp, tok->text, tok->len) != NULL;
		return push_cond(pp, hash, pp_skip_line(pp, tok->next),
				 d[2] == 'd' ? def : !def);
	}
	if (!strcmp(d, "if")) {
		struct ptok *rest;
		bool v = pp_eval_if(pp, &rest, tok);
		return push_cond(pp, hash, rest, v);
	}
	if (!strcmp(d, "elif") || !strcmp(d, "else")) {
		bool elif = d[2] == 'i';
		if (!cond_open(pp, file_base) ||
		    pp->conds.v[pp->conds.n - 1].ctx == IN_ELSE) {
			pp_error(pp, w, "PP_DIRECTIVE", "#%s without #if", d);
			return pp_skip_line(pp, tok);
		}
		struct cond *c = &pp->conds.v[pp->conds.n - 1];
		c->ctx = elif ? IN_ELIF : IN_ELSE;
		if (c->included) /* a branch was taken: skip the rest */
			return skip_branch(pp, pp_skip_line(pp, tok));
		if (!elif) {
			c->included = true;
			return pp_skip_line(pp, tok);
		}
		struct ptok *rest;
		bool v = pp_eval_if(pp, &rest, tok);
		c = &pp->conds.v[pp->conds.n - 1];
		c->included = v;
		return v ? rest : skip_branch(pp, rest);
	}
	if (!strcmp(d, "endif")) {
		if (!cond_open(pp, file_base))
			pp_error(pp, w, "PP_DIRECTIVE", "#endif without #if");
		else
			pp->conds.n--;
		return pp_skip_line(pp, tok);
	}
	if (!strcmp(d, "error")) {
		size_t len;
		struct ptok *e = tok;
		while (!e->bol)
			e = e->next;
		const char *msg = pp_spell(pp, tok, e, &len);
		pp_error(pp, w, "PP_ERROR", "#error %s", msg);
		return e;
	}
	if (!strcmp(d, "pragma")) {
		if (is_word(tok, "once") && hash->file < pp->files.n)
			pp->files.v[hash->file].once = true;
		return pp_skip_line(pp, tok);
	}
	/* #warning, #line, #ident, #sccs, #assert, #unassert: nothing a
	 * tracer needs */
	return pp_skip_line(pp, tok);
}

static void emit(struct pp *pp, const struct ptok *t)
{
	struct ptok c = *t;
	c.next = NULL;
	c.hs = NULL;
	if (vec_push(&pp->out, c))
		pp_fatal(pp, t, "PP_LIMIT", "out of memory");
}

/* The main loop over a token list (see the essay at the top). */
static void preprocess(struct pp *pp, struct ptok *tok)
{
	/* conds.n where each open file began, to close its own #ifs */
	VEC(size_t) bases = { 0 };
	size_t base = 0;
	while (!pp->fatal && tok->kind != PT_EOF) {
		if (pp_over_budget(pp, tok))
			break;
		if (tok->kind == PT_END_FILE) {
			if (pp->conds.n > tok->len) {
				struct cond *c = &pp->conds.v[tok->len];
				pp_error(pp, c->tok, "UNTERMINATED_IF",
					 "unterminated conditional directive "
					 "(#if without #endif)");
				pp->conds.n = tok->len;
			}
			pp->depth--;
			base = bases.n ? bases.v[--bases.n] : 0;
			tok = tok->next;
			continue;
		}
		if (pp_expand(pp, &tok, tok))
			continue;
		if (!is_hash(tok)) {
			emit(pp, tok);
			tok = tok->next;
			continue;
		}
		unsigned depth = pp->depth;
		tok = directive(pp, tok, base);
		if (pp->depth > depth) { /* entered a header */
			if (vec_push(&bases, base))
				pp_fatal(pp, tok, "PP_LIMIT", "out of memory");
			base = pp->conds.n;
		}
	}
	if (!pp->fatal && pp->conds.n > 0)
		pp_error(pp, pp->conds.v[pp->conds.n - 1].tok, "UNTERMINATED_IF",
			 "unterminated conditional directive (#if without "
			 "#endif)");
	vec_free(&bases);
}

static size_t po_len(const struct pp_opts *o)
{
	return o->text ? o->len : 0;
}

static int add_dir(struct pp *pp, const char *dir)
{
	return vec_push(&pp->dirs, dir);
}

int pp_run(struct pp *pp, const struct pp_opts *o, struct diags *d)
{
	pp->diags = d;
	pp->opts = o;
	clock_gettime(CLOCK_MONOTONIC, &pp->deadline);
	pp->deadline.tv_sec += PP_MAX_SECONDS;
	for (size_t i = 0; i < o->ninclude_dirs; i++)
		if (add_dir(pp, o->include_dirs[i]))
			return -ENOMEM;
	pp->nuser_dirs = pp->dirs.n;
	pp->builtin_dir = pp->dirs.n;
	if (add_dir(pp, "<built-in>"))
		return -ENOMEM;
	const char *const *sys = o->sys_dirs ? o->sys_dirs : default_sys_dirs;
	size_t nsys = o->sys_dirs ? o->nsys_dirs :
		sizeof(default_sys_dirs) / sizeof(default_sys_dirs[0]);
	for (size_t i = 0; i < nsys; i++)
		if (add_dir(pp, sys[i]))
			return -ENOMEM;

	/* file 0: the script, then the predefined macros and --include
	 * files, which are read first */
	if (pp_add_file(pp, o->name ? o->name : "stdin", o->text ? o->text : "",
			o->text ? o->len : 0, false, -1) < 0)
		return -ENOMEM;
	pp_define_builtins(pp);
	struct ptok *tok = pp_tokenize(pp, 0);
	int pre[2] = { -1, -1 };
	for (int i = 0; i < (o->have_btf ? 2 : 1); i++) {
		const char *text = pp_predefined(i == 1);
		pre[i] = pp_add_file(pp, "<built-in>", text, strlen(text),
				     false, -1);
		if (pre[i] < 0)
			return -ENOMEM;
	}
	struct ptok at = { .file = 0, .line = 0 };
	for (size_t i = o->ninclude_files; i-- > 0;) {
		/* --include FILE is #include "FILE" before the script */
		int dir;
		const char *name = o->include_files[i];
		int inc = find_header(pp, name, true, &at, false, &dir);
		if (inc < 0) {
			if (!pp->fatal)
				pp_fatal(pp, NULL, "INCLUDE_NOT_FOUND",
					 "--include '%s': file not found", name);
			break;
		}
		tok = include_file(pp, inc, tok, &at);
	}
	for (int i = 1; i >= 0; i--)
		if (pre[i] >= 0)
			tok = include_file(pp, pre[i], tok, &at);
	if (!pp->fatal)
		preprocess(pp, tok);
	/* the end: where the script's definitions end, for messages */
	struct ptok end = pp->eof;
	end.line = 1;
	end.col = 1;
	for (size_t i = 0; i < po_len(o); i++) {
		if (o->text[i] == '\n') {
			end.line++;
			end.col = 1;
		} else {
			end.col++;
		}
	}
	emit(pp, &end);
	return pp->nerrors ? -EINVAL : 0;
}

const struct ptok *pp_tokens(const struct pp *pp, size_t *n)
{
	*n = pp->out.n;
	return pp->out.v;
}
