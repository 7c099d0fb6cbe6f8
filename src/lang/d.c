/* d.c - DTrace's D language as a front end (frontend.h): pragmas and
 * -x options, clauses (d_parser.c), and each probe description
 * provider:module:function:name turned into the attach points of the
 * providers sonde has, the way Oracle's DTrace for Linux maps them:
 *
 *   dtrace:::BEGIN, END          BEGIN, END
 *   profile:::profile-N[unit]    profile (hz without a unit)
 *   profile:::tick-N[unit]       interval (hz without a unit)
 *   syscall::FUNC:entry|return   tracepoint:syscalls:sys_enter_FUNC ...
 *   fbt::FUNC:entry|return       kprobe, kretprobe
 *   pidN:MOD:FUNC:entry|return   uprobe, uretprobe in MOD of process N
 *   PROVN:MOD:FUNC:NAME          usdt (PROV may be a glob; without a
 *                                process, every running process's)
 *   proc:::exec-success ..., io:::start|done,  their tracepoints
 *   sched:::off-cpu|wakeup
 *
 * with N a pid or $target. Then the clauses become probe blocks: a
 * clause that records data gets its "CPU ID FUNCTION:NAME" record line
 * (unless quiet), clauses with the same descriptions become one block
 * (they share this->), and exit() is deferred to the block's end. After
 * expansion, name_probes gives every probe its D names (probeprov ...
 * probename) back. */
#include "d_int.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../program.h"

/* ---- options ---------------------------------------------------------- */

enum d_opt_kind { OPT_FLAG, OPT_SIZE, OPT_IGNORED, OPT_MISSING };

static const struct {
	const char *name;
	enum d_opt_kind kind;
} d_options[] = {
	{ "quiet", OPT_FLAG }, { "destructive", OPT_FLAG },
	{ "strsize", OPT_SIZE }, { "bufsize", OPT_SIZE },
	{ "defaultargs", OPT_FLAG },
	/* buffer sizes and rates of DTrace's own machinery: sonde sizes
	 * its maps and ring itself, so these change nothing */
	{ "aggsize", OPT_IGNORED }, { "aggrate", OPT_IGNORED },
	{ "switchrate", OPT_IGNORED }, { "cleanrate", OPT_IGNORED },
	{ "dynvarsize", OPT_IGNORED }, { "statusrate", OPT_IGNORED },
	{ "bufpolicy", OPT_IGNORED }, { "bufresize", OPT_IGNORED },
	/* speculations are held by the consumer (output/dspec.c), with
	 * bounds of its own */
	{ "nspec", OPT_IGNORED }, { "specsize", OPT_IGNORED },
	{ "flowindent", OPT_FLAG }, { "rawbytes", OPT_MISSING },
	{ "stackframes", OPT_MISSING }, { "ustackframes", OPT_MISSING },
	{ "aggsortkey", OPT_MISSING }, { "aggsortrev", OPT_MISSING },
	{ "aggsortpos", OPT_MISSING }, { "aggsortkeypos", OPT_MISSING },
	{ "aggpack", OPT_MISSING }, { "agghist", OPT_MISSING },
	{ "aggzoom", OPT_MISSING }, { "zdefs", OPT_MISSING },
	{ "errtags", OPT_MISSING }, { "stackindent", OPT_MISSING },
	{ NULL, 0 },
};

/* "4m", "512k", "1024": bytes, or -1. */
static int64_t parse_size(const char *v)
{
	if (!v || !isdigit((unsigned char)*v))
		return -1;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	int shift = 0;
	switch (tolower((unsigned char)*end)) {
	case 'k': shift = 10; end++; break;
	case 'm': shift = 20; end++; break;
	case 'g': shift = 30; end++; break;
	case 't': shift = 40; end++; break;
	default: break;
	}
	if (*end || errno || n > (1ull << 40) >> shift)
		return -1;
	return (int64_t)(n << shift);
}

