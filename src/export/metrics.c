/* metrics.c - the maps as Prometheus metrics (metrics.h): naming, labels,
 * the exposition text of each map, and the scrape that renders it one
 * map per turn of the event loop.
 *
 * Why in the event loop and not a thread of its own. Reading a map is
 * cheap and never blocks a probe (the kernel engine's dump is a lookup
 * per key, the process engine's a lock-free walk of shared memory); what
 * costs is naming the stacks in its keys, and the tables for that
 * (canonical user stacks, process mappings, symbols) belong to output,
 * which the event loop owns and changes as records arrive. A scrape
 * thread would have to lock them, and the event reader would wait on the
 * scrape's lock anyway. So a scrape renders in the loop, a slice of a
 * map per turn (output_walk_next's budget, WALK_BUDGET_*): between two
 * slices the ring is read again.
 *
 * Entries whose labels come out equal (two stacks that differ only in
 * offsets inside the same functions, as in a flame graph) are merged as
 * print() merges CPUs: counts and sums add, min/max keep the extreme,
 * histograms add bucket by bucket. A label set appears once per family,
 * as the format requires, and series come out sorted by their labels. */
#include "metrics.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/log.h"
#include "../base/vec.h"
#include "http.h"
#include "xbuf.h"

#define STACK_LABEL_MAX 4096    /* bytes of a folded stack label */
#define HIST_FINITE 33          /* hist buckets 0..32 have a bound */
/* A scrape's share of a turn of the event loop: as long as the rest of
 * the turn took (reading the ring: when records come fast and cost much,
 * such as user stacks to unwind, the two share the time), at least 5 ms
 * and at most 100 ms. */
#define WALK_BUDGET_MIN_US 5000
#define WALK_BUDGET_MAX_US 100000

/* ---- names ----------------------------------------------------------- */

