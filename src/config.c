/* config.c - bpftrace 0.2x's script config block.
 *
 * A name may be written as the variable (stack_mode), in capitals
 * (STACK_MODE) or as its environment variable (BPFTRACE_STACK_MODE);
 * all three are one variable (language.md, "Config Block"). Each known
 * variable has a kind that says which values it takes and a place in
 * struct program (or the compile's map key limit) where it goes; a few
 * that tune what sonde does not have (on_stack_limit: sonde keeps big
 * values off the BPF stack by itself; show_debug_info, lazy_symbolication:
 * blazesym's) are taken and checked but change nothing, as README says. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum cfg_kind { CFG_UINT, CFG_BOOL, CFG_STR, CFG_ENUM };

enum cfg_id {
	CFG_CACHE_USER_SYMBOLS, CFG_CPP_DEMANGLE, CFG_LAZY_SYMBOLICATION,
	CFG_LICENSE, CFG_LOG_SIZE, CFG_MAX_BPF_PROGS, CFG_MAX_CAT_BYTES,
	CFG_MAX_MAP_KEYS, CFG_MAX_PROBES, CFG_MAX_STRLEN, CFG_MISSING_PROBES,
	CFG_ON_STACK_LIMIT, CFG_PERF_RB_PAGES, CFG_SHOW_DEBUG_INFO,
	CFG_STACK_MODE, CFG_STR_TRUNC_TRAILER, CFG_PRINT_MAPS_ON_EXIT,
	CFG_UNSTABLE,
};

struct cfg_var {
	const char *name;
	enum cfg_id id;
	enum cfg_kind kind;
	const char *const *choices;   /* CFG_ENUM, CFG_STR with a list */
	uint64_t max;                 /* CFG_UINT: 1..max */
	bool zero_ok;                 /* CFG_UINT: 0..max */
};

static const char *const stack_modes[] = { "bpftrace", "perf", "raw",
					   "build_id", NULL };
static const char *const missing[] = { "error", "warn", "ignore", NULL };
static const char *const caches[] = { "PER_PROGRAM", "PER_PID", "NONE",
				      NULL };
static const char *const unstable[] = { "error", "warn", "enable", NULL };
/* in the order bpftrace's message lists them */
static const char *const licenses[] = { "Dual MIT/GPL", "Dual BSD/GPL",
	"Dual MPL/GPL", "GPL and additional rights", "GPL v2", "GPL", NULL };

static const struct cfg_var vars[] = {
	{ "cache_user_symbols", CFG_CACHE_USER_SYMBOLS, CFG_ENUM, caches, 0 },
	{ "cpp_demangle", CFG_CPP_DEMANGLE, CFG_BOOL, NULL, 0 },
	{ "lazy_symbolication", CFG_LAZY_SYMBOLICATION, CFG_BOOL, NULL, 0 },
	{ "license", CFG_LICENSE, CFG_STR, licenses, 0 },
	{ "log_size", CFG_LOG_SIZE, CFG_UINT, NULL, 1u << 30 },
	{ "max_bpf_progs", CFG_MAX_BPF_PROGS, CFG_UINT, NULL, 1000000 },
	{ "max_cat_bytes", CFG_MAX_CAT_BYTES, CFG_UINT, NULL, 1u << 30 },
	{ "max_map_keys", CFG_MAX_MAP_KEYS, CFG_UINT, NULL, 1u << 26 },
	{ "max_probes", CFG_MAX_PROBES, CFG_UINT, NULL, 1000000 },
	/* strings live on the 512-byte BPF stack in sonde: 200 at most,
	 * as BPFTRACE_STRLEN */
	{ "max_strlen", CFG_MAX_STRLEN, CFG_UINT, NULL, 200 },
	{ "missing_probes", CFG_MISSING_PROBES, CFG_ENUM, missing, 0 },
	{ "on_stack_limit", CFG_ON_STACK_LIMIT, CFG_UINT, NULL, 512, true },
	{ "perf_rb_pages", CFG_PERF_RB_PAGES, CFG_UINT, NULL, 1u << 20 },
	{ "show_debug_info", CFG_SHOW_DEBUG_INFO, CFG_BOOL, NULL, 0 },
	{ "stack_mode", CFG_STACK_MODE, CFG_ENUM, stack_modes, 0 },
	{ "str_trunc_trailer", CFG_STR_TRUNC_TRAILER, CFG_STR, NULL, 0 },
	{ "print_maps_on_exit", CFG_PRINT_MAPS_ON_EXIT, CFG_BOOL, NULL, 0 },
	{ "unstable_tseries", CFG_UNSTABLE, CFG_ENUM, unstable, 0 },
	{ "unstable_dw_ustack", CFG_UNSTABLE, CFG_ENUM, unstable, 0 },
	{ "unstable_map_decl", CFG_UNSTABLE, CFG_ENUM, unstable, 0 },
	{ "unstable_macro", CFG_UNSTABLE, CFG_ENUM, unstable, 0 },
	{ "unstable_import", CFG_UNSTABLE, CFG_ENUM, unstable, 0 },
};