/* NAME or NAME=VALUE, from -x or a pragma: 0, or -1 with the error. */
static int set_option(struct diags *d, struct pos pos, const char *opt,
		      struct frontend_settings *set)
{
	char name[64];
	const char *eq = strchr(opt, '=');
	size_t n = eq ? (size_t)(eq - opt) : strlen(opt);
	if (n >= sizeof(name))
		n = sizeof(name) - 1;
	memcpy(name, opt, n);
	name[n] = 0;
	const char *val = eq ? eq + 1 : NULL;
	int i = 0;
	while (d_options[i].name && strcmp(d_options[i].name, name))
		i++;
	if (!d_options[i].name) {
		diag_error(d, pos, "SYNTAX", "unknown option \"%s\"", name);
		return -1;
	}
	switch (d_options[i].kind) {
	case OPT_FLAG:
		if (val) {
			diag_error(d, pos, "SYNTAX", "option %s takes no value",
				   name);
			return -1;
		}
		if (name[0] == 'q')
			set->quiet = true;
		else if (name[0] == 'f')
			set->flowindent = true;
		else if (name[0] == 'd' && name[1] == 'e')
			set->destructive = true;
		return 0;
	case OPT_SIZE: {
		int64_t v = parse_size(val);
		if (v <= 0) {
			diag_error(d, pos, "SYNTAX", "option %s needs a size "
				   "(a number, optionally k, m, g): \"%s\"",
				   name, val ? val : "");
			return -1;
		}
		if (name[0] == 's') {
			if (v > 200) {   /* on the 512-byte BPF stack */
				diag_warning(d, pos, "SYNTAX", "strsize %lld: "
					     "sonde's strings are 200 bytes at "
					     "most (on the BPF stack); 200 it is",
					     (long long)v);
				v = 200;
			}
			set->strsize = (uint32_t)v;
		} else {
			set->bufsize = (uint64_t)v;
		}
		return 0;
	}
	case OPT_IGNORED:
		return 0;
	case OPT_MISSING:
		diag_error(d, pos, "SYNTAX", "option %s is not supported yet "
			   "by sonde's D", name);
		return -1;
	}
	return 0;
}

/* #pragma D option NAME[=VALUE] (and the pragmas DTrace ignores). */
static void pragma(struct d_parser *p, const char *line, struct pos pos,
		   struct frontend_settings *set)
{
	const char *s = line + 1;
	while (*s == ' ' || *s == '\t')
		s++;
	if (strncmp(s, "line", 4) == 0 || isdigit((unsigned char)*s))
		return;   /* #line N, # N "file": positions, nothing to do */
	if (strncmp(s, "pragma", 6) != 0) {
		diag_error(p->d, pos, "PP_DIRECTIVE", "preprocessor directive "
			   "'%.40s' needs the C preprocessor (-C), which "
			   "sonde's D does not run yet", line);
		return;
	}
	s += 6;
	while (*s == ' ' || *s == '\t')
		s++;
	if (s[0] != 'D' || (s[1] != ' ' && s[1] != '\t'))
		return;   /* #pragma ident and others: ignored, as in DTrace */
	s += 2;
	while (*s == ' ' || *s == '\t')
		s++;
	if (strncmp(s, "option", 6) != 0) {
		if (strncmp(s, "depends_on", 10) && strncmp(s, "attributes", 10)
		    && strncmp(s, "binding", 7))
			diag_error(p->d, pos, "PP_DIRECTIVE", "unknown control "
				   "directive: #pragma D %.30s", s);
		return;
	}
	s += 6;
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strcspn(s, " \t\r");
	set_option(p->d, pos, arena_strndup(p->a, s, n), set);
}

/* ---- probe descriptions ----------------------------------------------- */

struct desc {
	const char *prov, *mod, *func, *name;
};

/* D's parts fill from the right: "BEGIN" is a name, "read:entry" a
 * function and name. */
