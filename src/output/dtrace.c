/* dtrace.c - output as dtrace(8) prints it, for D scripts (the
 * program's dtrace.on): the "matched N probes" line, the CPU ID
 * FUNCTION:NAME heading before the first record, aggregations at exit
 * and by printa() in DTrace's layout (keys as trace() prints them: a
 * string "  %-50s", an int " %8d", a 64-bit integer " %16lld"; values
 * " %16lld"; quantize and lquantize as DTrace's distribution tables).
 * The reference is the illumos Dynamic Tracing Guide and libdtrace's
 * consumer (dt_consume.c), whose formats are restated here. */
#include "output_int.h"
#include "../base/vec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* dtrace's _dtrace_stkindent: the spaces before each stack frame */
#define D_STACK_INDENT 14

/* The probes one program enables, counted once per clause that
 * enables them: those whose block starts on lines [lo, hi). */
static unsigned d_matched(const struct program *p, unsigned lo, unsigned hi)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < p->nprobes; i++) {
		uint32_t b = p->probes[i].block;
		unsigned line = p->dtrace.block_lines && b < p->nblocks ?
			p->dtrace.block_lines[b] : lo;
		if (line < lo || line >= hi)
			continue;
		n += p->dtrace.clauses && b < p->dtrace.nclauses ?
			p->dtrace.clauses[b] : 1;
	}
	return n;
}

/* dtrace(8)'s line per program (-n, -s, -P ...): "dtrace: description
 * 'syscall::read:entry ' matched 2 probes" (0 under -Z) */
static void d_attaching(struct output *o, struct sbuf *out, unsigned n)
{
	const struct program *p = o->prog;
	fflush(o->opts.out);
	const char *l = p->dtrace.label;
	if (!l || !*l) {
		fprintf(stderr, "dtrace: script matched %u probe%s\n",
			d_matched(p, 0, UINT32_MAX), n == 1 ? "" : "s");
		return;
	}
	while (*l) {
		char *tab;
		unsigned lo = (unsigned)strtoul(l, &tab, 10);
		const char *text = *tab == '\t' ? tab + 1 : tab;
		size_t tlen = strcspn(text, "\n");
		const char *next = text + tlen + (text[tlen] == '\n');
		unsigned hi = *next ? (unsigned)strtoul(next, NULL, 10) :
			UINT32_MAX;
		unsigned m = d_matched(p, lo, hi);
		fprintf(stderr, "dtrace: %.*s matched %u probe%s\n", (int)tlen,
			text, m, m == 1 ? "" : "s");
		l = next;
	}
}

static void d_lost(struct output *o, struct sbuf *out, uint64_t n)
{
	fflush(o->opts.out);
	fprintf(stderr, "dtrace: %llu drop%s\n", (unsigned long long)n,
		n == 1 ? "" : "s");
}

/* DTrace prints one blank line when it stops, quiet or not, before the
 * aggregations. */
static void d_maps_begin(struct output *o, struct sbuf *out)
{
	sbuf_putc(out, '\n');
	o->dtrace_exiting = true;
}

/* CPUs whose -F indent is kept; a record of a CPU past them is not
 * indented. Indents stop growing at D_FLOW_INDENT_MAX spaces. */
#define D_FLOW_CPUS 4096
#define D_FLOW_INDENT_MAX 400

/* a probe name that is WORD or ends in "-WORD" */
static bool flow_named(const char *name, size_t n, const char *word)
{
	size_t w = strlen(word);
	return n >= w && !memcmp(name + n - w, word, w) &&
		(n == w || name[n - w - 1] == '-');
}

/* sonde's probes A and B (IDs) are one probe of DTrace's: each clause
 * has probes of its own, one system probe several */
static bool same_probe(const struct program *p, int64_t a, int64_t b)
{
	if (a < 1 || b < 1 || (uint64_t)a > p->nprobes ||
	    (uint64_t)b > p->nprobes)
		return false;
	for (int i = 0; i < 4; i++) {
		const char *x = p->probes[a - 1].dname[i];
		const char *y = p->probes[b - 1].dname[i];
		if (strcmp(x ? x : "", y ? y : "") != 0)
			return false;
	}
	return true;
}

/* -F: "%3d %-41s " with the function indented by the CPU's depth and
 * " -> " at an entry probe (a name "entry" or "...-entry"), " <- " at a
 * return (one level out first; " => " and " <= " for syscall), "| "
 * and FUNC:NAME at any other, as libdtrace's dt_flowindent and
 * dtrace(8)'s chewrec print it. A probe's second clause in a row on a
 * CPU neither indents nor unindents again ("| "). The record's
 * arguments are the CPU, the probe ID and "FUNC:NAME"
 * (lang/d_clauses.c). */