/* stack_mode, STACK_MODE and BPFTRACE_STACK_MODE: the variable, or NULL */
static const struct cfg_var *cfg_find(const char *name)
{
	if (strncmp(name, "BPFTRACE_", 9) == 0)
		name += 9;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (strcasecmp(vars[i].name, name) == 0)
			return &vars[i];
	return NULL;
}

static int choice(const char *const *c, const char *v)
{
	for (int i = 0; c[i]; i++)
		if (strcmp(c[i], v) == 0)
			return i;
	return -1;
}

static const char *choices_text(struct arena *a, const char *const *c)
{
	const char *s = "";
	for (int i = 0; c[i]; i++)
		s = arena_printf(a, "%s%s%s", s, i ? ", " : "", c[i]);
	return s;
}

/* The value's text, as bpftrace reads it: a name, a string, a number. */
static const char *value_text(struct arena *a, const struct node *v)
{
	if (v->kind == N_INT)
		return arena_printf(a, "%llu", (unsigned long long)v->u.ival);
	return v->u.str.s;
}

static int bad_value(struct diags *d, struct arena *a, const struct node *as,
		     const struct cfg_var *var, const char *valid)
{
	diag_error(d, as->pos, "BAD_CONFIG", "Invalid value for %s. Found: "
		   "%s. Valid values: %s", var->name,
		   value_text(a, as->u.assign.value), valid);
	return -EINVAL;
}

static int apply_one(struct program *prog, uint32_t *map_keys_max,
		     const struct node *as, bool from_env, struct diags *d)
{
	struct arena *a = prog->arena;
	const char *name = as->u.assign.target->u.str.s;
	const struct node *v = as->u.assign.value;
	const struct cfg_var *var = cfg_find(name);
	if (!var) {
		diag_error(d, as->pos, "BAD_CONFIG", "%s: not a known "
			   "configuration option", name);
		return -EINVAL;
	}
	uint64_t n = 0;
	bool b = false;
	int c = -1;
	const char *text = value_text(a, v);
	switch (var->kind) {
	case CFG_UINT:
		if (v->kind != N_INT || v->u.ival < !var->zero_ok ||
		    v->u.ival > var->max)
			return bad_value(d, a, as, var, arena_printf(a,
					 "a number from %d to %llu",
					 !var->zero_ok,
					 (unsigned long long)var->max));
		n = v->u.ival;
		break;
	case CFG_BOOL:
		if (v->kind == N_INT && v->u.ival <= 1)
			b = v->u.ival == 1;
		else if (v->kind == N_IDENT && (!strcmp(text, "true") ||
						!strcmp(text, "false")))
			b = text[0] == 't';
		else
			return bad_value(d, a, as, var, "true, false, 1, 0");
		break;
	case CFG_ENUM:
	case CFG_STR:
		if (v->kind == N_INT)
			return bad_value(d, a, as, var, var->choices ?
					 choices_text(a, var->choices) :
					 "a string");
		if (var->choices && (c = choice(var->choices, text)) < 0)
			return bad_value(d, a, as, var,
					 choices_text(a, var->choices));
		break;
	}
	/* the environment's value wins */
	char env[64];
	snprintf(env, sizeof(env), "BPFTRACE_%s", var->name);
	for (char *e = env; *e; e++)
		*e = (char)toupper((unsigned char)*e);
	if (getenv(env) && !from_env)
		return 0;
	switch (var->id) {
	case CFG_STACK_MODE:
		if (c == 3) {
			diag_error(d, v->pos, "BAD_CONFIG", "stack_mode build_id "
				   "is not supported by sonde (bpftrace, perf "
				   "or raw)");
			return -EINVAL;
		}
		prog->config.stack_mode = (uint8_t)c;
		break;
	case CFG_MAX_MAP_KEYS: *map_keys_max = (uint32_t)n; break;
	case CFG_MAX_STRLEN: prog->strlen = (uint32_t)n; break;
	case CFG_PRINT_MAPS_ON_EXIT: prog->config.no_print_maps = !b; break;
	case CFG_CPP_DEMANGLE: prog->config.no_cpp_demangle = !b; break;
	case CFG_MAX_CAT_BYTES: prog->config.cat_bytes_max = n; break;
	case CFG_LOG_SIZE: prog->config.log_size = n; break;
	case CFG_PERF_RB_PAGES: prog->config.perf_rb_pages = (uint32_t)n; break;
	case CFG_MAX_BPF_PROGS: prog->config.max_bpf_progs = (uint32_t)n; break;
	case CFG_MAX_PROBES: prog->config.max_probes = (uint32_t)n; break;
	case CFG_LICENSE: prog->config.license = licenses[c]; break;
	case CFG_MISSING_PROBES:
		prog->config.missing_probes = (uint8_t)(c + 1);
		break;
	default:   /* taken, checked, nothing in sonde to tune */
		break;
	}
	return 0;
}