static void split_desc(struct arena *a, const char *text, struct desc *out)
{
	const char *parts[4] = { "", "", "", "" };
	const char *v[4];
	int n = 0;
	const char *start = text;
	for (const char *c = text;; c++) {
		if (*c == ':' || !*c) {
			if (n < 4)
				v[n++] = arena_strndup(a, start,
						       (size_t)(c - start));
			start = c + 1;
			if (!*c)
				break;
		}
	}
	for (int i = 0; i < n; i++)
		parts[4 - n + i] = v[i];
	out->prov = parts[0];
	out->mod = parts[1];
	out->func = parts[2];
	out->name = parts[3];
}

static bool matches(const char *pattern, const char *s)
{
	return !*pattern || fnmatch(pattern, s, 0) == 0;
}

static void add_attach(struct d_parser *p, struct node *probe,
		       struct pos pos, const char *desc, const char *text)
{
	struct node *ap = node_new(p->a, N_ATTACH, pos);
	ap->u.attach.text = text;
	ap->u.attach.desc = desc;
	/* split as bpftrace's parser splits: provider:target:func:extra */
	const char *parts[4] = { 0 };
	const char *start = text;
	int np = 0;
	for (const char *c = text;; c++) {
		if (*c == 0 || (*c == ':' && np < 3)) {
			parts[np++] = arena_strndup(p->a, start,
						    (size_t)(c - start));
			start = c + 1;
			if (!*c)
				break;
		}
	}
	ap->u.attach.provider = parts[0];
	ap->u.attach.target = parts[1];
	ap->u.attach.func = parts[2];
	ap->u.attach.extra = parts[3];
	node_list_push(p->a, &probe->u.probe.attach, ap);
}

/* "1s" "997" "10ms": sonde's UNIT:N for interval/profile */
static const char *rate(struct d_parser *p, const char *spec, struct pos pos)
{
	static const struct { const char *u, *as; uint64_t mul; } units[] = {
		{ "nsec", "ns", 1 }, { "ns", "ns", 1 }, { "usec", "us", 1 },
		{ "us", "us", 1 }, { "msec", "ms", 1 }, { "ms", "ms", 1 },
		{ "sec", "s", 1 }, { "s", "s", 1 }, { "min", "s", 60 },
		{ "m", "s", 60 }, { "hour", "s", 3600 }, { "h", "s", 3600 },
		{ "day", "s", 86400 }, { "d", "s", 86400 }, { "hz", "hz", 1 },
		{ "", "hz", 1 }, { NULL, NULL, 0 },
	};
	char *end;
	unsigned long long n = strtoull(spec, &end, 10);
	if (end == spec || !n)
		goto bad;
	for (int i = 0; units[i].u; i++)
		if (strcmp(units[i].u, end) == 0)
			return arena_printf(p->a, "%s:%llu", units[i].as,
					    n * units[i].mul);
bad:
	diag_error(p->d, pos, "BAD_PROBE", "invalid probe rate \"%s\" (N, "
		   "or N followed by ns us ms s m h d hz)", spec);
	return NULL;
}

/* The executable of -c CMD, as execvp finds it. */
static const char *cmd_path(struct d_parser *p)
{
	const char *c = p->o->cmd;
	size_t n = strcspn(c, " \t");
	char *first = arena_strndup(p->a, c, n);
	if (strchr(first, '/'))
		return first;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t k = strcspn(path, ":");
		char *full = arena_printf(p->a, "%.*s/%s", (int)k, path, first);
		if (access(full, X_OK) == 0)
			return full;
		path += k + (path[k] == ':');
	}
	return first;
}

/* The module part of a pid or USDT description as a uprobe target:
 * the program itself (a.out, or none), or a library by name. */
static const char *module_target(struct d_parser *p, const char *mod,
				 long pid)
{
	if (*mod && strcmp(mod, "a.out") != 0 && strcmp(mod, "*") != 0)
		return mod;
	if (pid > 0)
		return arena_printf(p->a, "/proc/%ld/exe", pid);
	return p->o->cmd ? cmd_path(p) : NULL;
}