static bool label_name_ok(const char *s, size_t n)
{
	if (n == 0 || (n >= 2 && s[0] == '_' && s[1] == '_'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     c == '_';
		if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
			return false;
	}
	return true;
}

struct map_labels {
	char **names;           /* per key field; NULL: the default */
	uint32_t n;
};

struct metrics;

struct group {
	char *labels;           /* a="x",b="y" */
	uint64_t value;
	int64_t total;
	bool set;
	uint64_t *buckets;
	int64_t sum;
	bool has_sum;
};

struct family {
	struct metrics *m;
	uint32_t map_id;
	struct output_map_info mi;
	struct group *v;
	size_t n, cap;
	uint32_t *index;        /* group + 1, 0 empty */
	size_t icap;
	struct xbuf key;
	int err;
};

struct metrics {
	struct http_server *http;
	const struct program *prog;
	struct output *out;
	struct map_labels *labels;      /* per map */
	char **family;                  /* per map: "sonde_x", NULL: not exported */
	/* the scrape being rendered */
	bool job;
	enum http_format fmt;
	uint32_t next_map;
	struct xbuf body;
	struct output_walk *walk;       /* the map being read, or NULL */
	struct family fam;              /* its entries so far */
	unsigned want;                  /* formats waiting, after the last step */
	uint64_t step_end_us;           /* when the last step ended */
	bool warned_full;
};

static bool counter_kind(enum output_value_kind k)
{
	return k == OUTV_COUNT || k == OUTV_SUM;
}

/* sonde_NAME; a counter's _total suffix is the sample's, not the
 * family's (OpenMetrics). */
static char *family_name(const struct output_map_info *mi)
{
	const char *n = mi->name[1] ? mi->name + 1 : "anon";
	size_t len = strlen(n);
	if (counter_kind(mi->kind) && len > 6 &&
	    strcmp(n + len - 6, "_total") == 0)
		len -= 6;
	char *s = malloc(len + 7);
	if (s) {
		memcpy(s, "sonde_", 6);
		memcpy(s + 6, n, len);
		s[len + 6] = '\0';
	}
	return s;
}

/* The label of key field I (a stack field: the folded stacks' label). */
static const char *field_label(const struct metrics *m, uint32_t map_id,
			       const struct output_map_info *mi, uint32_t i,
			       char *buf, size_t size)
{
	const struct map_labels *ml = &m->labels[map_id];
	enum output_field_kind k = output_map_field(m->prog, map_id, i);
	bool stack = k == OUTF_KSTACK || k == OUTF_USTACK;
	if (stack) {
		/* the first stack field's name names the folded label */
		for (uint32_t j = 0; j < mi->nfields; j++) {
			enum output_field_kind kj = output_map_field(m->prog, map_id, j);
			if (kj != OUTF_KSTACK && kj != OUTF_USTACK)
				continue;
			return j < ml->n && ml->names[j] ? ml->names[j] : "stack";
		}
	}
	if (i < ml->n && ml->names[i])
		return ml->names[i];
	if (mi->nfields == 1)
		return "key";
	snprintf(buf, size, "key%u", i);
	return buf;
}

static bool is_stack_field(const struct metrics *m, uint32_t map_id, uint32_t i)
{
	enum output_field_kind k = output_map_field(m->prog, map_id, i);
	return k == OUTF_KSTACK || k == OUTF_USTACK;
}

/* Parse "@MAP:NAME[,NAME...]" into m->labels. */
static int parse_labels(struct metrics *m, const char *spec)
{
	const char *colon = strchr(spec, ':');
	if (!colon || colon == spec || spec[0] != '@') {
		log_error("--metrics-labels %s: expected @MAP:NAME[,NAME...]", spec);
		return -EINVAL;
	}
	char map[256];
	size_t ml = (size_t)(colon - spec);
	if (ml >= sizeof(map)) {
		log_error("--metrics-labels %s: map name too long", spec);
		return -EINVAL;
	}
	memcpy(map, spec, ml);
	map[ml] = '\0';
	int id = program_find_map(m->prog, map);
	struct output_map_info mi;
	if (id < 0 || output_map_info(m->prog, (uint32_t)id, &mi) < 0) {
		log_error("--metrics-labels %s: the program has no map %s", spec, map);
		return -EINVAL;
	}
	if (m->labels[id].names) {
		log_error("--metrics-labels %s: %s is named twice", spec, map);
		return -EINVAL;
	}
	if (mi.nfields == 0) {
		log_error("--metrics-labels %s: %s has no key to name", spec, map);
		return -EINVAL;
	}
	char **names = calloc(mi.nfields, sizeof(*names));
	if (!names)
		return -ENOMEM;
	m->labels[id].names = names;
	m->labels[id].n = mi.nfields;
	const char *p = colon + 1;
	for (uint32_t i = 0;; i++) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (i >= mi.nfields) {
			log_error("--metrics-labels %s: %s has %u key field%s", spec,
				  map, mi.nfields, mi.nfields == 1 ? "" : "s");
			return -EINVAL;
		}
		if (!label_name_ok(p, n)) {
			log_error("--metrics-labels %s: '%.*s' is not a label name "
				  "([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)",
				  spec, (int)n, p);
			return -EINVAL;
		}
		if (!(names[i] = strndup(p, n)))
			return -ENOMEM;
		if (!comma)
			break;
		p = comma + 1;
	}
	return 0;
}

/* Every label of every map is distinct within its map and not one the
 * format reserves for the metric's type. */
static int check_labels(struct metrics *m, uint32_t id,
			const struct output_map_info *mi)
{
	char bufs[2][32];
	for (uint32_t i = 0; i < mi->nfields; i++) {
		const char *a = field_label(m, id, mi, i, bufs[0], sizeof(bufs[0]));
		bool hist = mi->kind == OUTV_HIST || mi->kind == OUTV_LHIST;
		if ((hist && strcmp(a, "le") == 0) ||
		    (mi->kind == OUTV_STATS && strcmp(a, "quantile") == 0)) {
			log_error("--metrics: the label '%s' of %s is the one the "
				  "format uses for its buckets; name it otherwise "
				  "with --metrics-labels", a, mi->name);
			return -EINVAL;
		}
		if (is_stack_field(m, id, i))
			continue;
		for (uint32_t j = i + 1; j < mi->nfields; j++) {
			const char *b = field_label(m, id, mi, j, bufs[1],
						    sizeof(bufs[1]));
			if (strcmp(a, b) == 0) {
				log_error("--metrics: %s would have two labels "
					  "named '%s'", mi->name, a);
				return -EINVAL;
			}
		}
	}
	return 0;
}

