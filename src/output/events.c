/* events.c - the output object and the dispatch of ring-buffer records:
 * printf, print, clear/zero, exit, time, join, cat, system; plus the
 * "Attaching" line, lost events and run-time messages. */
#include "output_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/log.h"

struct output *output_new(const struct program *prog,
			  const struct output_opts *opts,
			  const struct map_reader *maps)
{
	if (!prog || !opts) {
		errno = EINVAL;
		return NULL;
	}
	struct output *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->prog = prog;
	o->opts = *opts;
	if (!o->opts.out)
		o->opts.out = stdout;
	o->fmt = output_format_find(o->opts.format ? o->opts.format : "text");
	if (!o->fmt) {
		free(o);
		errno = EINVAL;
		return NULL;
	}
	if (prog->dtrace.on && o->fmt->d_layout)
		o->fmt = o->fmt->d_layout;
	if (maps) {
		o->maps = *maps;
		o->have_maps = true;
	}
	o->boottime_ok = resolve_boot_time(&o->boottime) == 0;
	return o;
}

void output_free(struct output *o)
{
	if (!o)
		return;
	if (o->commands_skipped && !o->opts.no_warnings)
		log_warn("%llu system() command%s not run: the run was ending "
			 "on a signal", (unsigned long long)o->commands_skipped,
			 o->commands_skipped == 1 ? "" : "s");
	if (o->compact_lost)
		log_info("maps: %llu sample entries lost while merged into a "
			 "full map (a probe's new key took the slot)",
			 (unsigned long long)o->compact_lost);
	dspec_free(o);
	dtrace_faults_end(o);
	free(o->map_warned);
	free(o->dtrace_printed);
	free(o->flow_indent);
	free(o->flow_last);
	free(o->dtrace_normal);
	sbuf_free(&o->scratch_text);
	sbuf_free(&o->scratch_line);
	stacks_free(o->stacks);
	resolve_cache_free(o->cgroups);
	free(o);
}

void output_on_fault(struct output *o,
		     int (*fn)(void *ctx, const uint64_t args[6]), void *ctx)
{
	o->on_fault = fn;
	o->fault_ctx = ctx;
}

void output_set_hooks(struct output *o, const struct output_hooks *h)
{
	if (!o)
		return;
	if (h) {
		o->hooks = *h;
		o->have_hooks = true;
	} else {
		o->have_hooks = false;
	}
}

int output_write(struct output *o, const struct sbuf *b)
{
	if (b->oom)
		return -ENOMEM;
	if (b->n && fwrite(b->s, 1, b->n, o->opts.out) != b->n)
		return -EIO;
	if (b->n)
		o->line_open = b->s[b->n - 1] != '\n';
	return 0;
}

void output_attaching(struct output *o, unsigned nprobes)
{
	if (!o)
		return;
	struct sbuf b = { 0 };
	o->fmt->attaching(o, &b, nprobes);
	output_write(o, &b);
	sbuf_free(&b);
}

void output_stop_commands(struct output *o)
{
	if (o)
		o->no_commands = true;
}

void output_lost(struct output *o, uint64_t n)
{
	if (!o)
		return;
	o->lost += n;
	struct sbuf b = { 0 };
	o->fmt->lost(o, &b, n);
	output_write(o, &b);
	sbuf_free(&b);
}

void output_bench(struct output *o, const char *const *names,
		  const uint64_t *avg_ns, const uint64_t *iters, size_t n)
{
	if (!o)
		return;
	struct sbuf b = { 0 };
	if (strcmp(o->fmt->name, "json") == 0) {
		for (size_t i = 0; i < n; i++) {
			sbuf_puts(&b, "{\"type\": \"benchmark_result\", "
				  "\"data\": {");
			json_str(&b, names[i], strlen(names[i]));
			sbuf_printf(&b, ": {\"average\": %llu, \"iters\": "
				    "%llu}}}\n", (unsigned long long)avg_ns[i],
				    (unsigned long long)iters[i]);
		}
	} else {
		/* the name column at least 40 wide, as 0.26's */
		int w = 40;
		for (size_t i = 0; i < n; i++)
			if (strlen(names[i]) > (size_t)w && strlen(names[i]) < 4096)
				w = (int)strlen(names[i]);
		sbuf_printf(&b, "%-*s%-15s%s\n", w + 1, "Benchmark", "Time(ns)",
			    "Iterations");
		for (int k = 0; k < w + 1 + 15 + 10; k++)
			sbuf_putc(&b, '-');
		sbuf_putc(&b, '\n');
		for (size_t i = 0; i < n; i++)
			sbuf_printf(&b, "%-*s%-15llu%llu\n", w + 1, names[i],
				    (unsigned long long)avg_ns[i],
				    (unsigned long long)iters[i]);
	}
	output_write(o, &b);
	sbuf_free(&b);
}