/* A provider with a process suffix: "pid123", "pid$target" (already
 * expanded), "my_prov*": its base and the pid (0: none, -1: a glob). */
static long proc_suffix(struct d_parser *p, const char *prov, char **base)
{
	size_t n = strlen(prov);
	size_t k = n;
	while (k && isdigit((unsigned char)prov[k - 1]))
		k--;
	*base = arena_strndup(p->a, prov, k);
	if (k < n)
		return strtol(prov + k, NULL, 10);
	return n && prov[n - 1] == '*' ? -1 : 0;
}

/* The proc and io providers' probes that a kernel tracepoint gives
 * (they fire where DTrace's do; args[] and their translators are not
 * there yet). */
static const struct {
	const char *prov, *name, *tracepoint;
} sdt_map[] = {
	{ "proc", "exec", "syscalls:sys_enter_execve" },
	{ "proc", "exec-success", "sched:sched_process_exec" },
	{ "proc", "exit", "sched:sched_process_exit" },
	{ "proc", "create", "sched:sched_process_fork" },
	{ "proc", "signal-send", "signal:signal_generate" },
	{ "proc", "signal-handle", "signal:signal_deliver" },
	{ "io", "start", "block:block_rq_issue" },
	{ "io", "done", "block:block_rq_complete" },
	/* Oracle's DTrace for Linux: off-cpu and wakeup on these
	 * tracepoints (off-cpu in the thread leaving the CPU) */
	{ "sched", "off-cpu", "sched:sched_switch" },
	{ "sched", "wakeup", "sched:sched_wakeup" },
	{ NULL, NULL, NULL },
};

/* DTrace's kernel providers that sonde's D does not map yet (a name
 * that is none of these and no other provider is a USDT provider). */
static bool kernel_provider(const char *prov)
{
	static const char *const names[] = {
		"proc", "sched", "io", "lockstat", "sdt", "sysinfo", "vminfo",
		"mib", "ip", "tcp", "udp", "fsinfo", "cpc", "fasttrap", "lockstat",
		"perf", "rawtp", "rawfbt", "kinst", "plockstat", "hotspot",
		"javascript", NULL,
	};
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], prov))
			return true;
	return false;
}

