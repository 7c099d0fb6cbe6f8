/* net.c - network addresses: ntop(), pton(), macaddr(); and packets:
 * skboutput(). */
#include "funcs_int.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

/* ntop([family,] addr): addr an integer (IPv4, its low four bytes) or
 * the 4 or 16 bytes of an address (IPv4, IPv6). */
static const struct type *check_ntop(struct sema *s, struct node *n)
{
	uint32_t last = nargs(n) - 1;
	if (last && !sema_int_arg(s, n, 0, "the address family"))
		return NULL;
	struct node *an = arg(n, last);
	const struct type *a = an->kind == N_FIELD ?
		sema_field_bytes(s, an) : sema_expr(s, an);
	/* bytes: a string of them, or a C array (u8[16], __be32[4] ...) */
	bool bytes = a && (is_str(a) || a->kind == TYPE_ARRAY);
	if (a && !is_int(a) && !(bytes && (a->size == 4 || a->size == 16))) {
		sema_error(s, an->pos, "ARG_TYPE",
			   "ntop() expects an integer or the 4 or 16 bytes "
			   "of an address, not '%s'", sema_tname(s, a));
		return NULL;
	}
	return a ? type_simple(s->a, TYPE_INET, 24) : NULL;
}

/* TYPE_INET: u64 family, then 16 address bytes (types.h). Without a
 * family, an integer or 4 bytes are IPv4 and 16 bytes IPv6; an integer
 * address is its low four bytes, in memory order (bpftrace's
 * ntop(0x0100007f) is 127.0.0.1). */
static void gen_ntop(struct cg *cg, const struct node *n, struct cmem dst,
		     const struct type *to)
{
	const struct node *addr = arg(n, nargs(n) - 1);
	bool bytes = addr->type->kind == TYPE_STR ||
		addr->type->kind == TYPE_ARRAY;
	cg_zero(cg, dst, 24);
	if (nargs(n) == 2)
		cg_store_int(cg, dst, cg_expr(cg, arg(n, 0)));
	else
		cg_store_int(cg, dst, cg_imm(bytes && addr->type->size == 16 ?
					     AF_INET6 : AF_INET, type_u64()));
	if (bytes) {
		cg_expr_to(cg, addr, cg_at(dst, 8), addr->type);
		return;
	}
	vreg v = cg_reg(cg, cg_expr(cg, addr));
	ir_stx(cg->ir, BPF_W, dst.base, (int16_t)(dst.off + 8), v);
}

/* pton("addr"): the address's bytes, an array of 4 (IPv4: the text has
 * a '.') or 16 uint8 (IPv6: it has a ':'), as bpftrace 0.17 decides. */
static int pton_parse(const char *text, uint8_t bytes[16])
{
	if (strchr(text, '.'))
		return inet_pton(AF_INET, text, bytes) == 1 ? 4 : -1;
	if (strchr(text, ':'))
		return inet_pton(AF_INET6, text, bytes) == 1 ? 16 : -1;
	return -1;
}

static const struct type *check_pton(struct sema *s, struct node *n)
{
	const char *text = sema_lit_str(s, n, 0, "the address");
	if (!text)
		return NULL;
	uint8_t bytes[16];
	int len = pton_parse(text, bytes);
	if (len < 0) {
		sema_error(s, arg(n, 0)->pos, "ARG_TYPE",
			   "pton() expects a valid IPv4/IPv6 address, got %s",
			   text);
		return NULL;
	}
	const struct ctype *u8 = ctype_int(s->a, 1, false, NULL);
	return type_of_ctype(s->a, ctype_array(s->a, u8, (uint32_t)len),
			     AS_UNKNOWN);
}

static void gen_pton(struct cg *cg, const struct node *n, struct cmem dst,
		     const struct type *to)
{
	uint8_t bytes[16] = { 0 };
	int len = pton_parse(lit_arg(n, 0), bytes);
	for (int i = 0; i + 4 <= len; i += 4) {
		uint32_t w;
		memcpy(&w, bytes + i, 4);
		ir_st(cg->ir, BPF_W, dst.base, (int16_t)(dst.off + i),
		      (int32_t)w);
	}
}

/* macaddr(addr): six bytes, given as a value of six bytes (char[6],
 * u8[6]) or as a pointer to them. */
static const struct type *check_macaddr(struct sema *s, struct node *n)
{
	const struct type *t = sema_expr(s, arg(n, 0));
	if (!t)
		return NULL;
	if (arg(n, 0)->kind == N_STR) {
		sema_error(s, arg(n, 0)->pos, "ARG_TYPE",
			   "macaddr() does not support literal string arguments");
		return NULL;
	}
	if (!is_int(t) && !((is_str(t) || t->kind == TYPE_ARRAY) &&
			    t->size == 6)) {
		sema_error(s, arg(n, 0)->pos, "ARG_TYPE",
			   "macaddr() expects the 6 bytes of an address or a "
			   "pointer to them, not '%s'", sema_tname(s, t));
		return NULL;
	}
	return type_simple(s->a, TYPE_MACADDR, 6);
}