void output_message(struct output *o, const char *level, const char *msg)
{
	if (!level)
		level = "error";
	if (!msg)
		msg = "";
	const struct output_format *f = o ? o->fmt : &output_format_text;
	struct sbuf b = { 0 };
	f->message(o, &b, level, msg);
	if (o)
		output_write(o, &b);
	sbuf_free(&b);
}

/* bpftrace 0.17 has no words for this (with -k it repeats "Failed to
 * map_update_elem: Argument list too long (-7)" at every failure), so
 * sonde says it once per map, naming the map and the way out; under
 * --dialect=0.26 in 0.26's words. */
void output_check_maps(struct output *o)
{
	if (!o || !o->have_maps || !o->maps.failures)
		return;
	for (uint32_t i = 0; i < o->prog->nmaps; i++) {
		const struct map_spec *m = &o->prog->maps[i];
		if (m->name[0] != '@' || (o->map_warned && o->map_warned[i]))
			continue;
		uint64_t n = o->maps.failures(o->maps.ctx, i);
		if (!n)
			continue;
		if (!o->map_warned) {
			o->map_warned = calloc(o->prog->nmaps, 1);
			if (!o->map_warned)
				return;
		}
		o->map_warned[i] = 1;
		uint32_t cap = o->maps.capacity ?
			o->maps.capacity(o->maps.ctx, i) : 0;
		char msg[512], size[48] = "";
		if (cap)
			snprintf(size, sizeof(size), " (%u entries)", cap);
		if (o->prog->dialect >= DIALECT_026)
			/* 0.26's words (its map tests look for them), said
			 * once per map as sonde does, not at every failure */
			snprintf(msg, sizeof(msg), "Map full; can't update "
				 "element. Try increasing max_map_keys config "
				 "or manually setting the max entries in a map "
				 "declaration e.g. `let %s = hash(5000)`",
				 m->name);
		else
			snprintf(msg, sizeof(msg), "map %s is full%s: %llu "
				 "update%s failed, new keys are dropped "
				 "(BPFTRACE_MAP_KEYS_MAX raises the limit)",
				 m->name, size, (unsigned long long)n,
				 n == 1 ? "" : "s");
		output_message(o, "warning", msg);
	}
}

/* ---- events --------------------------------------------------------- */

/* Scratch memory kept between records, at most this much: a record's
 * line is small, but cat() and system() can make one of any size. */
#define SCRATCH_KEEP (64u << 10)

/* An empty scratch buffer of o's (its memory kept, unless large). */
static struct sbuf *scratch(struct sbuf *b)
{
	if (b->cap > SCRATCH_KEEP)
		sbuf_free(b);
	b->n = 0;
	b->oom = false;
	if (b->s)
		b->s[0] = '\0';
	return b;
}

/* An event whose output is text, in the chosen format. */
static int emit(struct output *o, const char *type, struct sbuf *text,
		bool newline)
{
	if (text->oom)
		return -ENOMEM;
	struct sbuf *b = scratch(&o->scratch_line);
	o->fmt->text_event(o, b, type, text->s ? text->s : "", text->n,
			   newline);
	return output_write(o, b);
}

static int ev_print_value(struct output *o, const struct event_spec *e,
			  const uint8_t *d)
{
	const struct type *t = e->args;
	if (!t)
		return -EINVAL;
	if (t->kind == TYPE_TUPLE && t->nfields == 1) {
		d += t->offsets[0];
		t = t->fields[0];
	}
	struct sbuf b = { 0 };
	o->fmt->print_value(o, &b, t, d);
	int r = output_write(o, &b);
	sbuf_free(&b);
	return r;
}

static int ev_time(struct output *o, const struct event_spec *e)
{
	char buf[1024];
	time_t now = time(NULL);
	struct tm tm;
	if (!localtime_r(&now, &tm))
		return -errno;
	const char *fmt = e->fmt ? e->fmt : "%H:%M:%S\n";
	size_t n = strftime(buf, sizeof(buf), fmt, &tm);
	if (n == 0 && *fmt) {
		output_message(o, "error", "time(): the formatted time is empty "
			       "or longer than 1023 bytes");
		return 0;
	}
	struct sbuf b = { 0 };
	sbuf_put(&b, buf, n);
	int r = emit(o, "time", &b, false);
	sbuf_free(&b);
	return r;
}

