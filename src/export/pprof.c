/* pprof.c - the pprof profile of the stack-keyed maps (pprof.h): the
 * tables (strings, functions, mappings, locations) built while the maps
 * are walked, the message packed by protobuf-c's generated encoder
 * (profile.proto) and gzipped with zlib. */
#include "pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "../base/log.h"
#include "../base/vec.h"
#include "profile.pb-c.h"

/* ---- interning: one open-addressing table serves every kind --------- */

struct itab {
	uint64_t *hash;
	uint32_t *slot;      /* item index + 1, 0 empty */
	size_t cap, n;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ull;
	return h;
}

static void itab_free(struct itab *t)
{
	free(t->hash);
	free(t->slot);
}

/* Grow so one more fits: false on allocation failure. */
static bool itab_room(struct itab *t)
{
	if (2 * (t->n + 1) <= t->cap)
		return true;
	size_t cap = t->cap ? t->cap * 2 : 256;
	uint64_t *h = calloc(cap, sizeof(*h));
	uint32_t *s = calloc(cap, sizeof(*s));
	if (!h || !s) {
		free(h);
		free(s);
		return false;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slot[i])
			continue;
		size_t j = t->hash[i] & (cap - 1);
		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = t->slot[i];
		h[j] = t->hash[i];
	}
	free(t->hash);
	free(t->slot);
	t->hash = h;
	t->slot = s;
	t->cap = cap;
	return true;
}

/* ---- the profile being built ---------------------------------------- */

struct mapping {
	uint64_t start, end, pgoff;
	int64_t file, build_id;    /* strings */
	uint64_t lo, hi;           /* addresses seen (kernel: its range) */
	bool kernel;
};

struct location {
	uint64_t mapping;          /* id, 0: none */
	uint64_t addr;
	uint64_t function;         /* id, 0: unnamed */
};

struct sample {
	uint64_t *locs;
	size_t nlocs;
	uint32_t type;             /* sample type (map) index */
	int64_t value;
	Perftools__Profiles__Label *labels;
	size_t nlabels;
};

struct profile {
	char **strs;
	size_t nstrs, cap_strs;
	struct itab istr;
	int64_t *func_name;        /* per function: its name string */
	size_t nfuncs, cap_funcs;
	struct itab ifunc;
	struct mapping *maps;
	size_t nmaps, cap_maps;
	struct itab imap;
	struct location *locs;
	size_t nlocs, cap_locs;
	struct itab iloc;
	struct sample *samples;
	size_t nsamples, cap_samples;
	uint32_t ntypes;
	int err;
};

#define GROW(arr, n, cap) (vec_reserve_arr((arr), (cap), (n) + 1) == 0)

static int64_t str_id(struct profile *p, const char *s)
{
	if (!s)
		s = "";
	uint64_t h = hash_bytes(1469598103934665603ull, s, strlen(s));
	if (!itab_room(&p->istr))
		goto oom;
	size_t j = h & (p->istr.cap - 1);
	for (; p->istr.slot[j]; j = (j + 1) & (p->istr.cap - 1))
		if (p->istr.hash[j] == h &&
		    strcmp(p->strs[p->istr.slot[j] - 1], s) == 0)
			return p->istr.slot[j] - 1;
	if (!GROW(p->strs, p->nstrs, p->cap_strs) || !(p->strs[p->nstrs] = strdup(s)))
		goto oom;
	p->istr.slot[j] = (uint32_t)++p->nstrs;
	p->istr.hash[j] = h;
	p->istr.n++;
	return (int64_t)p->nstrs - 1;
oom:
	p->err = -ENOMEM;
	return 0;
}

static uint64_t function_id(struct profile *p, const char *name)
{
	int64_t s = str_id(p, name);
	uint64_t h = mix(7, (uint64_t)s);
	if (p->err || !itab_room(&p->ifunc))
		goto oom;
	size_t j = h & (p->ifunc.cap - 1);
	for (; p->ifunc.slot[j]; j = (j + 1) & (p->ifunc.cap - 1))
		if (p->func_name[p->ifunc.slot[j] - 1] == s)
			return p->ifunc.slot[j];
	if (!GROW(p->func_name, p->nfuncs, p->cap_funcs))
		goto oom;
	p->func_name[p->nfuncs] = s;
	p->ifunc.slot[j] = (uint32_t)++p->nfuncs;
	p->ifunc.hash[j] = h;
	p->ifunc.n++;
	return p->nfuncs;
oom:
	p->err = -ENOMEM;
	return 0;
}