static int flow_line(struct output *o, struct sbuf *b,
		     const struct event_spec *e, const uint8_t *data,
		     size_t size)
{
	const struct type *t = e->args;
	if (!t || t->nfields < 3 || t->fields[2]->kind != TYPE_STR ||
	    t->offsets[2] + t->fields[2]->size > size)
		return -EINVAL;
	int64_t cpu = 0;
	memcpy(&cpu, data + t->offsets[0],
	       t->fields[0]->size < 8 ? t->fields[0]->size : 8);
	cpu = (int32_t)cpu;
	const char *fn = (const char *)data + t->offsets[2];
	size_t fnlen = strnlen(fn, t->fields[2]->size);
	const char *colon = memrchr(fn, ':', fnlen);
	size_t flen = colon ? (size_t)(colon - fn) : fnlen;
	const char *name = colon ? colon + 1 : "";
	size_t nlen = fnlen - (colon ? flen + 1 : fnlen);
	bool entry = flow_named(name, nlen, "entry");
	bool ret = !entry && flow_named(name, nlen, "return");
	int64_t id = 0;
	memcpy(&id, data + t->offsets[1],
	       t->fields[1]->size < 8 ? t->fields[1]->size : 8);
	id = (int32_t)id;
	const struct program *p = o->prog;
	bool sys = id >= 1 && (uint64_t)id <= p->nprobes &&
		p->probes[id - 1].dname[0] &&
		!strcmp(p->probes[id - 1].dname[0], "syscall");
	if (!o->flow_indent &&
	    !(o->flow_indent = calloc(D_FLOW_CPUS, sizeof(*o->flow_indent))))
		return -ENOMEM;
	if (!o->flow_last &&
	    !(o->flow_last = calloc(D_FLOW_CPUS, sizeof(*o->flow_last))))
		return -ENOMEM;
	uint16_t dummy = 0, *ind = cpu >= 0 && cpu < D_FLOW_CPUS ?
		&o->flow_indent[cpu] : &dummy;
	if (cpu >= 0 && cpu < D_FLOW_CPUS) {
		if ((entry || ret) && same_probe(p, o->flow_last[cpu], id))
			entry = ret = false;
		o->flow_last[cpu] = (uint32_t)id;
	}
	if (ret && *ind >= 2)
		*ind -= 2;
	struct sbuf n = { 0 };
	sbuf_printf(&n, "%*s%s%.*s", (int)*ind, "",
		    entry ? (sys ? " => " : " -> ") :
		    ret ? (sys ? " <= " : " <- ") : "| ", (int)flen, fn);
	if (!entry && !ret)
		sbuf_printf(&n, ":%.*s", (int)nlen, name);
	if (entry && *ind < D_FLOW_INDENT_MAX)
		*ind += 2;
	sbuf_printf(b, "%3d %-41s ", (int)cpu, n.s ? n.s : "");
	int r = n.oom ? -ENOMEM : 0;
	sbuf_free(&n);
	return r;
}

int dtrace_probe_line(struct output *o, const struct event_spec *e,
		      const uint8_t *data, size_t size)
{
	struct sbuf b = { 0 };
	bool flow = o->prog->dtrace.flowindent;
	if (!o->dtrace_heading) {
		if (flow)
			sbuf_printf(&b, "%3s %-41s\n", "CPU", "FUNCTION");
		else
			sbuf_printf(&b, "%3s %6s %32s\n", "CPU", "ID",
				    "FUNCTION:NAME");
		o->dtrace_heading = true;
	}
	int r = flow ? flow_line(o, &b, e, data, size) :
		fmt_format(o, &b, e->fmt, e->args, data, size);
	if (r == 0)
		r = output_write(o, &b);
	sbuf_free(&b);
	return r;
}

/* DTrace's fault: DTRACEFLT_BADADDR, the only one sonde's reads tell */
#define D_FAULT_BADADDR 1
/* A clause that faults on every hit would write a line per hit to
 * stderr, without end: past this many the rest are counted, and the
 * count is said at the end (dtrace_faults_end). ERROR clauses still run
 * for each. */
#define D_FAULTS_SHOWN 100

/* A clause faulted: the script's dtrace:::ERROR clauses run with its
 * details, and DTrace's message (libdtrace's dt_handle_err) goes to
 * stderr, as dtrace(8)'s own ERROR enabling prints it.
 * sonde's BPF has no DIF: the DIF offset is -1, which DTrace's message
 * leaves out. */