/* join(): the strings up to the first empty one, with the delimiter. */
static int ev_join(struct output *o, const struct event_spec *e,
		   const uint8_t *d)
{
	const struct type *t = e->args;
	const char *delim = e->fmt ? e->fmt : " ";
	struct sbuf b = { 0 };
	uint32_t n = t->kind == TYPE_TUPLE ? t->nfields : 1;
	for (uint32_t i = 0; i < n; i++) {
		const struct type *ft = t->kind == TYPE_TUPLE ? t->fields[i] : t;
		const char *s = (const char *)d +
			(t->kind == TYPE_TUPLE ? t->offsets[i] : 0);
		if (ft->kind != TYPE_STR)
			continue;
		size_t len = strnlen(s, ft->size);
		if (len == 0)
			break;
		if (i)
			sbuf_puts(&b, delim);
		sbuf_put(&b, s, len);
	}
	int r = emit(o, "join", &b, true);
	sbuf_free(&b);
	return r;
}

/* bpftrace's cat() reads at most BPFTRACE_CAT_BYTES_MAX (10 KiB). */
#define CAT_BYTES_DEFAULT 10240

static int read_stream(FILE *f, struct sbuf *b, uint64_t max)
{
	char chunk[4096];
	size_t n;
	while (max && (n = fread(chunk, 1, max < sizeof(chunk) ? max :
				 sizeof(chunk), f)) > 0) {
		sbuf_put(b, chunk, n);
		max -= n;
	}
	return ferror(f) ? -EIO : 0;
}

static int ev_cat(struct output *o, const struct event_spec *e,
		  const uint8_t *d, size_t size)
{
	struct sbuf path = { 0 }, b = { 0 };
	int r = fmt_format(o, &path, e->fmt, e->args, d, size);
	if (r < 0 || path.oom) {
		sbuf_free(&path);
		return r < 0 ? r : -ENOMEM;
	}
	FILE *f = fopen(path.s ? path.s : "", "r");
	if (!f) {
		/* bpftrace: on stderr, whatever the format (a JSON line
		 * with -f json); JSON still gets an empty cat record. */
		int err = errno;
		struct sbuf m = { 0 };
		/* 0.26's words (its runtime tests): the reason in
		 * parentheses */
		sbuf_printf(&m, o->prog->dialect >= DIALECT_026 ?
			    "failed to open file '%s' (%s)" :
			    "failed to open file '%s': %s",
			    path.s ? path.s : "", strerror(err));
		o->fmt->error_stderr(o, m.s ? m.s : "");
		sbuf_free(&m);
	} else {
		read_stream(f, &b, o->opts.cat_bytes_max ?
			    o->opts.cat_bytes_max : CAT_BYTES_DEFAULT);
		fclose(f);
	}
	r = emit(o, "cat", &b, false);
	sbuf_free(&path);
	sbuf_free(&b);
	return r;
}

static int ev_system(struct output *o, const struct event_spec *e,
		     const uint8_t *d, size_t size)
{
	if (!o->opts.unsafe) {
		output_message(o, "error", "system() needs --unsafe");
		return 0;
	}
	if (o->no_commands) {
		o->commands_skipped++;
		return 0;
	}
	struct sbuf cmd = { 0 }, b = { 0 };
	int r = fmt_format(o, &cmd, e->fmt, e->args, d, size);
	if (r < 0 || cmd.oom) {
		sbuf_free(&cmd);
		return r < 0 ? r : -ENOMEM;
	}
	fflush(o->opts.out);
	/* popen runs the command through /bin/sh -c. */
	FILE *p = popen(cmd.s ? cmd.s : "", "r");
	if (!p) {
		char msg[256];
		snprintf(msg, sizeof(msg), "system(): %s", strerror(errno));
		output_message(o, "error", msg);
	} else {
		read_stream(p, &b, UINT64_MAX);
		pclose(p);
	}
	r = emit(o, "syscall", &b, false);
	sbuf_free(&cmd);
	sbuf_free(&b);
	return r;
}

static int map_op(struct output *o, const struct event_spec *e, bool clear)
{
	if (e->map_id < 0 || (uint32_t)e->map_id >= o->prog->nmaps ||
	    !o->have_maps)
		return -EINVAL;
	/* bpftrace 0.17 zeroes a count() map without keys on clear(),
	 * so `@ = count(); clear(@)` still prints "@: 0" (observed);
	 * 0.26 clears it as any map (its test basic "clear count-map").
	 * D's trunc(@) removes it: nothing is printed. */
	const struct map_spec *m = &o->prog->maps[e->map_id];
	if (clear && !o->prog->dtrace.on && !m->key_type && m->value_type &&
	    o->prog->dialect < DIALECT_026 &&
	    m->value_type->kind == TYPE_COUNT)
		clear = false;
	int (*op)(void *, uint32_t) = clear ? o->maps.clear : o->maps.zero;
	if (!op)
		return -ENOTSUP;
	return op(o->maps.ctx, (uint32_t)e->map_id);
}

/* errorf()/warnf(): "FILE:LINE:COL-END: ERROR: text", the script's line
 * and a '~' underline, on stderr (bpftrace 0.24's words and place); in
 * JSON, bpftrace's error or warning record. */