/* One probe description into the clause's attach points. */
static void map_desc(struct d_parser *p, struct node *probe,
		     const char *text, struct pos pos)
{
	struct desc d;
	/* $target and $N in a description are their values */
	char *t = arena_strdup(p->a, text);
	char *tg = strstr(t, "$target");
	if (tg) {
		long v = p->o->pid;
		if (!v && !p->o->cmd) {
			diag_error(p->d, pos, "SYNTAX", "$target is defined only "
				   "with -c CMD or -p PID");
			return;
		}
		*tg = 0;
		t = v ? arena_printf(p->a, "%s%ld%s", t, v, tg + 7) :
			arena_printf(p->a, "%s%s", t, tg + 7);
	}
	/* $1 ... $9 as their text (a missing one is empty) */
	for (char *m; (m = strchr(t, '$')) && m[1] >= '1' && m[1] <= '9';) {
		int k = m[1] - '1';
		const char *v = k < p->o->npositional ? p->o->positional[k] : "";
		*m = 0;
		t = arena_printf(p->a, "%s%s%s", t, v, m + 2);
	}
	split_desc(p->a, t, &d);
	size_t before = probe->u.probe.attach.n;
	if (matches(d.prov, "dtrace") && !*d.mod && !*d.func) {
		static const char *const dt[] = { "BEGIN", "END", "ERROR" };
		for (int i = 0; i < 3; i++)
			if (matches(d.name, dt[i]) && (*d.name || *d.prov))
				add_attach(p, probe, pos, arena_printf(p->a,
					   "dtrace:::%s", dt[i]), dt[i]);
		if (probe->u.probe.attach.n > before)
			return;
	}
	bool prof = strncmp(d.name, "profile-", 8) == 0;
	if ((prof || strncmp(d.name, "tick-", 5) == 0) &&
	    matches(d.prov, "profile")) {
		const char *r = rate(p, d.name + (prof ? 8 : 5), pos);
		if (r)
			add_attach(p, probe, pos, t, arena_printf(p->a, "%s:%s",
				   prof ? "profile" : "interval", r));
		return;
	}
	if (strcmp(d.prov, "syscall") == 0) {
		const char *f = *d.func ? d.func : "*";
		if (matches(d.name, "entry"))
			add_attach(p, probe, pos, t, arena_printf(p->a,
				   "tracepoint:syscalls:sys_enter_%s", f));
		if (matches(d.name, "return"))
			add_attach(p, probe, pos, t, arena_printf(p->a,
				   "tracepoint:syscalls:sys_exit_%s", f));
	} else if (strcmp(d.prov, "fbt") == 0) {
		if (!*d.func)   /* fbt:::entry: every function */
			d.func = "*";
		if (matches(d.name, "entry"))
			add_attach(p, probe, pos, t, arena_printf(p->a,
				   "kprobe:%s", d.func));
		if (matches(d.name, "return"))
			add_attach(p, probe, pos, t, arena_printf(p->a,
				   "kretprobe:%s", d.func));
	} else if (strncmp(d.prov, "pid", 3) == 0 &&
		   (!d.prov[3] || isdigit((unsigned char)d.prov[3]))) {
		long pid = strtol(d.prov + 3, NULL, 10);
		const char *tgt = module_target(p, d.mod, pid);
		if (!tgt) {
			diag_error(p->d, pos, "BAD_PROBE", "%s: the pid provider "
				   "needs a process (pidN, or pid$target with -c "
				   "or -p)", text);
			return;
		}
		if (!*d.func)   /* every function of the module */
			d.func = "*";
		bool entry = matches(d.name, "entry"), ret =
			matches(d.name, "return");
		if (entry)
			add_attach(p, probe, pos, t, arena_printf(p->a,
				   "uprobe:%s:%s", tgt, d.func));
		if (ret)
			add_attach(p, probe, pos, t, arena_printf(p->a,
				   "uretprobe:%s:%s", tgt, d.func));
		if (!entry && !ret) {   /* an instruction offset, in hex */
			char *end;
			unsigned long long off = strtoull(d.name, &end, 16);
			if (*end || !*d.name) {
				diag_error(p->d, pos, "BAD_PROBE", "%s: pid probes "
					   "are entry, return or a hex offset",
					   text);
				return;
			}
			add_attach(p, probe, pos, t, arena_printf(p->a,
				   "uprobe:%s:%s+%llu", tgt, d.func, off));
		}
	} else if (!strcmp(d.prov, "proc") || !strcmp(d.prov, "io") ||
		   !strcmp(d.prov, "sched")) {
		for (int i = 0; sdt_map[i].prov; i++)
			if (!strcmp(sdt_map[i].prov, d.prov) &&
			    matches(d.name, sdt_map[i].name))
				add_attach(p, probe, pos, arena_printf(p->a,
					   "%s:::%s", d.prov, sdt_map[i].name),
					   arena_printf(p->a, "tracepoint:%s",
							sdt_map[i].tracepoint));
		if (probe->u.probe.attach.n == before &&
		    !strcmp(d.prov, "sched")) {
			diag_error(p->d, pos, "BAD_PROBE", "%s: sonde's D has "
				   "sched:::off-cpu and sched:::wakeup (kernel "
				   "tracepoints); on-cpu, enqueue, dequeue, "
				   "surrender and tick need kprobes (Oracle's "
				   "DTrace for Linux puts them on fbt) and are not "
				   "supported yet; preempt, remain-cpu, "
				   "change-pri, sleep, schedctl-* and cpucaps-* "
				   "do not exist on Linux", text);
			return;
		}
		if (probe->u.probe.attach.n == before) {
			diag_error(p->d, pos, "BAD_PROBE", "%s: the %s "
				   "provider's probes sonde's D has are %s", text,
				   d.prov, !strcmp(d.prov, "io") ? "start and "
				   "done" : "exec, exec-success, exit, create, "
				   "signal-send and signal-handle");
			return;
		}
	} else if (kernel_provider(d.prov)) {
		diag_error(p->d, pos, "BAD_PROBE", "%s: the %s provider is not "
			   "supported yet by sonde's D", text, d.prov);
		return;
	} else if (*d.prov && !strchr("*?[", d.prov[0])) {
		char *base;
		long pid = proc_suffix(p, d.prov, &base);
		const char *tgt = pid > 0 ? "" : module_target(p, d.mod, 0);
		if (pid <= 0 && p->o->pid > 0)
			tgt = "", pid = p->o->pid;
		/* without a process: every object a running process
		 * maps (probes/usdt.c) */
		if (!tgt)
			tgt = "/proc/*";
		const char *prov = base;
		if (pid > 0 && pid != p->o->pid) {
			diag_error(p->d, pos, "BAD_PROBE", "%s: a process other "
				   "than -p PID's (%ld) is not supported yet",
				   text, pid);
			return;
		}
		add_attach(p, probe, pos, t, arena_printf(p->a, "usdt:%s:%s:%s",
			   tgt, prov, *d.name ? d.name : "*"));
	} else {
		diag_error(p->d, pos, "BAD_PROBE", "probe description %s does "
			   "not match any probe: name a provider (dtrace, "
			   "profile, syscall, fbt, pid, or a USDT provider)",
			   text);
		return;
	}
	if (probe->u.probe.attach.n == before)
		diag_error(p->d, pos, "NO_MATCH", "probe description %s does not "
			   "match any probes", text);
}