int dtrace_fault(struct output *o, const struct event_spec *e,
		 const uint8_t *data, size_t size)
{
	uint64_t addr;
	if (size < 8 || !e->fmt)
		return -EINVAL;
	memcpy(&addr, data, 8);
	/* the faulting clause's record line, begun, ends here (DTrace
	 * drops the whole record; sonde has printed its start) */
	if (!o->prog->dtrace.quiet && o->line_open) {
		struct sbuf nl = { 0 };
		sbuf_putc(&nl, '\n');
		int r = output_write(o, &nl);
		sbuf_free(&nl);
		if (r < 0)
			return r;
	}
	/* a fault in an ERROR clause is dropped silently, as DTrace does
	 * (ERROR is not run again) */
	if (strcmp(e->fmt, "dtrace:::ERROR") == 0)
		return 0;
	if (o->on_fault && o->prog->dtrace.has_error) {
		uint64_t args[6] = { 0, e->top, e->div, (uint64_t)-1,
				     D_FAULT_BADADDR, addr };
		if (o->on_fault(o->fault_ctx, args) < 0)
			return -EIO;
	}
	/* and dtrace(8)'s own enabling of ERROR reports it */
	if (++o->dtrace_faults > D_FAULTS_SHOWN)
		return 0;
	char where[32] = "predicate";
	if (e->div)
		snprintf(where, sizeof(where), "action #%llu",
			 (unsigned long long)e->div);
	fflush(o->opts.out);
	fprintf(stderr, "dtrace: error on enabled probe ID %llu (ID %llu: "
		"%s): invalid address (0x%llx) in %s\n",
		(unsigned long long)e->top, (unsigned long long)e->top,
		e->fmt, (unsigned long long)addr, where);
	if (o->dtrace_faults == D_FAULTS_SHOWN)
		fprintf(stderr, "dtrace: more errors are counted, not "
			"printed\n");
	return 0;
}

void dtrace_faults_end(struct output *o)
{
	if (o->dtrace_faults > D_FAULTS_SHOWN)
		fprintf(stderr, "dtrace: %llu errors, %llu of them not printed\n",
			(unsigned long long)o->dtrace_faults,
			(unsigned long long)(o->dtrace_faults - D_FAULTS_SHOWN));
}

/* ---- aggregations ---------------------------------------------------- */

static const uint8_t *key_widths(const struct output *o, const char *name)
{
	for (uint32_t i = 0; i < o->prog->dtrace.naggs; i++)
		if (strcmp(o->prog->dtrace.aggs[i].name, name) == 0)
			return o->prog->dtrace.aggs[i].width;
	return NULL;
}

static const struct type *key_field(const struct mctx *mc, uint32_t i,
				    const uint8_t **at, const uint8_t *key)
{
	const struct type *kt = mc->m->key_type;
	if (kt->kind != TYPE_TUPLE) {
		*at = key;
		return i ? NULL : kt;
	}
	if (i >= kt->nfields)
		return NULL;
	*at = key + kt->offsets[i];
	return kt->fields[i];
}

static uint32_t key_count(const struct mctx *mc)
{
	if (!mc->m->key_type || !mc->m->nkeys)
		return 0;
	return mc->m->key_type->kind == TYPE_TUPLE ?
		mc->m->key_type->nfields : 1;
}

/* A key field as dt_print_datum prints it. */
static void key_datum(const struct mctx *mc, struct sbuf *out,
		      const struct type *t, const uint8_t *at, int width)
{
	if (t->kind == TYPE_STR) {
		size_t n = strnlen((const char *)at, t->size);
		sbuf_printf(out, "  %-50.*s", (int)n, (const char *)at);
	} else if (t->kind == TYPE_INT) {
		int64_t v = value_sint(t, at);
		if (width == 1)   /* dt_print_datum: a uint8_t, uint16_t */
			sbuf_printf(out, " %3d", (int)(uint8_t)v);
		else if (width == 2)
			sbuf_printf(out, " %5d", (int)(uint16_t)v);
		else if (width == 4)
			sbuf_printf(out, " %8d", (int)v);
		else
			sbuf_printf(out, " %16lld", (long long)v);
	} else if ((t->kind == TYPE_KSTACK || t->kind == TYPE_USTACK) &&
		   mc->o->have_hooks) {
		/* each frame on a line of its own, the value after the last */
		mc->o->hooks.stack(mc->o->hooks.ctx, out, t, at, D_STACK_INDENT);
	} else {
		struct sbuf s = { 0 };
		value_text(mc->o, &s, t, at, VCTX_KEY);
		sbuf_printf(out, "  %-50s", s.s ? s.s : "");
		sbuf_free(&s);
	}
}

