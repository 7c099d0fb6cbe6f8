/* cg_mem.c - the code generator's building blocks: memory objects (stack
 * frame or scratch map), loads, stores, copies and value conversions. */
#include "cg.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>

/* One error per attempt at a probe: what follows the first is its
 * consequence (a value that does not fit gives one bad offset per store,
 * a hundred thousand for a long literal). Nothing is said while the frame
 * overflows without scratch: the probe is tried again with it. */
void cg_error(struct cg *cg, struct pos pos, const char *fmt, ...)
{
	if (!cg->err && !cg->need_scratch) {
		va_list ap;
		va_start(ap, fmt);
		diag_vadd(cg->d, DIAG_ERROR, pos, "CODEGEN", fmt, ap);
		va_end(ap);
	}
	if (!cg->err)
		cg->err = -EINVAL;
}

struct cmem cg_alloc(struct cg *cg, uint32_t size)
{
	size = (size + 7) & ~7u;
	if (cg->frame + size > cg->frame_limit) {
		if (cg->use_scratch) {
			if (cg->scr + size > CG_SCRATCH_MAX) {
				cg_error(cg, cg->pnode->pos, "%s: the values this "
					 "probe holds at once need more than %u "
					 "bytes of scratch memory", cg->probe->name,
					 CG_SCRATCH_MAX);
				return (struct cmem){ cg->scratch, 0 };
			}
			struct cmem m = { cg->scratch, (int32_t)cg->scr };
			cg->scr += size;
			if (cg->scr > cg->scr_max)
				cg->scr_max = cg->scr;
			return m;
		}
		cg->need_scratch = true;
	}
	cg->frame += size;
	if (cg->frame > cg->frame_max)
		cg->frame_max = cg->frame;
	return (struct cmem){ VR_FP, -(int32_t)cg->frame };
}

struct cmem cg_alloc_untracked(struct cg *cg, uint32_t size)
{
	if (!cg->use_scratch) {
		cg->need_scratch = true;   /* this attempt is tried again */
		return cg_alloc(cg, size);
	}
	size = (size + 7) & ~7u;
	if (cg->scr + size > CG_SCRATCH_MAX) {
		cg_error(cg, cg->pnode->pos, "%s: the values this probe holds "
			 "at once need more than %u bytes of scratch memory",
			 cg->probe->name, CG_SCRATCH_MAX);
		return (struct cmem){ cg->scratch, 0 };
	}
	struct cmem m = { cg->scratch, (int32_t)cg->scr };
	cg->scr += size;
	if (cg->scr > cg->scr_max)
		cg->scr_max = cg->scr;
	return m;
}

struct cg_mark cg_mark(const struct cg *cg)
{
	return (struct cg_mark){ cg->frame, cg->scr };
}

void cg_release(struct cg *cg, struct cg_mark m)
{
	cg->frame = m.frame;
	cg->scr = m.scr;
}

struct cmem cg_at(struct cmem m, int32_t off)
{
	return (struct cmem){ m.base, m.off + off };
}

struct ir_arg cg_arg(struct cmem m)
{
	return (struct ir_arg){ m.base, m.off };
}

vreg cg_addr(struct cg *cg, struct cmem m)
{
	if (m.base != VR_FP && m.off == 0)
		return m.base;
	vreg t = ir_vreg(cg->ir);
	ir_mov(cg->ir, t, m.base);
	ir_alui(cg->ir, BPF_ADD, t, t, m.off);
	return t;
}

struct cval cg_imm(int64_t v, const struct type *t)
{
	return (struct cval){ .kind = CV_IMM, .imm = v, .t = t };
}

struct cval cg_regval(vreg r, const struct type *t)
{
	return (struct cval){ .kind = CV_REG, .r = r, .t = t };
}

struct cval cg_memval(struct cmem m, const struct type *t)
{
	return (struct cval){ .kind = CV_MEM, .m = m, .t = t };
}

vreg cg_reg(struct cg *cg, struct cval v)
{
	vreg r;
	switch (v.kind) {
	case CV_REG:
		return v.r;
	case CV_IMM:
		r = ir_vreg(cg->ir);
		ir_movi(cg->ir, r, v.imm);
		return r;
	default:
		/* A scalar kept in memory (e.g. a ksym value). */
		return cg_load(cg, BPF_DW, v.m);
	}
}

static int16_t off16(struct cg *cg, int32_t off)
{
	if (off < INT16_MIN || off > INT16_MAX) {
		cg_error(cg, cg->pnode->pos, "memory offset %d out of range",
			 off);
		return 0;
	}
	return (int16_t)off;
}

vreg cg_load(struct cg *cg, uint8_t size, struct cmem m)
{
	vreg d = ir_vreg(cg->ir);
	ir_ldx(cg->ir, size, d, m.base, off16(cg, m.off));
	return d;
}

void cg_store_int(struct cg *cg, struct cmem dst, struct cval v)
{
	if (v.kind == CV_IMM)
		ir_st(cg->ir, BPF_DW, dst.base, off16(cg, dst.off), v.imm);
	else
		ir_stx(cg->ir, BPF_DW, dst.base, off16(cg, dst.off),
		       cg_reg(cg, v));
}

static const uint8_t sizes[] = { BPF_DW, BPF_W, BPF_H, BPF_B };
static const uint32_t widths[] = { 8, 4, 2, 1 };