/* `let @m = KIND(N);`: checked and kept for config_map_decls. */
static int map_decl(struct program *prog, const struct node *n,
		    struct diags *d)
{
	const struct node *m = n->u.assign.target, *c = n->u.assign.value;
	static const char *const kinds[] = { "hash", "lruhash", "percpuhash",
					     "percpulruhash", NULL };
	int k = choice(kinds, c->u.call.name);
	if (k < 0) {
		diag_error(d, c->pos, "BAD_MAP_DECL", "unknown map type '%s' "
			   "(%s)", c->u.call.name,
			   choices_text(prog->arena, kinds));
		return -EINVAL;
	}
	const struct node *a = c->u.call.args.n == 1 ? c->u.call.args.v[0] :
		NULL;
	if (!a || a->kind != N_INT || a->u.ival < 1 || a->u.ival > (1u << 26)) {
		diag_error(d, c->pos, "BAD_MAP_DECL", "%s() takes the map's "
			   "maximum entries, a number from 1 to %u: let %s = "
			   "%s(100);", c->u.call.name, 1u << 26, m->u.map.name,
			   c->u.call.name);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < prog->nmap_decls; i++)
		if (!strcmp(prog->map_decls[i].name, m->u.map.name)) {
			diag_error(d, m->pos, "BAD_MAP_DECL", "%s is declared "
				   "twice", m->u.map.name);
			return -EINVAL;
		}
	struct map_decl *md = &prog->map_decls[prog->nmap_decls++];
	md->name = m->u.map.name;
	md->max_entries = (uint32_t)a->u.ival;
	md->lru = k == 1 || k == 3;
	md->pos = m->pos;
	return 0;
}

void config_map_decls(struct program *prog, struct diags *d)
{
	for (uint32_t i = 0; i < prog->nmap_decls; i++) {
		const struct map_decl *md = &prog->map_decls[i];
		bool used = false;
		for (uint32_t k = 0; k < prog->nmaps; k++)
			used |= !strcmp(prog->maps[k].name, md->name);
		/* bpftrace 0.24's words (0.26's map tests look for them); a
		 * declaration is 0.24 syntax, so no 0.17 script sees it */
		if (!used)
			diag_warning(d, md->pos, "UNUSED_MAP", "Unused map: %s",
				     md->name);
		for (uint32_t k = 0; k < prog->nmaps; k++) {
			struct map_spec *m = &prog->maps[k];
			if (strcmp(m->name, md->name) != 0 || !m->nkeys ||
			    (m->kind != MAP_HASH && m->kind != MAP_PERCPU_HASH))
				continue;
			m->max_entries = md->max_entries;
			m->lru = md->lru;
		}
	}
}

/* bpftrace 0.20 named each config variable's environment variable after
 * it (CHANGELOG 0.20.0: "Standardize config and env var names";
 * language.md "Config Variables": stack_mode's is BPFTRACE_STACK_MODE),
 * and the environment wins over a config block. The names 0.17 had
 * already (LOG_SIZE, MAX_PROBES, ...) are options.c's, STACK_MODE is
 * read above; these are the new ones, read from --dialect=0.20 on. */