/* DTrace's quantize buckets: 63 negative powers of two, zero, 63
 * positive; bpftrace's hist() has one bucket for every negative value
 * (shown as -1), then 0, 1, [2, 4) ... */
#define QBUCKETS 127
#define QZERO 63

static long long q_label(int i)
{
	if (i == QZERO)
		return 0;
	return i > QZERO ? 1ll << (i - QZERO - 1) : -(1ll << (QZERO - 1 - i));
}

static void quantline(struct sbuf *out, int64_t val, long double total,
		      int64_t normal)
{
	static const char ats[] = "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@";
	static const char spaces[] = "                                        ";
	unsigned depth = 0, len = 40;
	if (total > 0) {
		long double f = ((long double)(val < 0 ? -val : val) * len) /
			total;
		depth = (unsigned)(f + 0.5);
		if (depth > len)
			depth = len;
	}
	sbuf_printf(out, "|%s%s %-9lld\n", ats + len - depth, spaces + depth,
		    (long long)(val / normal));
}

/* The table for values v[first..last], labels by lab(i). */
static void dist_table(struct sbuf *out, const int64_t *v, int n,
		       bool lin, const struct type *t, int64_t normal)
{
	int first = 0, last = n - 1;
	while (first < n - 1 && v[first] == 0)
		first++;
	if (first == n - 1 && v[first] == 0) {
		first = lin ? 0 : QZERO - 1;
		last = lin ? 2 : QZERO + 1;
		if (last > n - 1)
			last = n - 1;
	} else {
		if (first > 0)
			first--;
		while (last > 0 && v[last] == 0)
			last--;
		if (last < n - 1)
			last++;
	}
	long double total = 0;
	for (int i = first; i <= last; i++)
		total += v[i] < 0 ? -v[i] : v[i];
	sbuf_printf(out, "\n%16s %41s %-9s\n", "value",
		    "------------- Distribution -------------", "count");
	for (int i = first; i <= last; i++) {
		if (!lin) {
			sbuf_printf(out, "%16lld ", q_label(i));
		} else if (t->llq_factor) {
			/* llquantize: the bounds, the last the overflow's */
			char c[32];
			int64_t lb[LLQ_MAX_BOUNDS];
			int nb = type_llq_bounds(t->llq_factor, t->llq_low,
						 t->llq_high, t->llq_steps, lb,
						 LLQ_MAX_BOUNDS);
			long long at = nb <= 0 ? 0 :
				i == 0 ? lb[0] : i - 1 < nb ? lb[i - 1] :
				lb[nb - 1];
			snprintf(c, sizeof(c), i == 0 ? "< %lld" :
				 i == n - 1 ? ">= %lld" : "%lld", at);
			sbuf_printf(out, "%16s ", c);
		} else {
			char c[32];
			long long base = t->lhist_min, step = t->lhist_step;
			long long levels = n - 2;
			if (i == 0)
				snprintf(c, sizeof(c), "< %lld", base);
			else if (i == n - 1)
				snprintf(c, sizeof(c), ">= %lld",
					 base + levels * step);
			else
				snprintf(c, sizeof(c), "%lld",
					 base + (i - 1) * step);
			sbuf_printf(out, "%16s ", c);
		}
		quantline(out, v[i], total, normal);
	}
}

/* normalize()'s divisor of the map being printed (1: none) */
static int64_t normal_of(const struct mctx *mc)
{
	const struct output *o = mc->o;
	uint64_t n = o->dtrace_normal ?
		o->dtrace_normal[mc->m - o->prog->maps] : 0;
	return n ? (int64_t)n : 1;
}

static void value_datum(const struct mctx *mc, struct sbuf *out,
			const struct ment *e)
{
	const struct type *t = mc->vt;
	int64_t normal = normal_of(mc);
	switch (t->kind) {
	case TYPE_HIST: {
		int64_t q[QBUCKETS] = { 0 };
		for (uint32_t i = 0; i < mc->nb; i++) {
			int d = i == 0 ? QZERO - 1 : i == 1 ? QZERO :
				QZERO + (int)i - 1;
			if (d < QBUCKETS)
				q[d] += (int64_t)e->buckets[i];
		}
		dist_table(out, q, QBUCKETS, false, t, normal);
		return;
	}
	case TYPE_LHIST: {
		int64_t *q = calloc(mc->nb ? mc->nb : 1, sizeof(*q));
		if (!q)
			return;
		for (uint32_t i = 0; i < mc->nb; i++)
			q[i] = (int64_t)e->buckets[i];
		dist_table(out, q, (int)mc->nb, true, t, normal);
		free(q);
		return;
	}
	case TYPE_AVG:
	case TYPE_STATS:
	case TYPE_STDDEV:
		sbuf_printf(out, " %16lld", (long long)(e->avg / normal));
		return;
	default:
		sbuf_printf(out, " %16lld", (long long)((int64_t)e->a / normal));
	}
}