void cg_zero(struct cg *cg, struct cmem dst, uint32_t size)
{
	uint32_t o = 0;
	for (int k = 0; k < 4; k++)
		for (; o + widths[k] <= size; o += widths[k])
			ir_st(cg->ir, sizes[k], dst.base,
			      off16(cg, dst.off + (int32_t)o), 0);
}

void cg_zero_padding(struct cg *cg, struct cmem dst, const struct type *t)
{
	uint32_t at = 0;
	for (uint32_t i = 0; i <= t->nfields; i++) {
		uint32_t next = i < t->nfields ? t->offsets[i] : t->size;
		while (at < next) {
			/* the widest store aligned where it lands (the
			 * verifier wants aligned stack accesses) */
			int k = 0;
			int32_t o = dst.off + (int32_t)at;
			while (widths[k] > next - at || o % (int32_t)widths[k])
				k++;
			ir_st(cg->ir, sizes[k], dst.base, off16(cg, o), 0);
			at += widths[k];
		}
		if (i < t->nfields && t->offsets[i] + t->fields[i]->size > at)
			at = t->offsets[i] + t->fields[i]->size;
	}
}

void cg_copy(struct cg *cg, struct cmem dst, struct cmem src, uint32_t size)
{
	uint32_t o = 0;
	for (int k = 0; k < 4; k++)
		for (; o + widths[k] <= size; o += widths[k]) {
			vreg t = cg_load(cg, sizes[k],
					 cg_at(src, (int32_t)o));
			ir_stx(cg->ir, sizes[k], dst.base,
			       off16(cg, dst.off + (int32_t)o), t);
		}
}

static bool is_scalar(const struct cval *v)
{
	return v->kind != CV_MEM;
}

void cg_store(struct cg *cg, struct cmem dst, struct cval v,
	      const struct type *to)
{
	if (!to)
		to = v.t;
	if (is_scalar(&v)) {
		cg_store_int(cg, dst, v);
		if (to && to->size > 8)
			cg_zero(cg, cg_at(dst, 8), to->size - 8);
		return;
	}
	if (v.t->kind == TYPE_TUPLE && to->kind == TYPE_TUPLE &&
	    v.t->nfields == to->nfields && !type_equal(v.t, to)) {
		cg_zero_padding(cg, dst, to);
		for (uint32_t i = 0; i < to->nfields; i++) {
			/* a record's fields by name (sema matched them) */
			int j = to->names && v.t->names ?
				type_field_index(v.t, to->names[i]) : (int)i;
			if (j < 0) {
				cg_error(cg, cg->pos, "record field '%s' is "
					 "missing", to->names[i]);
				return;
			}
			const struct type *ft = v.t->fields[j];
			struct cmem src = cg_at(v.m, (int32_t)v.t->offsets[j]);
			struct cval fv = ft->kind == TYPE_INT ?
				cg_regval(cg_load(cg, BPF_DW, src), ft) :
				cg_memval(src, ft);
			cg_store(cg, cg_at(dst, (int32_t)to->offsets[i]), fv,
				 to->fields[i]);
		}
		return;
	}
	uint32_t n = v.t->size < to->size ? v.t->size : to->size;
	cg_copy(cg, dst, v.m, n);
	if (n < to->size)
		cg_zero(cg, cg_at(dst, (int32_t)n), to->size - n);
}

void cg_normalize(struct cg *cg, vreg r, const struct type *t)
{
	if (!t || t->kind != TYPE_INT || t->bits >= 64 || t->bits == 0)
		return;
	int sh = 64 - t->bits;
	if (t->is_signed) {
		ir_alui(cg->ir, BPF_LSH, r, r, sh);
		ir_alui(cg->ir, BPF_ARSH, r, r, sh);
	} else if (t->bits == 32) {
		ir_alui(cg->ir, BPF_LSH, r, r, sh);
		ir_alui(cg->ir, BPF_RSH, r, r, sh);
	} else {
		ir_alui(cg->ir, BPF_AND, r, r, (1ll << t->bits) - 1);
	}
}

vreg cg_call(struct cg *cg, int helper, const struct ir_arg *args, int n)
{
	vreg d = ir_vreg(cg->ir);
	ir_call(cg->ir, d, helper, args, n);
	return d;
}

void cg_callv(struct cg *cg, int helper, const struct ir_arg *args, int n)
{
	ir_call(cg->ir, VR_NONE, helper, args, n);
}

vreg cg_globals_ptr(struct cg *cg)
{
	struct cg_mark mk = cg_mark(cg);
	struct cmem key = cg_alloc(cg, 8);
	ir_st(cg->ir, BPF_W, key.base, (int16_t)key.off, 0);
	vreg p = cg_call(cg, BPF_FUNC_map_lookup_elem,
			 (struct ir_arg[]){ IR_MAP(cg->prog->globals_map),
					    cg_arg(key) }, 2);
	cg_release(cg, mk);
	return p;
}

vreg cg_global(struct cg *cg, uint32_t off)
{
	vreg r = ir_vreg(cg->ir);
	ir_movi(cg->ir, r, 0);
	if (cg->prog->globals_map < 0)
		return r;
	vreg p = cg_globals_ptr(cg);
	uint32_t skip = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JEQ, p, 0, skip);
	ir_ldx(cg->ir, BPF_DW, r, p, (int16_t)off);
	ir_place(cg->ir, skip);
	return r;
}
