/* test_funcs.c - the function records (funcs/func.h): every record well
 * formed and found by name, and what the semantic pass takes from a
 * record alone (arity, --unsafe, aggregation context, what a probe must
 * offer) for every function; the same for the builtin variables'
 * records (funcs/builtin.h). */
#include "funcs/builtin.h"
#include "funcs/func.h"
#include "lang_fixture.h"
#include "unit.h"

static struct lang_fx F;

static bool fails(const char *text, const char *tag, bool unsafe)
{
	lang_fx_free(&F);
	lang_fx_run(&F, text, NULL, 0, unsafe);
	bool r = F.rc < 0 && diags_has(&F.d, tag);
	if (!r) {
		printf("# rc %d for: %s\n", F.rc, text);
		diags_print(&F.d, stdout);
	}
	return r;
}

/* A call of f with n integer arguments, where it may stand. */
static const char *call_text(char *buf, size_t size, const struct func *f,
			     unsigned n)
{
	char args[64] = "";
	for (unsigned i = 0; i < n && i < 8; i++)
		strcat(args, i ? ", 1" : "1");
	if (f->flags & FUNC_AGG)
		snprintf(buf, size, "BEGIN { @x = %s(%s); }", f->name, args);
	else
		snprintf(buf, size, "BEGIN { %s(%s); }", f->name, args);
	return buf;
}

int main(void)
{
	unsigned nrec = 0, bad = 0, dup = 0, empty = 0;
	for (size_t i = 0; func_families[i]; i++) {
		if (!func_families[i]->name)
			empty++;
		for (const struct func *f = func_families[i]; f->name; f++) {
			nrec++;
			bool ok = f->check && f->min_args <= f->max_args &&
				!(f->gen && f->gen_to) &&
				(!(f->flags & FUNC_AGG) || (!f->gen && !f->gen_to));
			if (!ok) {
				printf("# malformed record %s\n", f->name);
				bad++;
			}
			if (func_find(f->name) != f) {
				printf("# %s: lookup finds another record\n",
				       f->name);
				dup++;
			}
		}
	}
	CHECK(!empty, "no family is empty");
	CHECK(!bad, "every record has a check, at most one code hook, and "
	      "aggregations none");
	CHECK(!dup, "names are unique");
	CHECK(!func_find("nosuch") && !func_find(NULL), "unknown names");

	/* What the records say, checked through the semantic pass for each
	 * record: too few and too many arguments are ARG_COUNT, unsafe
	 * functions need --unsafe, aggregations need a map. */
	unsigned arity = 0, unsafe = 0, agg = 0, n = 0;
	char buf[256];
	for (size_t i = 0; func_families[i]; i++) {
		for (const struct func *f = func_families[i]; f->name; f++) {
			n++;
			if (f->min_args > 0 &&
			    !fails(call_text(buf, sizeof(buf), f, f->min_args - 1u),
				   "ARG_COUNT", true))
				arity++;
			if (f->max_args != FUNC_ARGS_ANY &&
			    !fails(call_text(buf, sizeof(buf), f, f->max_args + 1u),
				   "ARG_COUNT", true))
				arity++;
			if ((f->flags & FUNC_UNSAFE) &&
			    !fails(call_text(buf, sizeof(buf), f, f->min_args),
				   "UNSAFE", false))
				unsafe++;
			if (f->flags & FUNC_AGG) {
				char t[128];
				snprintf(t, sizeof(t), "BEGIN { %s(%s); }", f->name,
					 f->min_args ? "1" : "");
				if (!fails(t, "AGG_CONTEXT", true))
					agg++;
			}
		}
	}
	CHECK(n == nrec, "every record visited");
	CHECK(!arity, "argument counts outside a record's bounds are ARG_COUNT");
	CHECK(!unsafe, "unsafe records need --unsafe (UNSAFE)");
	CHECK(!agg, "aggregations outside `@m = f()` are AGG_CONTEXT");
	CHECK(fails("BEGIN { nosuch(1); }", "BAD_CALL", false),
	      "an unknown function is BAD_CALL");
	CHECK(fails("BEGIN { print(reg(\"ip\")); }", "BAD_BUILTIN", false),
	      "a record's needs: reg() in BEGIN is BAD_BUILTIN");
	CHECK(fails("tracepoint:a:b { print(reg(\"ip\")); }", "BAD_BUILTIN",
		    false), "reg() in a tracepoint is BAD_BUILTIN");

	/* The builtin records: one per id, each named and found by its
	 * name (an indexed one with its number), and what a record needs
	 * of a probe is what BEGIN (which offers none of it) is refused. */
	unsigned bnamed = 0, bfound = 0, bneeds = 0;
	for (int i = 0; i < BI_COUNT_; i++) {
		const struct builtin *b = &builtins[i];
		if (!b->name || !*b->name) {
			printf("# builtin %d has no record\n", i);
			continue;
		}
		bnamed++;
		uint32_t index = 99;
		snprintf(buf, sizeof(buf), "%s%s", b->name,
			 b->flags & BUILTIN_INDEXED ? "12" : "");
		if (builtin_lookup(buf, &index) == i &&
		    index == (b->flags & BUILTIN_INDEXED ? 12u : 0u))
			bfound++;
		else
			printf("# %s: lookup finds another builtin\n", buf);
		if (b->needs) {
			char t[sizeof(buf) + 32];
			snprintf(t, sizeof(t), "BEGIN { print(%s); }", buf);
			if (!fails(t, "BAD_BUILTIN", false))
				bneeds++;
		}
	}
	CHECK(bnamed == BI_COUNT_, "every builtin id has a named record");
	CHECK(bfound == BI_COUNT_, "every builtin is found by its name");
	CHECK(!bneeds, "a builtin's needs: BEGIN, which has none, is "
	      "BAD_BUILTIN");
	CHECK(builtin_lookup("arg", &(uint32_t){ 0 }) < 0 &&
	      builtin_lookup("arg1234", &(uint32_t){ 0 }) < 0 &&
	      builtin_lookup("nosuch", &(uint32_t){ 0 }) < 0,
	      "arg without a number, with four digits, and unknown names "
	      "are no builtin");
	lang_fx_free(&F);
	return UNIT_DONE();
}