/* printa's format: its conversions take the key's fields in order, and
 * %@... the aggregation's value. */
static void printa_format(const struct mctx *mc, struct sbuf *out,
			  const char *fmt, const struct ment *e,
			  const int64_t *vals, uint32_t nvals)
{
	uint32_t field = 0, nagg = 0;
	for (const char *p = fmt; *p;) {
		if (*p != '%') {
			sbuf_putc(out, *p++);
			continue;
		}
		if (p[1] == '%') {
			sbuf_putc(out, '%');
			p += 2;
			continue;
		}
		char spec[32];
		size_t n = 0;
		bool agg = false;
		spec[n++] = *p++;
		while (*p && strchr("-+ #0123456789.@lhjzt", *p) && n < 24) {
			if (*p == '@')
				agg = true;
			else if (!strchr("lhjzt", *p))
				spec[n++] = *p;
			p++;
		}
		char conv = *p ? *p++ : 'd';
		if (agg) {
			if (!vals && (mc->vt->kind == TYPE_HIST ||
				      mc->vt->kind == TYPE_LHIST)) {
				value_datum(mc, out, e);
				continue;
			}
			int64_t v = vals ? (nagg < nvals ? vals[nagg] : 0) :
				(mc->vt->kind == TYPE_AVG ||
				 mc->vt->kind == TYPE_STATS ||
				 mc->vt->kind == TYPE_STDDEV ? e->avg :
				 (int64_t)e->a) / normal_of(mc);
			nagg++;
			memcpy(spec + n, "ll", 2);
			spec[n + 2] = strchr("dicuxXo", conv) ? conv : 'd';
			spec[n + 3] = 0;
			sbuf_printf(out, spec, (long long)v);
			continue;
		}
		const uint8_t *at;
		const struct type *t = e->key ?
			key_field(mc, field++, &at, e->key) : NULL;
		if (!t)
			continue;
		if (t->kind == TYPE_INT && conv != 's') {
			memcpy(spec + n, "ll", 2);
			spec[n + 2] = strchr("dicuxXop", conv) ? conv : 'd';
			if (spec[n + 2] == 'p')
				spec[n + 2] = 'x';
			spec[n + 3] = 0;
			sbuf_printf(out, spec, (long long)value_sint(t, at));
		} else {
			struct sbuf s = { 0 };
			if (t->kind == TYPE_STR)
				sbuf_printf(&s, "%.*s",
					    (int)strnlen((const char *)at,
							 t->size),
					    (const char *)at);
			else
				value_text(mc->o, &s, t, at, VCTX_KEY);
			spec[n] = 's';
			spec[n + 1] = 0;
			sbuf_printf(out, spec, s.s ? s.s : "");
			sbuf_free(&s);
		}
	}
}

static void d_map_sorted(const struct mctx *mc, struct sbuf *out,
			 struct ment *const *v, size_t n);

static bool is_aggregation(const struct type *t)
{
	switch (t->kind) {
	case TYPE_COUNT: case TYPE_SUM: case TYPE_MIN: case TYPE_MAX:
	case TYPE_AVG: case TYPE_STATS: case TYPE_HIST: case TYPE_LHIST:
	case TYPE_STDDEV:
		return true;
	default:
		return false;
	}
}

/* DTrace's order: by value, smallest first, then by key. */
static int64_t sort_value(const struct mctx *mc, const struct ment *e)
{
	switch (mc->vt->kind) {
	case TYPE_HIST: case TYPE_LHIST:
		return (int64_t)e->total;
	case TYPE_AVG: case TYPE_STATS: case TYPE_STDDEV:
		return e->avg;
	default:
		return (int64_t)e->a;
	}
}