/* The series names a family writes, for the collision check. */
static size_t series_names(const char *fam, enum output_value_kind k,
			   char out[4][300])
{
	static const char *const hist[] = { "_bucket", "_count", "_sum" };
	size_t n = 0;
	if (counter_kind(k)) {
		snprintf(out[n++], 300, "%s_total", fam);
	} else if (k == OUTV_HIST || k == OUTV_LHIST) {
		for (int i = 0; i < 3; i++)
			snprintf(out[n++], 300, "%s%s", fam, hist[i]);
		snprintf(out[n++], 300, "%s", fam);
	} else if (k == OUTV_STATS) {
		snprintf(out[n++], 300, "%s_count", fam);
		snprintf(out[n++], 300, "%s_sum", fam);
		snprintf(out[n++], 300, "%s", fam);
	} else {
		snprintf(out[n++], 300, "%s", fam);
	}
	return n;
}

#define OWN_LOST "sonde_events_lost"
#define OWN_FAILED "sonde_map_updates_failed"

/* No two families may write the same series, nor one of sonde's own. */
static int check_names(struct metrics *m)
{
	const struct program *p = m->prog;
	char a[4][300], b[4][300];
	for (uint32_t i = 0; i < p->nmaps; i++) {
		struct output_map_info mi, mj;
		if (!m->family[i] || output_map_info(m->prog, i, &mi) < 0)
			continue;
		size_t na = series_names(m->family[i], mi.kind, a);
		for (size_t x = 0; x < na; x++)
			if (strcmp(a[x], OWN_LOST "_total") == 0 ||
			    strcmp(a[x], OWN_FAILED "_total") == 0 ||
			    strcmp(a[x], OWN_LOST) == 0 ||
			    strcmp(a[x], OWN_FAILED) == 0) {
				log_error("--metrics: %s would be exported as %s, "
					  "which sonde writes itself; rename the "
					  "map", mi.name, a[x]);
				return -EINVAL;
			}
		for (uint32_t j = i + 1; j < p->nmaps; j++) {
			if (!m->family[j] || output_map_info(m->prog, j, &mj) < 0)
				continue;
			size_t nb = series_names(m->family[j], mj.kind, b);
			for (size_t x = 0; x < na; x++)
				for (size_t y = 0; y < nb; y++)
					if (strcmp(a[x], b[y]) == 0) {
						log_error("--metrics: %s and %s "
							  "would both write %s; "
							  "rename one", mi.name,
							  mj.name, a[x]);
						return -EINVAL;
					}
		}
	}
	return 0;
}

/* ---- label values ------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at S (N bytes left), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	if (s[0] < 0x80)
		return 1;
	size_t len = (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 :
		(s[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (!len || len > n || (s[0] == 0xc0 || s[0] == 0xc1) || s[0] > 0xf4)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((len == 3 && s[0] == 0xe0 && s[1] < 0xa0) ||
	    (len == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
	    (len == 4 && s[0] == 0xf0 && s[1] < 0x90) ||
	    (len == 4 && s[0] == 0xf4 && s[1] >= 0x90))
		return 0;       /* overlong, surrogate, beyond U+10FFFF */
	return len;
}

/* A label value as the format escapes it (\\, \", \n); bytes that are
 * not UTF-8 (a traced program's strings may be anything) become U+FFFD,
 * which both formats require. */