static char *hex(const uint8_t *b, size_t n)
{
	char *s = malloc(2 * n + 1);
	for (size_t i = 0; s && i < n; i++)
		sprintf(s + 2 * i, "%02x", b[i]);
	if (s)
		s[2 * n] = '\0';
	return s;
}

static uint64_t mapping_id(struct profile *p, const struct output_frame *f)
{
	if (!f->file)
		return 0;
	int64_t file = str_id(p, f->file), bid = 0;
	if (f->build_id_len) {
		char *h = hex(f->build_id, f->build_id_len);
		bid = h ? str_id(p, h) : 0;
		free(h);
	}
	/* a kernel file is one mapping whatever the address; a user one
	 * is the range a process mapped it at */
	uint64_t start = f->kernel ? 0 : f->start;
	uint64_t h = mix(mix(mix(mix(1, (uint64_t)file), start),
			     f->kernel ? 0 : f->pgoff), f->kernel);
	if (p->err || !itab_room(&p->imap))
		goto oom;
	size_t j = h & (p->imap.cap - 1);
	for (; p->imap.slot[j]; j = (j + 1) & (p->imap.cap - 1)) {
		struct mapping *m = &p->maps[p->imap.slot[j] - 1];
		if (m->file == file && m->start == start && m->kernel == f->kernel &&
		    (f->kernel || m->pgoff == f->pgoff)) {
			if (f->addr < m->lo)
				m->lo = f->addr;
			if (f->addr > m->hi)
				m->hi = f->addr;
			return p->imap.slot[j];
		}
	}
	if (!GROW(p->maps, p->nmaps, p->cap_maps))
		goto oom;
	p->maps[p->nmaps] = (struct mapping){
		.start = start, .end = f->kernel ? 0 : f->end,
		.pgoff = f->kernel ? 0 : f->pgoff, .file = file, .build_id = bid,
		.lo = f->addr, .hi = f->addr, .kernel = f->kernel,
	};
	p->imap.slot[j] = (uint32_t)++p->nmaps;
	p->imap.hash[j] = h;
	p->imap.n++;
	return p->nmaps;
oom:
	p->err = -ENOMEM;
	return 0;
}

static uint64_t location_id(struct profile *p, const struct output_frame *f)
{
	uint64_t map = mapping_id(p, f);
	/* one location per address of a mapping; a frame nothing maps
	 * (JIT code, a process gone) is told apart by its process */
	uint64_t who = map ? 0 : (uint64_t)(uint32_t)f->pid + 1;
	uint64_t h = mix(mix(mix(3, map), f->addr), who);
	if (p->err || !itab_room(&p->iloc))
		goto oom;
	size_t j = h & (p->iloc.cap - 1);
	for (; p->iloc.slot[j]; j = (j + 1) & (p->iloc.cap - 1))
		if (p->iloc.hash[j] == h) {
			struct location *l = &p->locs[p->iloc.slot[j] - 1];
			if (l->mapping == map && l->addr == f->addr)
				return p->iloc.slot[j];
		}
	uint64_t fn = f->name ? function_id(p, f->name) : 0;
	if (p->err || !GROW(p->locs, p->nlocs, p->cap_locs))
		goto oom;
	p->locs[p->nlocs] = (struct location){ map, f->addr, fn };
	p->iloc.slot[j] = (uint32_t)++p->nlocs;
	p->iloc.hash[j] = h;
	p->iloc.n++;
	return p->nlocs;
oom:
	p->err = -ENOMEM;
	return 0;
}

/* ---- reading the maps -------------------------------------------------- */

struct walk_ctx {
	struct profile *p;
	struct output_map_info mi;
	const struct program *prog;
	uint32_t map_id, type;
	int64_t *label_keys;       /* per key field */
};