static int cmp_entry(const void *x, const void *y, void *ctx)
{
	const struct mctx *mc = ctx;
	const struct ment *a = *(struct ment *const *)x;
	const struct ment *b = *(struct ment *const *)y;
	int64_t va = sort_value(mc, a), vb = sort_value(mc, b);
	if (va != vb)
		return va < vb ? -1 : 1;
	for (uint32_t k = 0; k < key_count(mc); k++) {
		const uint8_t *pa, *pb;
		const struct type *t = key_field(mc, k, &pa, a->key);
		key_field(mc, k, &pb, b->key);
		if (!t)
			break;
		int c = 0;
		if (t->kind == TYPE_INT) {
			int64_t ia = value_sint(t, pa), ib = value_sint(t, pb);
			c = ia < ib ? -1 : ia > ib;
		} else if (t->kind == TYPE_STR) {
			c = strncmp((const char *)pa, (const char *)pb, t->size);
		} else {
			c = memcmp(pa, pb, t->size);
		}
		if (c)
			return c;
	}
	return 0;
}

/* printa() of several aggregations: every key of any of them, with
 * each one's value (0 where it has none), sorted by the first's. */
struct dtrace_join {
	struct mctx mc;            /* the first aggregation's */
	uint32_t naggs, cur;       /* aggregations, the one being read */
	struct join_row {
		uint8_t *key;
		int64_t *vals;
	} *rows;
	size_t nrows, cap;
	bool oom;
};

static void join_entries(const struct mctx *mc, struct ment *const *v,
			 size_t n)
{
	struct dtrace_join *j = mc->o->dtrace_join;
	if (j->cur == 0)
		j->mc = *mc;
	if (mc->ksize != j->mc.ksize)
		return;     /* keys of another shape: nothing to join */
	int64_t normal = normal_of(mc);
	for (size_t i = 0; i < n && !j->oom; i++) {
		size_t r = 0;
		while (r < j->nrows &&
		       memcmp(j->rows[r].key, v[i]->key, mc->ksize) != 0)
			r++;
		if (r == j->nrows) {
			if (vec_reserve_arr(j->rows, j->cap, j->nrows + 1)) {
				j->oom = true;
				return;
			}
			struct join_row *row = &j->rows[j->nrows];
			row->key = malloc(mc->ksize ? mc->ksize : 1);
			row->vals = calloc(j->naggs, sizeof(int64_t));
			if (!row->key || !row->vals) {
				free(row->key);
				free(row->vals);
				j->oom = true;
				return;
			}
			memcpy(row->key, v[i]->key, mc->ksize);
			j->nrows++;
		}
		j->rows[r].vals[j->cur] = sort_value(mc, v[i]) / normal;
	}
}

static int cmp_row(const void *x, const void *y, void *ctx)
{
	const struct dtrace_join *j = ctx;
	const struct join_row *a = x, *b = y;
	if (a->vals[0] != b->vals[0])
		return a->vals[0] < b->vals[0] ? -1 : 1;
	struct ment ea = { .key = a->key }, eb = { .key = b->key };
	const struct ment *pa = &ea, *pb = &eb;
	struct mctx mc = j->mc;
	mc.vt = type_u64();   /* ties: by key alone */
	return cmp_entry(&pa, &pb, &mc);
}

static int printa_joined(struct output *o, const struct event_spec *e)
{
	struct dtrace_join j = { .naggs = e->nmore_maps + 1 };
	o->dtrace_join = &j;
	int r = 0;
	for (uint32_t k = 0; k < j.naggs && r == 0; k++) {
		j.cur = k;
		int32_t id = k ? e->more_maps[k - 1] : e->map_id;
		if (id < 0 || (uint32_t)id >= o->prog->nmaps) {
			r = -EINVAL;
			break;
		}
		if (o->dtrace_printed)
			o->dtrace_printed[id] = 1;
		r = maps_print(o, (uint32_t)id, 0, 0);
	}
	o->dtrace_join = NULL;
	struct sbuf b = { 0 };
	if (!e->fmt)
		sbuf_putc(&b, '\n');
	if (r == 0 && !j.oom && j.mc.m) {
		qsort_r(j.rows, j.nrows, sizeof(*j.rows), cmp_row, &j);
		const uint8_t *w = key_widths(o, j.mc.m->name);
		for (size_t i = 0; i < j.nrows; i++) {
			struct ment ent = { .key = j.rows[i].key };
			if (e->fmt) {
				printa_format(&j.mc, &b, e->fmt, &ent,
					      j.rows[i].vals, j.naggs);
				continue;
			}
			for (uint32_t k = 0; k < key_count(&j.mc); k++) {
				const uint8_t *at;
				const struct type *t = key_field(&j.mc, k, &at,
								 ent.key);
				if (t)
					key_datum(&j.mc, &b, t, at,
						  w && k < 8 ? w[k] : 8);
			}
			for (uint32_t k = 0; k < j.naggs; k++)
				sbuf_printf(&b, " %16lld",
					    (long long)j.rows[i].vals[k]);
			sbuf_putc(&b, '\n');
		}
	}
	output_write(o, &b);
	sbuf_free(&b);
	for (size_t i = 0; i < j.nrows; i++) {
		free(j.rows[i].key);
		free(j.rows[i].vals);
	}
	free(j.rows);
	return r;
}