static void put_value(struct xbuf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		size_t l = utf8_len(u + i, n - i);
		if (l == 0) {
			xbuf_puts(b, "\xef\xbf\xbd");
			i++;
			continue;
		}
		if (u[i] == '\\')
			xbuf_puts(b, "\\\\");
		else if (u[i] == '"')
			xbuf_puts(b, "\\\"");
		else if (u[i] == '\n')
			xbuf_puts(b, "\\n");
		else
			xbuf_put(b, s + i, l);
		i += l;
	}
}

/* One frame's name as a flame graph writes it (flamegraph.c's rules:
 * ';' would split a frame, control characters become spaces). */
static void put_frame(struct xbuf *b, const char *name)
{
	if (!name || !*name)
		name = "[unknown]";
	for (const char *p = name; *p; p++) {
		char c = *p == ';' ? ':' : (unsigned char)*p < 0x20 ? ' ' : *p;
		xbuf_putc(b, c);
	}
}

/* The key's stacks folded root first, "main;work;read", the root side
 * cut (and marked "...") past STACK_LABEL_MAX bytes. */
static void put_folded(struct xbuf *out, const struct output_entry *e)
{
	struct xbuf f = { 0 };
	size_t first = e->nframes, total = 0;
	/* from the leaf towards the root, while they fit */
	while (first > 0) {
		const char *n = e->frames[first - 1].name;
		size_t l = (n && *n ? strlen(n) : 9) + 1;
		if (total + l > STACK_LABEL_MAX)
			break;
		total += l;
		first--;
	}
	if (first > 0)
		xbuf_puts(&f, "...");
	for (size_t i = e->nframes; i-- > first;) {
		if (f.n)
			xbuf_putc(&f, ';');
		put_frame(&f, e->frames[i].name);
	}
	if (f.s)
		put_value(out, f.s, f.n);
	if (f.full)
		out->full = true;
	xbuf_free(&f);
}

/* ---- grouping ----------------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static struct group *group_of(struct family *f, const char *labels)
{
	if (2 * (f->n + 1) > f->icap) {
		size_t cap = f->icap ? f->icap * 2 : 64;
		uint32_t *ix = calloc(cap, sizeof(*ix));
		if (!ix)
			return NULL;
		for (size_t i = 0; i < f->n; i++) {
			size_t j = hash_str(f->v[i].labels) & (cap - 1);
			while (ix[j])
				j = (j + 1) & (cap - 1);
			ix[j] = (uint32_t)i + 1;
		}
		free(f->index);
		f->index = ix;
		f->icap = cap;
	}
	size_t j = hash_str(labels) & (f->icap - 1);
	for (; f->index[j]; j = (j + 1) & (f->icap - 1))
		if (strcmp(f->v[f->index[j] - 1].labels, labels) == 0)
			return &f->v[f->index[j] - 1];
	if (vec_reserve_arr(f->v, f->cap, f->n + 1))
		return NULL;
	struct group *g = &f->v[f->n];
	memset(g, 0, sizeof(*g));
	g->labels = strdup(labels);
	if (!g->labels)
		return NULL;
	if (f->mi.nbuckets &&
	    !(g->buckets = calloc(f->mi.nbuckets, sizeof(*g->buckets)))) {
		free(g->labels);
		return NULL;
	}
	f->index[j] = (uint32_t)++f->n;
	return g;
}

static bool less_signed(const struct output_map_info *mi, uint64_t a,
			uint64_t b)
{
	return mi->is_signed ? (int64_t)a < (int64_t)b : a < b;
}

static int add_entry(void *ctx, const struct output_entry *e)
{
	struct family *f = ctx;
	struct xbuf *k = &f->key;
	char buf[32];
	bool stack_done = false;
	k->n = 0;
	if (k->s)
		k->s[0] = '\0';
	for (uint32_t i = 0; i < f->mi.nfields; i++) {
		bool stack = is_stack_field(f->m, f->map_id, i);
		if (stack && stack_done)
			continue;
		if (k->n)
			xbuf_putc(k, ',');
		xbuf_puts(k, field_label(f->m, f->map_id, &f->mi, i, buf,
					 sizeof(buf)));
		xbuf_puts(k, "=\"");
		if (stack) {
			put_folded(k, e);
			stack_done = true;
		} else {
			put_value(k, e->fields[i], strlen(e->fields[i]));
		}
		xbuf_putc(k, '"');
	}
	if (k->full)
		return -ENOMEM;
	struct group *g = group_of(f, k->s ? k->s : "");
	if (!g)
		return -ENOMEM;
	switch (f->mi.kind) {
	case OUTV_MIN:
	case OUTV_MAX:
		if (!e->set)
			break;
		if (!g->set || (f->mi.kind == OUTV_MIN ?
				less_signed(&f->mi, e->value, g->value) :
				less_signed(&f->mi, g->value, e->value)))
			g->value = e->value;
		g->set = true;
		break;
	case OUTV_AVG:
	case OUTV_STATS:
		g->value += e->value;
		g->total += e->total;
		break;
	case OUTV_HIST:
	case OUTV_LHIST:
		if (e->bucket == OUTPUT_BUCKET_SUM) {
			g->sum += (int64_t)e->value;
			g->has_sum = true;
		} else if (e->bucket < f->mi.nbuckets) {
			g->buckets[e->bucket] += e->value;
		}
		break;
	default:
		g->value += e->value;
	}
	return 0;
}

static int cmp_group(const void *a, const void *b)
{
	return strcmp(((const struct group *)a)->labels,
		      ((const struct group *)b)->labels);
}

static void family_free(struct family *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].labels);
		free(f->v[i].buckets);
	}
	free(f->v);
	free(f->index);
	xbuf_free(&f->key);
}

/* ---- exposition --------------------------------------------------------- */