static void gen_macaddr(struct cg *cg, const struct node *n, struct cmem dst,
			const struct type *to)
{
	const struct node *a = arg(n, 0);
	cg_zero(cg, dst, 6);
	if (!is_int(a->type)) {
		cg_expr_to(cg, a, dst, a->type);
		return;
	}
	vreg p = cg_reg(cg, cg_expr(cg, a));
	int helper = a->type->space == AS_USER ? BPF_FUNC_probe_read_user :
		a->type->space == AS_KERNEL ? BPF_FUNC_probe_read_kernel :
		cg_user_probe(cg) ? BPF_FUNC_probe_read_user :
		BPF_FUNC_probe_read_kernel;
	cg_callv(cg, helper,
		(struct ir_arg[]){ cg_arg(dst), IR_IMM(6), IR_ARG(p) }, 3);
}

/* skboutput(path, skb, len, offset): the skb's first len bytes, less
 * offset bytes at their start, as a packet in the pcap file at path
 * (RAW IP). Only BTF tracing programs may call bpf_skb_output, with an
 * sk_buff the verifier trusts (args->skb); it returns 0 or -errno, as
 * uint32 (bpftrace 0.17's type). */
static const struct type *check_skboutput(struct sema *s, struct node *n)
{
	const char *path = sema_lit_str(s, n, 0, "the pcap file");
	struct node *a = arg(n, 1);
	const struct type *t = sema_expr(s, a);
	const struct type *len = sema_int_arg(s, n, 2, "the length");
	int64_t off = 0;
	bool off_ok = sema_lit_int(s, n, 3, "the offset", &off);
	if (!path || !t || !len || !off_ok)
		return NULL;
	const struct ctype *skb = t->ctype && t->ctype->kind == CT_PTR ?
		ctypes_pointee(s->prog->ctypes, t->ctype) : NULL;
	if (!is_int(t) || !t->is_ptr ||
	    (skb && !(skb->kind == CT_STRUCT && skb->name &&
		      strcmp(skb->name, "sk_buff") == 0))) {
		sema_error(s, a->pos, "ARG_TYPE", "skboutput() expects a "
			   "struct sk_buff pointer, not '%s'", sema_tname(s, t));
		return NULL;
	}
	if (!*path) {
		sema_error(s, arg(n, 0)->pos, "ARG_TYPE",
			   "skboutput(): the pcap file's name is empty");
		return NULL;
	}
	if (off < 0) {
		sema_error(s, arg(n, 3)->pos, "ARG_TYPE",
			   "skboutput(): the offset is negative");
		return NULL;
	}
	if (s->final && program_add_skb_output(s->prog, path,
					       (uint64_t)off) < 0) {
		sema_error(s, n->pos, "ARG_TYPE", "skboutput(): more than %d "
			   "pcap files and offsets in one script",
			   SONDE_SKB_OUTPUTS_MAX);
		return NULL;
	}
	return type_int(s->a, 32, false);
}

static struct cval gen_skboutput(struct cg *cg, const struct node *n)
{
	const struct type *u32 = type_int(cg->a, 32, false);
	vreg skb;
	if (!cg_btf_pointer(cg, arg(n, 1), &skb)) {
		cg_error(cg, arg(n, 1)->pos, "skboutput(): the kernel takes only "
			 "an sk_buff it can trust: one reached from the probe's "
			 "arguments or retval through -> and . (args->skb)");
		return cg_imm(0, u32);
	}
	int id = program_add_skb_output(cg->prog, lit_arg(n, 0),
					(uint64_t)arg(n, 3)->u.ival);
	struct cmem hdr = cg_alloc(cg, sizeof(struct sonde_skb_record));
	cg_store_int(cg, cg_at(hdr, 0), cg_imm(id, type_u64()));
	/* bpf_skb_output's flags: the length in the upper 32 bits, the
	 * current CPU's buffer (BPF_F_CURRENT_CPU) in the lower */
	vreg len = ir_vreg(cg->ir), flags = ir_vreg(cg->ir),
	     cpu = ir_vreg(cg->ir);
	ir_alui(cg->ir, BPF_LSH, flags, cg_reg(cg, cg_expr(cg, arg(n, 2))), 32);
	ir_alui(cg->ir, BPF_RSH, len, flags, 32);
	cg_store_int(cg, cg_at(hdr, 8), cg_regval(len, type_u64()));
	ir_movi(cg->ir, cpu, (int64_t)BPF_F_CURRENT_CPU);
	ir_alu(cg->ir, BPF_OR, flags, flags, cpu);
	vreg ns = cg_call(cg, BPF_FUNC_ktime_get_boot_ns, NULL, 0);
	cg_store_int(cg, cg_at(hdr, 16), cg_regval(ns, type_u64()));
	vreg r = cg_call(cg, BPF_FUNC_skb_output, (struct ir_arg[]){
			IR_ARG(skb), IR_MAP(cg->prog->skb_map), IR_ARG(flags),
			cg_arg(hdr), IR_IMM(sizeof(struct sonde_skb_record)) }, 5);
	cg_check_helper(cg, r, BPF_FUNC_skb_output);
	vreg ret = ir_vreg(cg->ir);
	ir_alui(cg->ir, BPF_LSH, ret, r, 32);
	ir_alui(cg->ir, BPF_RSH, ret, ret, 32);
	return cg_regval(ret, u32);
}

const struct func funcs_net[] = {
	/* name, arguments min max, flags, needs, check, code (value, memory) */
	{ "ntop", 1, 2, 0, 0, check_ntop, NULL, gen_ntop },
	{ "pton", 1, 1, 0, 0, check_pton, NULL, gen_pton },
	{ "macaddr", 1, 1, 0, 0, check_macaddr, NULL, gen_macaddr },
	{ "skboutput", 4, 4, 0, PROBE_TRACING, check_skboutput, gen_skboutput },
	{ NULL },
};