/* trunc(@m, n): keep the n largest values (n < 0: the -n smallest),
 * remove the rest from the map (each of a histogram's buckets). */
static void trunc_entries(const struct mctx *mc, struct ment *const *v,
			  size_t n)
{
	struct output *o = mc->o;
	int64_t keep = o->dtrace_trunc;
	uint64_t k = (uint64_t)(keep < 0 ? -keep : keep);
	if (!o->maps.remove)
		return;
	uint32_t id = (uint32_t)(mc->m - o->prog->maps);
	bool hist = mc->vt->kind == TYPE_HIST || mc->vt->kind == TYPE_LHIST;
	uint8_t *raw = malloc(mc->ksize + 8);
	if (!raw)
		return;
	for (size_t i = 0; i < n; i++) {
		bool kept = keep >= 0 ? i + k >= n : i < k;
		if (kept)
			continue;
		if (!hist) {
			o->maps.remove(o->maps.ctx, id, v[i]->key);
			continue;
		}
		memcpy(raw, v[i]->key, mc->ksize);
		for (uint64_t b = 0; b < mc->nb; b++) {
			memcpy(raw + mc->ksize, &b, 8);
			o->maps.remove(o->maps.ctx, id, raw);
		}
	}
	free(raw);
}

int dtrace_map_op(struct output *o, const struct event_spec *e,
		  const uint8_t *data)
{
	if (e->map_id < 0 || (uint32_t)e->map_id >= o->prog->nmaps || !e->args)
		return -EINVAL;
	int64_t n;
	memcpy(&n, data + e->args->offsets[0], sizeof(n));
	if (e->kind == EV_DTRACE_NORMALIZE) {
		if (!o->dtrace_normal)
			o->dtrace_normal = calloc(o->prog->nmaps, sizeof(uint64_t));
		if (o->dtrace_normal)
			o->dtrace_normal[e->map_id] = n > 0 ? (uint64_t)n : 1;
		return 0;
	}
	o->dtrace_truncating = true;
	o->dtrace_trunc = n;
	int r = maps_print(o, (uint32_t)e->map_id, 0, 0);
	o->dtrace_truncating = false;
	return r;
}

static void d_map(const struct mctx *mc, struct sbuf *out,
		  struct ment *const *in, size_t n, uint64_t top)
{
	struct ment **v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return;
	memcpy(v, in, n * sizeof(*v));
	qsort_r(v, n, sizeof(*v), cmp_entry, (void *)mc);
	if (mc->o->dtrace_join)
		join_entries(mc, v, n);
	else if (mc->o->dtrace_truncating)
		trunc_entries(mc, v, n);
	else
		d_map_sorted(mc, out, v, n);
	free(v);
}

static void d_map_sorted(const struct mctx *mc, struct sbuf *out,
			 struct ment *const *v, size_t n)
{
	/* D's variables live in maps too (@.x, @.self.x): not printed */
	if (mc->m->name[1] == '.' || !is_aggregation(mc->vt))
		return;
	if (!mc->o->printa_fmt && mc->o->dtrace_printed &&
	    mc->o->dtrace_printed[mc->m - mc->o->prog->maps] &&
	    mc->o->dtrace_exiting)
		return;
	const char *fmt = mc->o->printa_fmt;
	const uint8_t *w = key_widths(mc->o, mc->m->name);
	uint32_t nk = key_count(mc);
	for (size_t i = 0; i < n; i++) {
		const struct ment *e = v[i];
		if (fmt) {
			printa_format(mc, out, fmt, e, NULL, 0);
			continue;
		}
		for (uint32_t k = 0; k < nk; k++) {
			const uint8_t *at;
			const struct type *t = key_field(mc, k, &at, e->key);
			if (t)
				key_datum(mc, out, t, at, w && k < 8 ?
					  w[k] : 8);
		}
		value_datum(mc, out, e);
		sbuf_putc(out, '\n');
	}
}

