/* providers.c - the provider table, lookup by name or alias, and the
 * helpers every provider shares (splitting, numbers, globbing, -l). */
#include "provider.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "probe_util.h"
#include "../base/glob.h"

extern const struct provider provider_asyncwatchpoint, provider_bench,
	provider_begin,
	provider_end, provider_error,
	provider_fentry, provider_fexit,
	provider_hardware, provider_interval, provider_iter, provider_kprobe,
	provider_kretprobe, provider_rawtracepoint, provider_profile,
	provider_software, provider_tracepoint, provider_uprobe,
	provider_uretprobe, provider_usdt, provider_watchpoint;

/* The order -l lists them in: alphabetical, like bpftrace. */
const struct provider *const providers[] = {
	&provider_asyncwatchpoint,
	&provider_begin,
	&provider_bench,
	&provider_end,
	&provider_error,
	&provider_fentry,
	&provider_fexit,
	&provider_hardware,
	&provider_interval,
	&provider_iter,
	&provider_kprobe,
	&provider_kretprobe,
	&provider_profile,
	&provider_rawtracepoint,
	&provider_software,
	&provider_tracepoint,
	&provider_uprobe,
	&provider_uretprobe,
	&provider_usdt,
	&provider_watchpoint,
	NULL,
};

const struct provider *provider_find(const char *name)
{
	if (!name)
		return NULL;
	for (const struct provider *const *p = providers; *p; p++) {
		const struct provider *pv = *p;
		if (strcmp(pv->name, name) == 0 ||
		    (pv->alias && strcmp(pv->alias, name) == 0))
			return pv;
		for (const char *const *a = pv->aliases; a && *a; a++)
			if (strcmp(*a, name) == 0)
				return pv;
	}
	/* bpftrace 0.24 made provider names case-insensitive (its
	 * CHANGELOG): "Tracepoint:", "BEGIN" as "begin". Only full names:
	 * the short aliases "u" and "U" are two providers. */
	for (const struct provider *const *p = providers; *p; p++)
		if (strcasecmp((*p)->name, name) == 0)
			return *p;
	return NULL;
}

const char *provider_names_with(struct arena *a, uint32_t caps)
{
	const char *names[32];
	size_t n = 0;
	for (const struct provider *const *p = providers; *p && n < 32; p++)
		if (((*p)->caps & caps) == caps && !(*p)->d_only)
			names[n++] = (*p)->name;
	const char *out = "";
	for (size_t i = 0; i < n; i++)
		out = arena_printf(a, "%s%s%s", out,
				   i == 0 ? "" : i + 1 == n ? " and " : ", ",
				   names[i]);
	return out;
}

bool provider_env_errors(const struct diags *d)
{
	static const char *const env[] = {
#define X(tag, what) #tag,
		PROBE_ENV_TAGS(X)
#undef X
	};
	if (!d->nerrors)
		return false;
	/* every error's tag, also of those over the cap that are not kept */
	for (size_t i = 0; i < d->error_tags.n; i++) {
		bool hit = false;
		for (size_t k = 0; k < sizeof(env) / sizeof(*env) && !hit; k++)
			hit = strcmp(d->error_tags.v[i], env[k]) == 0;
		if (!hit)
			return false;
	}
	return true;
}

void ap_split(struct arena *a, const char *text, struct ap_parts *out)
{
	out->n = 0;
	const char *p = text;
	for (;;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		if (out->n < AP_MAX_PARTS)
			out->v[out->n] = arena_strndup(a, p, len);
		out->n++;
		if (!colon)
			break;
		p = colon + 1;
	}
}

bool ap_has_wildcard(const char *s)
{
	return s && strpbrk(s, "*?") != NULL;
}