static struct node *parse_clause(struct d_parser *p, bool *records)
{
	struct node *probe = node_new(p->a, N_PROBE, d_lex_pos(&p->lx));
	for (;;) {
		struct pos pos;
		const char *desc = d_lex_desc(&p->lx, &pos);
		if (!desc) {
			p->bail = true;
			return NULL;
		}
		map_desc(p, probe, desc, pos);
		d_next(p);
		if (!d_tok_is(&p->tok, ","))
			break;
	}
	p->profile_clause = p->return_clause = probe->u.probe.attach.n > 0;
	/* a clause of one proc, sched or io probe: its args[] translated */
	p->sdt_tracepoint = NULL;
	for (uint32_t i = 0; i < probe->u.probe.attach.n; i++) {
		const struct node *ap = probe->u.probe.attach.v[i];
		const char *tp = NULL;
		for (int k = 0; sdt_map[k].prov && ap->u.attach.desc; k++)
			if (!strncmp(ap->u.attach.text, "tracepoint:", 11) &&
			    !strcmp(ap->u.attach.text + 11,
				    sdt_map[k].tracepoint))
				tp = sdt_map[k].tracepoint;
		if (!tp || (i && (!p->sdt_tracepoint ||
				  strcmp(tp, p->sdt_tracepoint)))) {
			p->sdt_tracepoint = NULL;
			break;
		}
		p->sdt_tracepoint = tp;
	}
	for (uint32_t i = 0; i < probe->u.probe.attach.n; i++) {
		const char *pv = probe->u.probe.attach.v[i]->u.attach.provider;
		p->profile_clause &= pv && (!strcmp(pv, "profile") ||
					    !strcmp(pv, "interval"));
		p->return_clause &= pv && (!strcmp(pv, "kretprobe") ||
					   !strcmp(pv, "uretprobe"));
		const char *fn = probe->u.probe.attach.v[i]->u.attach.func;
		bool sysret = pv && !strcmp(pv, "tracepoint") && fn &&
			!strncmp(fn, "sys_exit_", 9);
		p->syscall_return = i ? p->syscall_return && sysret : sysret;
	}
	if (d_tok_is(&p->tok, "/")) {
		d_next(p);
		p->in_pred = true;
		p->parens = 0;
		probe->u.probe.predicate = d_parse_expr(p);
		p->in_pred = false;
		if (!probe->u.probe.predicate || !d_expect(p, "/"))
			return NULL;
	}
	p->records = false;
	if (d_tok_is(&p->tok, "{")) {
		probe->u.probe.body = d_parse_block(p, true);
		if (!probe->u.probe.body)
			return NULL;
	} else if (p->tok.kind == DT_EOF) {
		probe->u.probe.body = node_new(p->a, N_BLOCK, p->tok.pos);
	} else {
		d_error(p, p->tok.pos, "syntax error near \"%s\"",
			p->tok.kind == DT_IDENT ? p->tok.s :
			p->tok.kind == DT_OP ? p->tok.op : "?");
		p->bail = true;
		return NULL;
	}
	/* an empty clause traces the probe: its record line alone */
	*records = p->records || !probe->u.probe.body->u.list.n;
	return probe;
}