static void put_num(struct xbuf *b, const struct output_map_info *mi,
		    uint64_t v)
{
	if (mi->is_signed && mi->kind != OUTV_COUNT)
		xbuf_printf(b, "%lld", (long long)v);
	else
		xbuf_printf(b, "%llu", (unsigned long long)v);
}

/* NAME{LABELS[,EXTRA]} */
static void put_series(struct xbuf *b, const char *name, const char *suffix,
		       const char *labels, const char *extra)
{
	xbuf_puts(b, name);
	xbuf_puts(b, suffix);
	if (!*labels && !extra) {
		xbuf_putc(b, ' ');
		return;
	}
	xbuf_putc(b, '{');
	xbuf_puts(b, labels);
	if (extra) {
		if (*labels)
			xbuf_putc(b, ',');
		xbuf_puts(b, extra);
	}
	xbuf_puts(b, "} ");
}

/* The le of bucket I: -1 when it has no finite bound (+Inf). */
static bool bucket_le(const struct output_map_info *mi, uint32_t i,
		      int64_t *le)
{
	if (mi->kind == OUTV_HIST) {
		/* 0: v < 0; 1: 0; 2: 1; k+2: [2^k, 2^(k+1)); 33 holds every
		 * v >= 2^31 (program.h), so its bound is +Inf */
		if (i >= HIST_FINITE)
			return false;
		*le = i == 0 ? -1 : i == 1 ? 0 : (int64_t)(1ull << (i - 1)) - 1;
		return true;
	}
	if (i + 1 >= mi->nbuckets)
		return false;
	*le = mi->lhist_min + (int64_t)i * mi->lhist_step - 1;
	return true;
}

static const char *help_of(enum output_value_kind k)
{
	switch (k) {
	case OUTV_COUNT: return "count()";
	case OUTV_SUM: return "sum()";
	case OUTV_MIN: return "min()";
	case OUTV_MAX: return "max()";
	case OUTV_AVG: return "avg()";
	case OUTV_STATS: return "stats()";
	case OUTV_HIST: return "hist()";
	case OUTV_LHIST: return "lhist()";
	default: return "the value";
	}
}