static int add_sample(void *arg, const struct output_entry *e)
{
	struct walk_ctx *w = arg;
	struct profile *p = w->p;
	int64_t v = (int64_t)e->value;
	/* as --flamegraph weighs them: what is not positive draws nothing */
	if (v <= 0 || (!w->mi.is_signed && e->value > INT64_MAX))
		return 0;
	if (!GROW(p->samples, p->nsamples, p->cap_samples))
		return -ENOMEM;
	struct sample *s = &p->samples[p->nsamples];
	memset(s, 0, sizeof(*s));
	s->type = w->type;
	s->value = v;
	s->locs = calloc(e->nframes ? e->nframes : 1, sizeof(*s->locs));
	s->labels = calloc(w->mi.nfields ? w->mi.nfields : 1, sizeof(*s->labels));
	if (!s->locs || !s->labels) {
		free(s->locs);
		free(s->labels);
		return -ENOMEM;
	}
	p->nsamples++;
	for (size_t i = 0; i < e->nframes; i++)
		s->locs[s->nlocs++] = location_id(p, &e->frames[i]);
	for (uint32_t i = 0; i < w->mi.nfields; i++) {
		if (!e->fields[i])
			continue;
		Perftools__Profiles__Label *l = &s->labels[s->nlabels++];
		perftools__profiles__label__init(l);
		l->key = w->label_keys[i];
		l->str = str_id(p, e->fields[i]);
	}
	return p->err;
}

static bool qualifies(const struct output_map_info *mi)
{
	return mi->nstacks && (mi->kind == OUTV_COUNT || mi->kind == OUTV_SUM ||
			       mi->kind == OUTV_INT);
}

/* The unit of a map's values (pprof.h). */
static const char *unit_of(const struct pprof_opts *o,
			   const struct output_map_info *mi)
{
	size_t nl = strlen(mi->name);
	for (size_t i = 0; o && i < o->nunits; i++) {
		const char *u = o->units[i];
		if (strncmp(u, mi->name, nl) == 0 && u[nl] == ':')
			return u + nl + 1;
	}
	if (mi->kind == OUTV_COUNT)
		return "count";
	static const struct { const char *suffix, *unit; } by_name[] = {
		{ "_ns", "nanoseconds" }, { "_nsecs", "nanoseconds" },
		{ "_us", "microseconds" }, { "_usecs", "microseconds" },
		{ "_ms", "milliseconds" }, { "_msecs", "milliseconds" },
		{ "_bytes", "bytes" },
	};
	for (size_t i = 0; i < sizeof(by_name) / sizeof(by_name[0]); i++) {
		size_t sl = strlen(by_name[i].suffix);
		if (nl > sl && strcmp(mi->name + nl - sl, by_name[i].suffix) == 0)
			return by_name[i].unit;
	}
	return "count";
}