/* The clause's descriptions, as one string. */
static struct node *d_parse(struct arena *a, const char *text,
			    const struct frontend_opts *o, struct ctypes *reg,
			    struct diags *d)
{
	struct d_parser p = { .a = a, .d = d, .o = o, .reg = reg,
			      .decls_line = 1 };
	struct frontend_settings local = { 0 };
	struct frontend_settings *set = o->set ? o->set : &local;
	d_lex_init(&p.lx, a, text, d);
	struct pos none = { 0 };
	for (size_t i = 0; i < o->nxopts; i++)
		set_option(d, none, o->xopts[i], set);
	if (o->quiet)
		set->quiet = true;
	struct node *root = node_new(a, N_PROGRAM, d_lex_pos(&p.lx));
	if (o->cpp) {
		/* D's pragmas first: the preprocessor drops them */
		struct d_lexer pl;
		d_lex_init(&pl, a, text, d);
		while (*pl.p) {
			while (*pl.p == ' ' || *pl.p == '\t')
				pl.p++, pl.col++;
			struct pos pos;
			const char *line = d_lex_line(&pl, &pos);
			if (!strncmp(line, "#pragma", 7))
				pragma(&p, line, pos, set);
		}
		text = d_preprocess(a, text, o, d);
		if (!text || d->nerrors)
			return root;
		d_lex_init(&p.lx, a, text, d);
	}
	/* #!/usr/sbin/dtrace -s */
	if (text && text[0] == '#' && text[1] == '!') {
		struct pos pos;
		d_lex_line(&p.lx, &pos);
	}
	VEC(bool) records = { 0 };
	while (!p.bail && d->nerrors < DIAG_MAX_ERRORS && d_lex_skip(&p.lx)) {
		if (*p.lx.p == '#') {
			struct pos pos;
			const char *line = d_lex_line(&p.lx, &pos);
			pragma(&p, line, pos, set);
			continue;
		}
		if (d_at_declaration(&p.lx)) {
			d_declaration(&p);
			continue;
		}
		bool rec = false;
		struct node *c = parse_clause(&p, &rec);
		if (!c)
			break;
		node_list_push(a, &root->u.list, c);
		if (vec_push(&records, rec) < 0)
			break;
	}
	if (!root->u.list.n && !d->nerrors)
		diag_error(d, d_lex_pos(&p.lx), "SYNTAX", "no probes specified");
	/* flowindent prints the record lines quiet or not, as dtrace(8)
	 * does */
	if ((!set->quiet || set->flowindent) && !d->nerrors)
		for (uint32_t i = 0; i < root->u.list.n; i++)
			if (records.v[i])
				d_add_record(&p, root->u.list.v[i]);
	if (!d->nerrors)
		for (uint32_t i = 0; i < root->u.list.n; i++)
			d_end_speculation(&p, root->u.list.v[i]);
	if (!d->nerrors)
		d_merge_clauses(&p, root, set);
	if (!d->nerrors)
		for (uint32_t i = 0; i < root->u.list.n; i++)
			d_add_exit(&p, root->u.list.v[i]);
	if (!d->nerrors)
		d_declare_types(&p);
	free(p.decls);
	vec_free(&records);
	strmap_free(&p.ints);
	strmap_free(&p.aggs);
	strmap_free(&p.typedefs);
	strmap_free(&p.enumerators);
	return root;
}