static void render_family(struct metrics *m, struct family *f, struct xbuf *b)
{
	const struct output_map_info *mi = &f->mi;
	const char *fam = m->family[f->map_id];
	bool om = m->fmt == HTTP_FMT_OPENMETRICS;
	const char *type = counter_kind(mi->kind) ? "counter" :
		mi->kind == OUTV_HIST || mi->kind == OUTV_LHIST ? "histogram" :
		mi->kind == OUTV_STATS ? "summary" : "gauge";
	/* text 0.0.4 names a counter's family by its sample name */
	const char *tsuf = counter_kind(mi->kind) && !om ? "_total" : "";
	xbuf_printf(b, "# TYPE %s%s %s\n", fam, tsuf, type);
	xbuf_printf(b, "# HELP %s%s %s of %s\n", fam, tsuf, help_of(mi->kind),
		    mi->name);
	for (size_t i = 0; i < f->n; i++) {
		const struct group *g = &f->v[i];
		switch (mi->kind) {
		case OUTV_COUNT:
		case OUTV_SUM:
			put_series(b, fam, "_total", g->labels, NULL);
			put_num(b, mi, g->value);
			break;
		case OUTV_MIN:
		case OUTV_MAX:
			if (!g->set)
				continue;
			put_series(b, fam, "", g->labels, NULL);
			put_num(b, mi, g->value);
			break;
		case OUTV_AVG: {
			/* the integer average print() shows */
			int64_t avg = 0;
			if (g->value && mi->is_signed)
				avg = g->total / (int64_t)g->value;
			else if (g->value)
				avg = (int64_t)((uint64_t)g->total / g->value);
			put_series(b, fam, "", g->labels, NULL);
			put_num(b, mi, (uint64_t)avg);
			break;
		}
		case OUTV_STATS:
			put_series(b, fam, "_count", g->labels, NULL);
			xbuf_printf(b, "%llu\n", (unsigned long long)g->value);
			put_series(b, fam, "_sum", g->labels, NULL);
			put_num(b, mi, (uint64_t)g->total);
			break;
		case OUTV_HIST:
		case OUTV_LHIST: {
			uint64_t cum = 0;
			char le[48];
			for (uint32_t k = 0; k < mi->nbuckets; k++) {
				int64_t bound;
				cum += g->buckets[k];
				if (!bucket_le(mi, k, &bound))
					continue;
				snprintf(le, sizeof(le), "le=\"%lld\"", (long long)bound);
				put_series(b, fam, "_bucket", g->labels, le);
				xbuf_printf(b, "%llu\n", (unsigned long long)cum);
			}
			put_series(b, fam, "_bucket", g->labels, "le=\"+Inf\"");
			xbuf_printf(b, "%llu\n", (unsigned long long)cum);
			put_series(b, fam, "_count", g->labels, NULL);
			xbuf_printf(b, "%llu", (unsigned long long)cum);
			if (g->has_sum) {
				xbuf_putc(b, '\n');
				put_series(b, fam, "_sum", g->labels, NULL);
				xbuf_printf(b, "%lld", (long long)g->sum);
			}
			break;
		}
		default:
			put_series(b, fam, "", g->labels, NULL);
			put_num(b, mi, g->value);
		}
		xbuf_putc(b, '\n');
	}
}

/* One map's family into the body at once (metrics_render). */
static int render_map(struct metrics *m, uint32_t id)
{
	struct family f = { .m = m, .map_id = id };
	if (output_map_info(m->prog, id, &f.mi) < 0 || !m->family[id])
		return 0;
	int r = output_map_walk(m->out, id, 0, add_entry, &f);
	if (r == 0) {
		if (f.n)
			qsort(f.v, f.n, sizeof(*f.v), cmp_group);
		render_family(m, &f, &m->body);
	}
	family_free(&f);
	return r;
}

