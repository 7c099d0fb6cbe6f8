/* probe_util.h - helpers the provider files share (splitting attach
 * points, bpftrace's number syntax, -l matching, tracefs). Not a public
 * surface: only src/probes/ includes it. */
#ifndef SONDE_PROBE_UTIL_H
#define SONDE_PROBE_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "provider.h"
#include "../host/host.h"

#define AP_MAX_PARTS 8

/* An attach point split at ':' (parts are arena copies). */
struct ap_parts {
	const char *v[AP_MAX_PARTS];
	int n;          /* may exceed AP_MAX_PARTS: then only the count is valid */
};

void ap_split(struct arena *a, const char *text, struct ap_parts *out);
bool ap_has_wildcard(const char *s);

/* bpftrace's attach-point integers: decimal, 0x hex, 0 octal, '_'
 * separators, a leading '+', and integer scientific notation (1e3).
 * Returns 0, or -EINVAL with *why set to a message. */
int ap_parse_u64(const char *s, uint64_t *out, const char **why);

/* Record a BAD_PROBE diagnostic at the attach point; returns -EINVAL. */
int ap_error(struct attach_point *attach, struct expand_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Record that what ATTACH names is not on this system (TAG, e.g.
 * "NO_SYMBOL"), in ctx->missing (else as an error); returns -ENOENT. */
int ap_missing(const struct attach_point *attach, struct expand_ctx *ctx,
	       const char *tag, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Set the canonical fields of an N_ATTACH node. */
void ap_set(struct attach_point *attach, const char *provider, const char *target,
	    const char *func, uint64_t freq);

/* -l PATTERN: does `name` ("tracepoint:sched:sched_switch"), listed by
 * `pv`, match? A pattern "PROVIDER:..." (alias allowed) is matched
 * against the whole name of that provider's probes only; a pattern
 * without ':' is matched against the last part of every name. A NULL
 * pattern matches everything. */
bool provider_list_match(const struct provider *pv, const char *pattern,
			 const char *name);
/* Under --dialect=0.26, an attach point with its count
 * ("interval:ms:100", "hardware:cache-misses:10", as -l -e PROGRAM
 * lists them) matches the probe `bare` ("interval:ms") it counts. */
bool provider_list_match_counted(const struct provider *pv,
				 const char *pattern, const char *bare);
/* Whether `pv` could list anything for `pattern` at all. */
bool provider_list_wants(const struct provider *pv, const char *pattern);
/* The dialect `-l` lists as (list.c, set by provider_list_all): from
 * bpftrace 0.26 the timers and the software events' aliases list too. */
enum dialect provider_list_dialect(void);

/* Kernel function names (kfuncs.c): sorted, one of each. */
struct kfuncs {
	char **v;            /* point into text */
	size_t n;
	char *text;
	bool known;          /* the kernel told us (else kfuncs_has says yes) */
};
/* The functions ftrace can patch (available_filter_functions, modules'
 * too), or an unknown set when tracefs cannot be read. */
void kfuncs_load(struct kfuncs *t);
/* Those of the modules a glob matches ("vmlinux": the kernel's own),
 * a module's named "module:name", the kernel's "name". */
void kfuncs_load_module(struct kfuncs *t, const char *module);
/* The functions kprobes refuse (debugfs kprobes/blacklist), or an unknown
 * set (then test `known` before using it as a filter). */
void kfuncs_load_blacklist(struct kfuncs *t);
void kfuncs_free(struct kfuncs *t);
/* Any list of names: word `field` (0 or 1) of each line of `text`, which
 * it takes over (malloc'd; the names point into it), sorted and unique. */
void kfuncs_parse_text(struct kfuncs *t, char *text, int field);
bool kfuncs_has(const struct kfuncs *t, const char *name);

/* Units shared by interval and profile: "s", "ms", "us" give the period
 * in ns per unit; "hz" gives 0. Returns -EINVAL for anything else. */
int ap_time_unit(const char *unit, uint64_t *ns_per_unit);

/* interval and profile: UNIT:N parsing, expansion and the cpu-clock
 * event (interval.c). `what` names N in messages. */
int timer_parse(struct attach_point *attach, struct expand_ctx *ctx,
		const char *kind, const char *what);
int timer_expand(const struct attach_point *attach, struct expand_ctx *ctx,
		 int (*emit)(void *arg, const char *target, const char *func,
			     uint64_t freq),
		 void *arg);
int timer_attach(const struct probe *p, struct attach_req *req, bool all_cpus);
/* -l under --dialect=0.26: interval:UNIT: and profile:UNIT: per unit */
int timer_list(const struct provider *pv, const char *pattern, FILE *out);

/* The perf counter providers (software, hardware) share one
 * table-driven implementation. */
struct perf_counter {
	const char *name, *alias;   /* alias "" when there is none */
	uint64_t config;
	uint64_t default_period;
};

/* provider:EVENT[:COUNT]. `kind` is the provider's canonical name. */
int perf_counter_parse(const struct perf_counter *tab, unsigned n,
		       const char *kind, struct attach_point *attach,
		       struct expand_ctx *ctx);
int perf_counter_expand(const struct attach_point *attach,
			int (*emit)(void *arg, const char *target,
				    const char *func, uint64_t freq),
			void *arg);
int perf_counter_attach(const struct perf_counter *tab, unsigned n,
			uint32_t perf_type, const struct probe *p,
			struct attach_req *req);
int perf_counter_list(const struct perf_counter *tab, unsigned n,
		      const struct provider *pv, const char *pattern,
		      FILE *out);

#endif