static int ev_errorf(struct output *o, const struct event_spec *e,
		     const uint8_t *d, size_t size)
{
	bool err = e->kind == EV_ERRORF;
	if (!err && o->opts.no_warnings)
		return 0;
	struct sbuf *t = scratch(&o->scratch_text);
	int r = fmt_format(o, t, e->fmt, e->args, d, size);
	if (r < 0)
		return r;
	while (t->n && t->s[t->n - 1] == '\n')
		t->n--;
	struct sbuf m = { 0 };
	r = o->fmt->script_message(o, &m, e, err, t->s ? t->s : "", t->n);
	if (r >= 0 && m.n)
		r = output_write(o, &m);
	sbuf_free(&m);
	return r < 0 ? r : 0;
}

int output_exit_code(const struct output *o)
{
	return o && o->exit_code_set ? o->exit_code : -1;
}

int output_event(struct output *o, const void *data, size_t size)
{
	if (!o || !data || size < 8)
		return -EINVAL;
	uint64_t id;
	memcpy(&id, data, sizeof(id));
	if (id >> 32 && o->prog->dtrace.speculates)
		return dspec_record(o, (uint32_t)(id >> 32), data, size);
	if (id >= o->prog->nevents)
		return -EINVAL;
	const struct event_spec *e = &o->prog->events[id];
	const uint8_t *d = (const uint8_t *)data + 8;
	size -= 8;
	/* A record shorter than its arguments is an error, never a read
	 * past its end. */
	if (e->args && size < e->args->size)
		return -EINVAL;
	struct sbuf b = { 0 };
	int r;
	switch (e->kind) {
	case EV_PRINTF: {
		struct sbuf *t = scratch(&o->scratch_text);
		r = fmt_format(o, t, e->fmt, e->args, d, size);
		return r < 0 ? r : emit(o, "printf", t, false);
	}
	case EV_PRINT_MAP:
		if (e->map_id < 0)
			return -EINVAL;
		return maps_print(o, (uint32_t)e->map_id, e->top, e->div);
	case EV_PRINT_VALUE:
		return ev_print_value(o, e, d);
	case EV_DTRACE_PROBE:
		return dtrace_probe_line(o, e, d, size);
	case EV_DTRACE_PRINTA:
		return dtrace_printa(o, e);
	case EV_DTRACE_TRACEMEM:
		return dtrace_tracemem(o, e, d, size);
	case EV_DTRACE_FAULT:
		return dtrace_fault(o, e, d, size);
	case EV_DTRACE_NORMALIZE:
	case EV_DTRACE_TRUNC:
		return dtrace_map_op(o, e, d);
	case EV_DTRACE_COMMIT:
	case EV_DTRACE_DISCARD: {
		uint64_t spec;
		if (!e->args || size < 8)
			return -EINVAL;
		memcpy(&spec, d + e->args->offsets[0], sizeof(spec));
		return dspec_end(o, (uint32_t)spec,
				 e->kind == EV_DTRACE_COMMIT);
	}
	case EV_CLEAR_MAP:
		return map_op(o, e, true);
	case EV_ZERO_MAP:
		return map_op(o, e, false);
	case EV_EXIT:
		if (e->args && !o->exit_code_set) {   /* exit(CODE) */
			int64_t code;
			memcpy(&code, d + e->args->offsets[0], sizeof(code));
			o->exit_code = (int)(code & 0xff);
			o->exit_code_set = true;
		}
		return 1;
	case EV_TIME:
		return ev_time(o, e);
	case EV_JOIN:
		if (!e->args)
			return -EINVAL;
		return ev_join(o, e, d);
	case EV_CAT:
		return ev_cat(o, e, d, size);
	case EV_SYSTEM:
		return ev_system(o, e, d, size);
	case EV_USTACK:
		return o->stacks ? stacks_sample(o->stacks, data, size + 8) : 0;
	case EV_HELPER_ERROR: {
		int64_t ret;
		if (size < 8)
			return -EINVAL;
		if (o->opts.no_warnings)
			return 0;
		memcpy(&ret, d, 8);
		o->fmt->helper_error(o, &b, e, ret);
		r = output_write(o, &b);
		sbuf_free(&b);
		return r;
	}
	case EV_NEW_PID: {
		int64_t pid;
		if (size < 8)
			return -EINVAL;
		memcpy(&pid, d, 8);
		stacks_new_pid(o->stacks, pid);
		return 0;
	}
	case EV_WATCH:
	case EV_UNWATCH:
		return 0;    /* the engine's: it acts on them before output */
	case EV_ERRORF:
	case EV_WARNF:
		return ev_errorf(o, e, d, size);
	}
	return -EINVAL;
}