static int env_config(struct program *prog, uint32_t *map_keys_max,
		      struct diags *d)
{
	static const char *const names[] = { "max_cat_bytes", "max_map_keys",
		"max_strlen", "str_trunc_trailer", "cpp_demangle",
		"lazy_symbolication", "show_debug_info", "on_stack_limit",
		"missing_probes", "print_maps_on_exit", NULL };
	struct arena *a = prog->arena;
	int err = 0;
	for (size_t i = 0; names[i]; i++) {
		char env[64];
		snprintf(env, sizeof(env), "BPFTRACE_%s", names[i]);
		for (char *e = env; *e; e++)
			*e = (char)toupper((unsigned char)*e);
		const char *val = getenv(env);
		if (!val)
			continue;
		struct pos pos = { 0, 0, 0 };
		struct node *as = node_new(a, N_ASSIGN, pos);
		struct node *name = node_new(a, N_IDENT, pos);
		name->u.str.s = arena_strdup(a, names[i]);
		name->u.str.len = (uint32_t)strlen(names[i]);
		char *end;
		unsigned long long num = strtoull(val, &end, 10);
		struct node *v;
		if (*val >= '0' && *val <= '9' && !*end) {
			v = node_new(a, N_INT, pos);
			v->u.ival = num;
			/* strings live on the BPF stack in sonde: a longer
			 * max_strlen is taken as its 200 (0.26's default is
			 * 1024, and scripts set more), said once */
			if (!strcmp(names[i], "max_strlen") && num > 200) {
				diag_warning(d, pos, "BAD_CONFIG", "%s=%s: sonde's "
					     "strings are at most 200 bytes; "
					     "200 is used", env, val);
				v->u.ival = 200;
			}
		} else {
			bool word = !strcmp(val, "true") || !strcmp(val, "false");
			v = node_new(a, word ? N_IDENT : N_STR, pos);
			v->u.str.s = arena_strdup(a, val);
			v->u.str.len = (uint32_t)strlen(val);
		}
		as->u.assign.target = name;
		as->u.assign.value = v;
		if (apply_one(prog, map_keys_max, as, true, d) < 0)
			err = -EINVAL;
	}
	return err;
}

int config_apply(struct node *root, struct program *prog,
		 uint32_t *map_keys_max, struct diags *d)
{
	int err = 0;
	uint32_t w = 0, nconfig = 0;
	/* BPFTRACE_STACK_MODE, bpftrace 0.2x's variable (sonde's default
	 * otherwise); a config block's stack_mode gives way to it */
	const char *sm = getenv("BPFTRACE_STACK_MODE");
	if (sm && *sm) {
		int c = choice(stack_modes, sm);
		if (c < 0 || c == 3) {
			diag_error(d, (struct pos){ 0, 0, 0 }, "BAD_CONFIG",
				   "BPFTRACE_STACK_MODE='%s': expected "
				   "bpftrace, perf or raw", sm);
			return -EINVAL;
		}
		prog->config.stack_mode = (uint8_t)c;
	}
	for (uint32_t i = 0; i < root->u.list.n; i++) {
		struct node *n = root->u.list.v[i];
		if (n->kind == N_MAP_DECL) {
			if (!prog->map_decls)
				prog->map_decls = arena_array(prog->arena,
					struct map_decl, root->u.list.n);
			if (map_decl(prog, n, d) < 0)
				err = -EINVAL;
			continue;
		}
		if (n->kind != N_CONFIG) {
			root->u.list.v[w++] = n;
			continue;
		}
		if (nconfig++) {
			diag_error(d, n->pos, "BAD_CONFIG", "only one config "
				   "block is allowed");
			err = -EINVAL;
			continue;
		}
		for (uint32_t k = 0; k < n->u.list.n; k++)
			if (apply_one(prog, map_keys_max, n->u.list.v[k], false,
				      d) < 0)
				err = -EINVAL;
	}
	if (prog->dialect >= DIALECT_020 && env_config(prog, map_keys_max, d) < 0)
		err = -EINVAL;
	root->u.list.n = w;
	if (!w && !d->nerrors)
		diag_error(d, (struct pos){ 0, 0, 0 }, "SYNTAX",
			   "the program has no probes");
	return err;
}