int pprof_check(const struct program *prog, const char *const *units,
		size_t nunits)
{
	for (size_t i = 0; i < nunits; i++) {
		const char *u = units[i], *colon = strchr(u, ':');
		char name[256];
		if (u[0] != '@' || !colon || !colon[1] ||
		    (size_t)(colon - u) >= sizeof(name)) {
			log_error("--pprof-unit %s: expected @MAP:UNIT", u);
			return -EINVAL;
		}
		memcpy(name, u, (size_t)(colon - u));
		name[colon - u] = '\0';
		int id = program_find_map(prog, name);
		struct output_map_info mi;
		if (id < 0 || output_map_info(prog, (uint32_t)id, &mi) < 0 ||
		    !qualifies(&mi)) {
			log_error("--pprof-unit %s: %s is not a map keyed by a stack "
				  "with count(), sum() or integer values", u, name);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- the message -------------------------------------------------------- */

static void profile_free(struct profile *p)
{
	for (size_t i = 0; i < p->nstrs; i++)
		free(p->strs[i]);
	free(p->strs);
	free(p->func_name);
	free(p->maps);
	free(p->locs);
	for (size_t i = 0; i < p->nsamples; i++) {
		free(p->samples[i].locs);
		free(p->samples[i].labels);
	}
	free(p->samples);
	itab_free(&p->istr);
	itab_free(&p->ifunc);
	itab_free(&p->imap);
	itab_free(&p->iloc);
}

/* Pack P (with its sample types) and write it gzipped to F. */
static int pack_and_write(struct profile *p, Perftools__Profiles__ValueType *types,
			  int64_t duration_ns, FILE *f)
{
	Perftools__Profiles__Profile msg = PERFTOOLS__PROFILES__PROFILE__INIT;
	int r = -ENOMEM;
	size_t nt = p->ntypes;
	Perftools__Profiles__ValueType **tp = calloc(nt, sizeof(*tp));
	Perftools__Profiles__Sample *sv = calloc(p->nsamples + 1, sizeof(*sv));
	Perftools__Profiles__Sample **sp = calloc(p->nsamples + 1, sizeof(*sp));
	int64_t *vals = calloc((p->nsamples + 1) * nt, sizeof(*vals));
	Perftools__Profiles__Label ***lp = calloc(p->nsamples + 1, sizeof(*lp));
	Perftools__Profiles__Mapping *mv = calloc(p->nmaps + 1, sizeof(*mv));
	Perftools__Profiles__Mapping **mp = calloc(p->nmaps + 1, sizeof(*mp));
	Perftools__Profiles__Location *lv = calloc(p->nlocs + 1, sizeof(*lv));
	Perftools__Profiles__Location **lpp = calloc(p->nlocs + 1, sizeof(*lpp));
	Perftools__Profiles__Line *linev = calloc(p->nlocs + 1, sizeof(*linev));
	Perftools__Profiles__Line **linep = calloc(p->nlocs + 1, sizeof(*linep));
	Perftools__Profiles__Function *fv = calloc(p->nfuncs + 1, sizeof(*fv));
	Perftools__Profiles__Function **fp = calloc(p->nfuncs + 1, sizeof(*fp));
	uint8_t *buf = NULL;
	if (!tp || !sv || !sp || !vals || !lp || !mv || !mp || !lv || !lpp ||
	    !linev || !linep || !fv || !fp)
		goto out;
	for (size_t i = 0; i < nt; i++)
		tp[i] = &types[i];
	for (size_t i = 0; i < p->nsamples; i++) {
		struct sample *s = &p->samples[i];
		perftools__profiles__sample__init(&sv[i]);
		sv[i].n_location_id = s->nlocs;
		sv[i].location_id = s->locs;
		sv[i].n_value = nt;
		sv[i].value = vals + i * nt;
		sv[i].value[s->type] = s->value;
		if (s->nlabels) {
			lp[i] = calloc(s->nlabels, sizeof(*lp[i]));
			if (!lp[i])
				goto out;
			for (size_t k = 0; k < s->nlabels; k++)
				lp[i][k] = &s->labels[k];
			sv[i].n_label = s->nlabels;
			sv[i].label = lp[i];
		}
		sp[i] = &sv[i];
	}
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct mapping *m = &p->maps[i];
		perftools__profiles__mapping__init(&mv[i]);
		mv[i].id = i + 1;
		/* a kernel file's range: the addresses its frames had */
		mv[i].memory_start = m->kernel ? m->lo : m->start;
		mv[i].memory_limit = m->kernel ? m->hi + 1 : m->end;
		mv[i].file_offset = m->pgoff;
		mv[i].filename = m->file;
		mv[i].build_id = m->build_id;
		mv[i].has_functions = true;   /* named here, as far as can be */
		mp[i] = &mv[i];
	}
	for (size_t i = 0; i < p->nlocs; i++) {
		const struct location *l = &p->locs[i];
		perftools__profiles__location__init(&lv[i]);
		lv[i].id = i + 1;
		lv[i].mapping_id = l->mapping;
		lv[i].address = l->addr;
		if (l->function) {
			perftools__profiles__line__init(&linev[i]);
			linev[i].function_id = l->function;
			linep[i] = &linev[i];
			lv[i].n_line = 1;
			lv[i].line = &linep[i];
		}
		lpp[i] = &lv[i];
	}
	for (size_t i = 0; i < p->nfuncs; i++) {
		perftools__profiles__function__init(&fv[i]);
		fv[i].id = i + 1;
		fv[i].name = p->func_name[i];
		fv[i].system_name = p->func_name[i];
		fp[i] = &fv[i];
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	msg.n_sample_type = nt;
	msg.sample_type = tp;
	msg.n_sample = p->nsamples;
	msg.sample = sp;
	msg.n_mapping = p->nmaps;
	msg.mapping = mp;
	msg.n_location = p->nlocs;
	msg.location = lpp;
	msg.n_function = p->nfuncs;
	msg.function = fp;
	msg.n_string_table = p->nstrs;
	msg.string_table = p->strs;
	msg.time_nanos = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - duration_ns;
	msg.duration_nanos = duration_ns;
	msg.default_sample_type = types[0].type;
	size_t len = perftools__profiles__profile__get_packed_size(&msg);
	buf = malloc(len ? len : 1);
	if (!buf)
		goto out;
	perftools__profiles__profile__pack(&msg, buf);
	r = 0;
	/* gzip, as pprof writes its profiles */
	z_stream z = { 0 };
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		r = -ENOMEM;
		goto out;
	}
	z.next_in = buf;
	z.avail_in = (uInt)len;
	unsigned char chunk[65536];
	int zr;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, Z_FINISH);
		size_t n = sizeof(chunk) - z.avail_out;
		if (n && fwrite(chunk, 1, n, f) != n) {
			r = -errno ? -errno : -EIO;
			break;
		}
	} while (zr == Z_OK);
	if (r == 0 && zr != Z_STREAM_END)
		r = -EIO;
	deflateEnd(&z);
out:
	for (size_t i = 0; lp && i < p->nsamples; i++)
		free(lp[i]);
	free(buf);
	free(tp);
	free(sv);
	free(sp);
	free(vals);
	free(lp);
	free(mv);
	free(mp);
	free(lv);
	free(lpp);
	free(linev);
	free(linep);
	free(fv);
	free(fp);
	return r;
}