int ap_parse_u64(const char *s, uint64_t *out, const char **why)
{
	char buf[64];
	size_t n = 0;

	while (isspace((unsigned char)*s))
		s++;
	if (*s == '+')
		s++;
	/* '_' separates digits for readability only. */
	for (; *s; s++) {
		if (*s == '_')
			continue;
		if (n + 1 >= sizeof(buf)) {
			*why = "is too large";
			return -EINVAL;
		}
		buf[n++] = *s;
	}
	while (n && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
	if (!n || !isdigit((unsigned char)buf[0])) {
		*why = "is not a number";
		return -EINVAL;
	}

	char *e = strpbrk(buf, "eE");
	bool hex = buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X');
	if (e && !hex) {
		/* COEFFeEXP: both integers, value COEFF * 10^EXP. */
		*e = '\0';
		char *end;
		errno = 0;
		unsigned long long c = strtoull(buf, &end, 10);
		if (*end || errno) {
			*why = "has a coefficient that is not an integer";
			return -EINVAL;
		}
		if (!isdigit((unsigned char)e[1])) {
			*why = "has an exponent that is not an integer";
			return -EINVAL;
		}
		unsigned long long x = strtoull(e + 1, &end, 10);
		if (*end || errno) {
			*why = "has an exponent that is not an integer";
			return -EINVAL;
		}
		while (x--) {
			if (c > UINT64_MAX / 10) {
				*why = "is too large";
				return -EINVAL;
			}
			c *= 10;
		}
		*out = c;
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 0);
	if (errno == ERANGE) {
		*why = "is too large";
		return -EINVAL;
	}
	if (*end) {
		*why = "has trailing characters that are not digits";
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int ap_error(struct attach_point *attach, struct expand_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(ctx->diags, DIAG_ERROR, attach->pos, "BAD_PROBE", fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int ap_missing(const struct attach_point *attach, struct expand_ctx *ctx,
	       const char *tag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(ctx->missing ? ctx->missing : ctx->diags, DIAG_ERROR,
		  attach->pos, tag, fmt, ap);
	va_end(ap);
	return -ENOENT;
}

void ap_set(struct attach_point *attach, const char *provider, const char *target,
	    const char *func, uint64_t freq)
{
	attach->provider = provider;
	attach->target = target;
	attach->func = func;
	attach->extra = NULL;
	attach->freq = freq;
}

int ap_time_unit(const char *unit, uint64_t *ns_per_unit)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "s", 1000000000ull }, { "ms", 1000000ull },
		{ "us", 1000ull }, { "hz", 0 },
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit, units[i].unit) == 0) {
			*ns_per_unit = units[i].ns;
			return 0;
		}
	}
	return -EINVAL;
}

/* The provider named by the part of `pattern` before its first ':', or
 * NULL when there is no ':' or the name is unknown (then *has_prefix
 * says which). */
static const struct provider *pattern_provider(const char *pattern,
					       bool *has_prefix)
{
	const char *colon = strchr(pattern, ':');
	*has_prefix = colon != NULL;
	if (!colon)
		return NULL;
	char name[64];
	size_t len = (size_t)(colon - pattern);
	if (len >= sizeof(name))
		return NULL;
	memcpy(name, pattern, len);
	name[len] = '\0';
	return provider_find(name);
}

bool provider_list_wants(const struct provider *pv, const char *pattern)
{
	if (!pattern)
		return true;
	bool has_prefix;
	const struct provider *want = pattern_provider(pattern, &has_prefix);
	return !has_prefix || want == pv;
}

bool provider_list_match(const struct provider *pv, const char *pattern,
			 const char *name)
{
	if (!pattern)
		return true;
	bool has_prefix;
	const struct provider *want = pattern_provider(pattern, &has_prefix);
	if (!has_prefix) {
		const char *last = strrchr(name, ':');
		return glob_match(pattern, last ? last + 1 : name);
	}
	if (want != pv)
		return false;
	/* Match with the alias replaced by the canonical name. */
	const char *rest = strchr(pattern, ':');
	size_t plen = strlen(pv->name);
	if (strncmp(name, pv->name, plen) != 0)
		return false;
	return glob_match(rest, name + plen);
}

bool provider_list_match_counted(const struct provider *pv,
				 const char *pattern, const char *bare)
{
	if (!pattern || provider_list_dialect() < DIALECT_026)
		return false;
	const char *c1 = strchr(pattern, ':');
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	char head[256];
	if (!c2 || strchr(c2 + 1, ':') || !c2[1] ||
	    (size_t)(c2 - pattern) >= sizeof(head))
		return false;
	snprintf(head, sizeof(head), "%.*s", (int)(c2 - pattern), pattern);
	return provider_list_match(pv, head, bare);
}

/* Does the probe's program call bpf_override_return? */
static bool calls_override(const struct probe *p)
{
	for (uint32_t i = 0; i < p->ninsns; i++)
		if (p->insns[i].code == (BPF_JMP | BPF_CALL) &&
		    p->insns[i].src_reg == 0 &&
		    p->insns[i].imm == BPF_FUNC_override_return)
			return true;
	return false;
}

void providers_describe(struct program *prog)
{
	for (uint32_t i = 0; i < prog->nprobes; i++) {
		struct probe *p = &prog->probes[i];
		const struct provider *pv = p->provider;
		p->has_attach = pv && pv->attach;
		if (p->has_attach) {
			p->attach.pid = -1;
			int r = pv->attach(p, &p->attach);
			p->attach_err = r < 0 ? r : 0;
		}
		p->process_err = pv && pv->process ?
			pv->process(p, &p->process) : -EOPNOTSUPP;
		if (p->process_err > 0)
			p->process_err = 0;
		if (!calls_override(p))
			continue;
		char why[512] = "this probe type cannot override a return";
		p->override_err = pv && pv->check_override ?
			pv->check_override(p, why, sizeof(why)) : -EINVAL;
		if (p->override_err > 0)
			p->override_err = 0;
		if (p->override_err < 0)
			p->override_why = arena_strdup(prog->arena, why);
	}
}