static void render_own(struct metrics *m, uint64_t lost)
{
	struct xbuf *b = &m->body;
	bool om = m->fmt == HTTP_FMT_OPENMETRICS;
	const char *t = om ? "" : "_total";
	xbuf_printf(b, "# TYPE " OWN_LOST "%s counter\n"
		    "# HELP " OWN_LOST "%s events the ring buffer could not "
		    "hold\n" OWN_LOST "_total %llu\n", t, t,
		    (unsigned long long)lost);
	xbuf_printf(b, "# TYPE " OWN_FAILED "%s counter\n"
		    "# HELP " OWN_FAILED "%s map updates refused because the "
		    "map was full\n", t, t);
	for (uint32_t i = 0; i < m->prog->nmaps; i++) {
		struct output_map_info mi;
		if (output_map_info(m->prog, i, &mi) < 0)
			continue;
		xbuf_puts(b, OWN_FAILED "_total{map=\"");
		put_value(b, mi.name, strlen(mi.name));
		xbuf_printf(b, "\"} %llu\n", (unsigned long long)
			    output_map_failures(m->out, i));
	}
	if (om)
		xbuf_puts(b, "# EOF\n");
}

/* ---- the scrape -------------------------------------------------------- */

static void job_start(struct metrics *m, enum http_format fmt)
{
	m->job = true;
	m->fmt = fmt;
	m->next_map = 0;
	xbuf_free(&m->body);
	m->body.max = http_default_limits.max_body;
}

static void job_drop_walk(struct metrics *m)
{
	output_walk_end(m->walk);
	m->walk = NULL;
	family_free(&m->fam);
	memset(&m->fam, 0, sizeof(m->fam));
}

/* One turn of the scrape: at most WALK_BUDGET_US of one map's entries
 * (a map of a few keys is read whole). True when the body is done. */
static bool job_advance(struct metrics *m, uint64_t lost, uint64_t budget_us,
			int *err)
{
	while (!m->walk) {
		if (m->next_map >= m->prog->nmaps) {
			render_own(m, lost);
			return true;
		}
		uint32_t id = m->next_map++;
		if (!m->family[id])
			continue;
		memset(&m->fam, 0, sizeof(m->fam));
		m->fam.m = m;
		m->fam.map_id = id;
		output_map_info(m->prog, id, &m->fam.mi);
		if (!(m->walk = output_walk_begin(m->out, id, 0))) {
			*err = -errno;
			return true;
		}
	}
	int r = output_walk_next(m->walk, budget_us, add_entry, &m->fam);
	if (r < 0) {
		*err = r;
		job_drop_walk(m);
		return true;
	}
	if (r == 1) {
		if (m->fam.n)
			qsort(m->fam.v, m->fam.n, sizeof(*m->fam.v), cmp_group);
		render_family(m, &m->fam, &m->body);
		job_drop_walk(m);
	}
	return false;
}