/* ---- probe names ------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path ? path : "";
}

static void name_probe(struct program *prog, struct probe *pr,
		       frontend_site_func site)
{
	struct arena *a = prog->arena;
	struct desc d = { "", "", "", "" };
	if (pr->desc)
		split_desc(a, pr->desc, &d);
	const char *kind = pr->kind ? pr->kind : "";
	const char **n = pr->dname;
	n[0] = n[1] = n[2] = "";
	n[3] = d.name;
	if (strcmp(kind, "BEGIN") == 0 || strcmp(kind, "END") == 0 ||
	    strcmp(kind, "ERROR") == 0) {
		n[0] = "dtrace";
		n[3] = kind;
	} else if (strcmp(kind, "interval") == 0 ||
		   strcmp(kind, "profile") == 0) {
		n[0] = "profile";
	} else if (strcmp(kind, "tracepoint") == 0 && pr->target &&
		   strcmp(pr->target, "syscalls") != 0 &&
		   strncmp(d.name, "exec", 4) != 0) {
		n[0] = d.prov;   /* proc, io */
		n[1] = "vmlinux";
	} else if (strcmp(kind, "tracepoint") == 0 &&
		   strcmp(d.prov, "proc") == 0) {
		n[0] = d.prov;   /* proc:::exec, on execve's tracepoint */
		n[1] = "vmlinux";
	} else if (strcmp(kind, "tracepoint") == 0) {
		const char *f = pr->func ? pr->func : "";
		bool enter = strncmp(f, "sys_enter_", 10) == 0;
		n[0] = "syscall";
		n[1] = "vmlinux";
		n[2] = f + (enter ? 10 : strncmp(f, "sys_exit_", 9) == 0 ? 9 : 0);
		n[3] = enter ? "entry" : "return";
	} else if (strcmp(kind, "kprobe") == 0 || strcmp(kind, "kretprobe") == 0) {
		n[0] = "fbt";
		n[1] = "vmlinux";
		n[2] = pr->func ? pr->func : "";
		n[3] = kind[1] == 'r' ? "return" : "entry";
	} else if (strcmp(kind, "uprobe") == 0 || strcmp(kind, "uretprobe") == 0) {
		n[0] = d.prov;
		n[1] = base_name(pr->target);
		const char *f = pr->func ? pr->func : "";
		const char *plus = strchr(f, '+');
		n[2] = plus ? arena_strndup(a, f, (size_t)(plus - f)) : f;
		n[3] = kind[1] == 'r' ? "return" : plus ?
			arena_printf(a, "%llx", strtoull(plus + 1, NULL, 0)) :
			"entry";
	} else if (strcmp(kind, "usdt") == 0) {
		const char *f = pr->func ? pr->func : "";
		const char *colon = strchr(f, ':');
		n[0] = colon ? arena_strndup(a, f, (size_t)(colon - f)) : d.prov;
		n[1] = base_name(pr->uprobe && pr->uprobe->path ?
				 pr->uprobe->path : pr->target);
		const char *fn = site ? site(pr, a) : NULL;
		n[2] = fn ? fn : "";
		n[3] = colon ? colon + 1 : f;
	}
	n[4] = arena_printf(a, "%s:%s", n[2], n[3]);
}

static void d_name_probes(struct program *prog, frontend_site_func site)
{
	prog->dtrace.on = true;
	for (uint32_t i = 0; i < prog->nprobes; i++) {
		struct probe *pr = &prog->probes[i];
		name_probe(prog, pr, site);
		if (pr->kind && strcmp(pr->kind, "ERROR") == 0)
			prog->dtrace.has_error = true;
	}
}

const struct frontend frontend_dtrace = {
	.name = "dtrace",
	.parse = d_parse,
	.name_probes = d_name_probes,
	.ctx_args = true,
};