int dtrace_printa(struct output *o, const struct event_spec *e)
{
	if (e->map_id < 0)
		return -EINVAL;
	if (!o->dtrace_printed)
		o->dtrace_printed = calloc(o->prog->nmaps, 1);
	if (e->nmore_maps)
		return printa_joined(o, e);
	if (!e->fmt) {
		struct sbuf b = { 0 };
		sbuf_putc(&b, '\n');
		output_write(o, &b);
		sbuf_free(&b);
	}
	/* printed here, it is not printed again at exit (DTrace prints
	 * only the aggregations no printa() printed) */
	if (!o->dtrace_printed)
		o->dtrace_printed = calloc(o->prog->nmaps, 1);
	if (o->dtrace_printed)
		o->dtrace_printed[e->map_id] = 1;
	o->printa_fmt = e->fmt;
	int r = maps_print(o, (uint32_t)e->map_id, 0, 0);
	o->printa_fmt = NULL;
	return r;
}

static void d_message(struct output *o, struct sbuf *out, const char *level,
		      const char *msg)
{
	fflush(o->opts.out);
	fprintf(stderr, "dtrace: %s: %s\n", level, msg);
}

static void d_error_stderr(struct output *o, const char *msg)
{
	fflush(o->opts.out);
	fprintf(stderr, "dtrace: error: %s\n", msg);
}

static void d_text_event(struct output *o, struct sbuf *out, const char *type,
			 const char *text, size_t n, bool newline)
{
	output_format_text.text_event(o, out, type, text, n, newline);
}

/* stack(), ustack(): "\n" and a line per frame, as dt_print_stack;
 * print() of a C struct, union or array: dt_print.c's layout */
static void d_print_value(struct output *o, struct sbuf *out,
			  const struct type *t, const uint8_t *data)
{
	if ((t->kind == TYPE_STRUCT || t->kind == TYPE_ARRAY) && t->ctype) {
		dprint_value(o, out, t->ctype, data, t->size);
		return;
	}
	if ((t->kind == TYPE_KSTACK || t->kind == TYPE_USTACK) &&
	    o->have_hooks) {
		o->hooks.stack(o->hooks.ctx, out, t, data, D_STACK_INDENT);
		return;
	}
	output_format_text.print_value(o, out, t, data);
}

static void d_value(struct output *o, struct sbuf *out, const struct type *t,
		    const uint8_t *data)
{
	output_format_text.value(o, out, t, data);
}

static int d_script_message(struct output *o, struct sbuf *out,
			    const struct event_spec *e, bool err,
			    const char *msg, size_t n)
{
	return output_format_text.script_message(o, out, e, err, msg, n);
}

static void d_helper_error(struct output *o, struct sbuf *out,
			   const struct event_spec *e, int64_t ret)
{
	output_format_text.helper_error(o, out, e, ret);
}

const struct output_format output_format_dtrace = {
	.name = "dtrace",
	.attaching = d_attaching,
	.lost = d_lost,
	.message = d_message,
	.script_message = d_script_message,
	.text_event = d_text_event,
	.print_value = d_print_value,
	.value = d_value,
	.maps_begin = d_maps_begin,
	.map = d_map,
	.error_stderr = d_error_stderr,
	.helper_error = d_helper_error,
};

/* tracemem(): the bytes as the guide shows traced memory: a heading of
 * the 16 columns and the text, then per 16 bytes their offset, the
 * bytes in hex and as text ('.' for what is not printable). */
int dtrace_tracemem(struct output *o, const struct event_spec *e,
		    const uint8_t *d, size_t size)
{
	const struct type *t = e->args;
	if (!t || t->nfields != 1 || t->fields[0]->kind != TYPE_BUF ||
	    size < t->offsets[0] + t->fields[0]->size)
		return -EINVAL;
	const uint8_t *b = d + t->offsets[0];
	uint32_t n;
	memcpy(&n, b, 4);
	uint32_t cap = t->fields[0]->size - 4;
	if (n > cap)
		n = cap;
	b += 4;
	enum { MARGIN = 5 };
	struct sbuf out = { 0 };
	sbuf_printf(&out, "\n%*s      ", MARGIN, "");
	for (int i = 0; i < 16; i++)
		sbuf_printf(&out, "  %c", "0123456789abcdef"[i]);
	sbuf_printf(&out, "  0123456789abcdef\n");
	for (uint32_t i = 0; i < n; i += 16) {
		sbuf_printf(&out, "%*s%5x:", MARGIN, "", i);
		uint32_t j;
		for (j = i; j < i + 16 && j < n; j++)
			sbuf_printf(&out, " %02x", b[j]);
		for (; j % 16; j++)
			sbuf_printf(&out, "   ");
		sbuf_printf(&out, "  ");
		for (j = i; j < i + 16 && j < n; j++)
			sbuf_putc(&out, b[j] < ' ' || b[j] > '~' ? '.' :
				  (char)b[j]);
		sbuf_putc(&out, '\n');
	}
	int r = output_write(o, &out);
	sbuf_free(&out);
	return r;
}