static void job_finish(struct metrics *m, int err)
{
	size_t len = 0;
	char *data = NULL;
	if (m->body.full && !err)
		err = -EFBIG;
	if (err) {
		if (!m->warned_full)
			log_warn("--metrics: a scrape failed: %s", err == -EFBIG ?
				 "the metrics are larger than 64 MiB" :
				 strerror(-err));
		m->warned_full = true;
		xbuf_free(&m->body);
	} else {
		data = xbuf_take(&m->body, &len);
	}
	http_serve(m->http, m->fmt, data, len);
	m->job = false;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

void metrics_step(struct metrics *m, uint64_t lost)
{
	if (!m || !m->out)
		return;
	m->want = http_step(m->http);
	if (!m->job && m->want)
		job_start(m, m->want & (1u << HTTP_FMT_OPENMETRICS) ?
			  HTTP_FMT_OPENMETRICS : HTTP_FMT_TEXT);
	uint64_t now = now_us();
	uint64_t budget = m->step_end_us ? now - m->step_end_us : 0;
	if (budget < WALK_BUDGET_MIN_US)
		budget = WALK_BUDGET_MIN_US;
	if (budget > WALK_BUDGET_MAX_US)
		budget = WALK_BUDGET_MAX_US;
	if (m->job) {
		int err = 0;
		if (job_advance(m, lost, budget, &err))
			job_finish(m, err);
	}
	m->step_end_us = now_us();
}

bool metrics_busy(const struct metrics *m)
{
	return m && (m->job || m->want);
}

char *metrics_render(struct metrics *m, bool openmetrics, uint64_t lost,
		     size_t *len)
{
	int err = 0;
	job_start(m, openmetrics ? HTTP_FMT_OPENMETRICS : HTTP_FMT_TEXT);
	for (uint32_t id = 0; id < m->prog->nmaps && !err; id++)
		err = render_map(m, id);
	if (!err)
		render_own(m, lost);
	m->job = false;
	if (err || m->body.full) {
		xbuf_free(&m->body);
		errno = err ? -err : EFBIG;
		return NULL;
	}
	return xbuf_take(&m->body, len);
}

/* ---- setup -------------------------------------------------------------- */

/* Whether the list "@a,@b" names map NAME. */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t l = comma ? (size_t)(comma - p) : strlen(p);
		if (l == n && strncmp(p, name, n) == 0)
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

/* Every map --metrics-maps names exists and holds numbers. */
static int check_maps(const struct program *prog, const char *list)
{
	for (const char *p = list; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t l = comma ? (size_t)(comma - p) : strlen(p);
		char name[256];
		struct output_map_info mi;
		int id = -1;
		if (l > 0 && l < sizeof(name)) {
			memcpy(name, p, l);
			name[l] = '\0';
			id = program_find_map(prog, name);
		}
		if (id < 0 || output_map_info(prog, (uint32_t)id, &mi) < 0 ||
		    mi.kind == OUTV_OTHER) {
			log_error("--metrics-maps: '%.*s' is no map of numbers the "
				  "program has", (int)l, p);
			return -EINVAL;
		}
		p = comma ? comma + 1 : NULL;
	}
	return 0;
}

struct metrics *metrics_new(const char *addr, const struct program *prog,
			    const char *maps, const char *const *labels,
			    size_t nlabels)
{
	struct metrics *m = calloc(1, sizeof(*m));
	int err = ENOMEM;
	if (!m)
		return NULL;
	m->prog = prog;
	m->labels = calloc(prog->nmaps ? prog->nmaps : 1, sizeof(*m->labels));
	m->family = calloc(prog->nmaps ? prog->nmaps : 1, sizeof(*m->family));
	if (!m->labels || !m->family)
		goto fail;
	err = EINVAL;      /* what the user wrote is wrong: exit 1 */
	if (check_maps(prog, maps) < 0)
		goto fail;
	for (size_t i = 0; i < nlabels; i++)
		if (parse_labels(m, labels[i]) < 0)
			goto fail;
	for (uint32_t i = 0; i < prog->nmaps; i++) {
		struct output_map_info mi;
		if (output_map_info(prog, i, &mi) < 0)
			continue;
		/* Without a list, every aggregation; a map of plain
		 * integers is mostly state between probes (@start[tid] =
		 * nsecs), exported when a list names it. */
		if (maps ? !listed(maps, mi.name) :
		    (mi.kind == OUTV_INT || mi.kind == OUTV_OTHER)) {
			log_info("--metrics: %s is not exported", mi.name);
			continue;
		}
		if (check_labels(m, i, &mi) < 0)
			goto fail;
		if (!(m->family[i] = family_name(&mi))) {
			err = ENOMEM;
			goto fail;
		}
	}
	if (check_names(m) < 0)
		goto fail;
	if (addr && !(m->http = http_listen(addr, &http_default_limits))) {
		err = errno;
		goto fail;
	}
	return m;
fail:
	metrics_free(m);
	errno = err;
	return NULL;
}

const char *metrics_url(const struct metrics *m)
{
	return m && m->http ? http_url(m->http) : "";
}

void metrics_set_output(struct metrics *m, struct output *o)
{
	if (m)
		m->out = o;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	http_free(m->http);
	for (uint32_t i = 0; m->labels && i < m->prog->nmaps; i++) {
		for (uint32_t j = 0; j < m->labels[i].n; j++)
			free(m->labels[i].names[j]);
		free(m->labels[i].names);
	}
	for (uint32_t i = 0; m->family && i < m->prog->nmaps; i++)
		free(m->family[i]);
	free(m->labels);
	free(m->family);
	job_drop_walk(m);
	xbuf_free(&m->body);
	free(m);
}