int pprof_write(struct output *o, FILE *f, const struct pprof_opts *opts)
{
	const struct program *prog = output_program(o);
	if (!prog)
		return -EINVAL;
	struct profile p = { 0 };
	str_id(&p, "");           /* string 0 is the empty string */
	Perftools__Profiles__ValueType *types =
		calloc(prog->nmaps ? prog->nmaps : 1, sizeof(*types));
	if (!types)
		return -ENOMEM;
	int r = 0;
	for (uint32_t id = 0; id < prog->nmaps && r == 0; id++) {
		struct walk_ctx w = { .p = &p, .prog = prog, .map_id = id };
		if (output_map_info(prog, id, &w.mi) < 0 || !qualifies(&w.mi))
			continue;
		w.type = p.ntypes++;
		perftools__profiles__value_type__init(&types[w.type]);
		types[w.type].type = str_id(&p, w.mi.name[1] ? w.mi.name + 1 : "samples");
		types[w.type].unit = str_id(&p, unit_of(opts, &w.mi));
		/* labels: key, or key0, key1, ... by field */
		w.label_keys = calloc(w.mi.nfields ? w.mi.nfields : 1,
				      sizeof(*w.label_keys));
		if (!w.label_keys) {
			r = -ENOMEM;
			break;
		}
		for (uint32_t i = 0; i < w.mi.nfields; i++) {
			char name[32];
			if (w.mi.nfields == 1)
				snprintf(name, sizeof(name), "key");
			else
				snprintf(name, sizeof(name), "key%u", i);
			w.label_keys[i] = str_id(&p, name);
		}
		r = output_map_walk(o, id, OUTPUT_WALK_MAPPINGS, add_sample, &w);
		free(w.label_keys);
		if (r == 0)
			r = p.err;
	}
	if (r == 0 && p.ntypes == 0)
		r = -ENOENT;
	if (r == 0)
		r = pack_and_write(&p, types, opts ? opts->duration_ns : 0, f);
	profile_free(&p);
	free(types);
	return r;
}
