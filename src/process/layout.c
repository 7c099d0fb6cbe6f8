/* layout.c - the shared region of one run (runtime/shm.h): every map of
 * the program at its offset, the program section the agents read
 * (agent/proto.h: the bytecode of the probes they run and the sites to
 * patch, with the bytes each site must hold), and the event ring. Built
 * in a memfd that sonde maps and passes to each agent. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../base/file.h"
#include "../base/log.h"
#include "../base/vec.h"
#include "../runtime/rt_int.h"
#include "guard.h"
#include "proc_int.h"

/* The event ring: the kernel engine's floor (4 MiB) when probes run in
 * the target, 64 KiB when every probe runs once in sonde; a ring sized by
 * the compiler (max_entries) is taken as it is. */
#define RING_DEFAULT (4u << 20)
#define RING_ONCE (64u << 10)
#define RING_MAX (256u << 20)
#define PAGE 4096u

static uint64_t ring_size(const struct engine *e, const struct map_spec *m)
{
	uint64_t want = m->max_entries ? m->max_entries :
		proc_uses_agent(e) ? RING_DEFAULT : RING_ONCE;
	uint64_t size = PAGE;
	while (size < want && size < RING_MAX)
		size <<= 1;
	return size;
}

/* The program section, built in memory first. */
struct section {
	VEC(uint8_t) bytes;
	VEC(struct proto_probe) probes;
	VEC(struct proto_site) sites;
	VEC(struct proto_file) files;
	VEC(char) strings;
	VEC(const char *) paths;   /* files[i]'s path */
};

static int add_string(struct section *s, const char *str, uint32_t *off)
{
	*off = (uint32_t)s->strings.n;
	for (const char *c = str; ; c++) {
		int r = vec_push(&s->strings, *c);
		if (r < 0)
			return r;
		if (!*c)
			return 0;
	}
}

static int add_file(struct section *s, const char *path, uint32_t *index)
{
	for (size_t i = 0; i < s->paths.n; i++)
		if (strcmp(s->paths.v[i], path) == 0) {
			*index = (uint32_t)i;
			return 0;
		}
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	struct proto_file f = { .dev = st.st_dev, .ino = st.st_ino };
	int r = add_string(s, path, &f.path_off);
	if (r == 0)
		r = vec_push(&s->files, f);
	if (r == 0)
		r = vec_push(&s->paths, path);
	*index = (uint32_t)s->files.n - 1;
	return r;
}

static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

/* The instruction a USDT note names: sys/sdt.h's 1-byte nop or
 * sonde/sdt.h's 5-byte one (include/sonde/sdt.h says why). */
static int site_bytes(const struct probe *p, struct proto_site *site)
{
	const struct uprobe_info *u = p->uprobe;
	int fd = file_open_regular(u->path, false);
	if (fd < 0) {
		int e = errno;
		log_error("probe %s: cannot read '%s': %s", p->name, u->path,
			  strerror(e));
		return -e;
	}
	ssize_t n = pread(fd, site->expect, sizeof(site->expect),
			  (off_t)u->offset);
	close(fd);
	if (n >= 5 && memcmp(site->expect, nop5, 5) == 0)
		site->len = 5;
	else if (n >= 1 && site->expect[0] == 0x90)
		site->len = 1;
	else {
		log_error("probe %s: the instruction at %s+0x%llx is not a USDT "
			  "site's nop (%02x %02x %02x ...): the process engine "
			  "cannot patch it", p->name, u->path,
			  (unsigned long long)u->offset, site->expect[0],
			  site->expect[1], site->expect[2]);
		return -ENOEXEC;
	}
	memset(site->expect + site->len, 0, sizeof(site->expect) - site->len);
	return 0;
}

/* A probe the agents run: its bytecode, and (USDT) the site they patch;
 * a function probe's site is sonde's to patch (fprobes.c). Its index in
 * the section goes into *section_index. */
static int section_add_probe(struct section *s, const struct probe *p,
			     uint32_t index, bool site_too,
			     uint32_t *section_index)
{
	struct proto_probe pp = { .ninsns = p->ninsns, .index = index };
	int r = add_string(s, p->name, &pp.name_off);
	if (r < 0)
		return r;
	/* bytecode goes in `bytes`; offsets fixed when the section is laid
	 * out (insns_off is relative to `bytes` until then) */
	while (s->bytes.n % 8)
		if ((r = vec_push(&s->bytes, 0)) < 0)
			return r;
	pp.insns_off = (uint32_t)s->bytes.n;
	const uint8_t *code = (const uint8_t *)p->insns;
	for (size_t i = 0; i < (size_t)p->ninsns * sizeof(*p->insns); i++)
		if ((r = vec_push(&s->bytes, code[i])) < 0)
			return r;
	*section_index = (uint32_t)s->probes.n;
	if (!site_too)
		return vec_push(&s->probes, pp);
	struct proto_site site = { .probe = (uint32_t)s->probes.n,
				   .kind = PROTO_SITE_USDT,
				   .offset = p->uprobe->offset,
				   .sema_offset = p->uprobe->ref_ctr_offset,
				   .vaddr = p->uprobe->vaddr };
	if ((r = site_bytes(p, &site)) < 0)
		return r;
	if ((r = add_file(s, p->uprobe->path, &site.file)) < 0) {
		log_error("probe %s: cannot read '%s': %s", p->name,
			  p->uprobe->path, strerror(-r));
		return r;
	}
	if ((r = vec_push(&s->probes, pp)) < 0)
		return r;
	return vec_push(&s->sites, site);
}

static void section_free(struct section *s)
{
	vec_free(&s->bytes);
	vec_free(&s->probes);
	vec_free(&s->sites);
	vec_free(&s->files);
	vec_free(&s->strings);
	vec_free(&s->paths);
}

/* Lay the section out at `at` (NULL: only its size). */
static uint64_t section_write(const struct section *s, uint8_t *at)
{
	struct proto_prog h = { .magic = PROTO_PROG_MAGIC,
				.nprobes = (uint32_t)s->probes.n,
				.nsites = (uint32_t)s->sites.n,
				.nfiles = (uint32_t)s->files.n };
	uint64_t off = RT_ALIGN(sizeof(h), 8);
	uint64_t code_off = off;
	off = RT_ALIGN(off + s->bytes.n, 8);
	h.probes_off = (uint32_t)off;
	off += s->probes.n * sizeof(struct proto_probe);
	h.sites_off = (uint32_t)off;
	off += s->sites.n * sizeof(struct proto_site);
	h.files_off = (uint32_t)off;
	off += s->files.n * sizeof(struct proto_file);
	h.strings_off = (uint32_t)off;
	h.strings_size = (uint32_t)s->strings.n;
	off = RT_ALIGN(off + s->strings.n, 8);
	if (!at)
		return off;
	memcpy(at, &h, sizeof(h));
	if (s->bytes.n)
		memcpy(at + code_off, s->bytes.v, s->bytes.n);
	for (size_t i = 0; i < s->probes.n; i++) {
		struct proto_probe pp = s->probes.v[i];
		pp.insns_off += (uint32_t)code_off;
		memcpy(at + h.probes_off + i * sizeof(pp), &pp, sizeof(pp));
	}
	if (s->sites.n)
		memcpy(at + h.sites_off, s->sites.v,
		       s->sites.n * sizeof(struct proto_site));
	if (s->files.n)
		memcpy(at + h.files_off, s->files.v,
		       s->files.n * sizeof(struct proto_file));
	if (s->strings.n)
		memcpy(at + h.strings_off, s->strings.v, s->strings.n);
	return off;
}

static int write_globals(struct engine *e)
{
	int g = e->prog->globals_map;
	if (g < 0)
		return 0;
	struct sonde_globals *v = rt_map_array_value(&e->rt.maps[g], 0);
	if (!v || e->prog->maps[g].value_size < sizeof(*v))
		return -EINVAL;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	v->start_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	v->cpid = (uint64_t)(e->opts.cpid > 0 ? e->opts.cpid : 0);
	v->filter_pid = (uint64_t)(e->opts.pid > 0 ? e->opts.pid : 0);
	e->globals = v;
	return 0;
}

int proc_region_create(struct engine *e)
{
	const struct program *prog = e->prog;
	struct section sec = { 0 };
	struct rt_map_desc *descs = calloc(prog->nmaps ? prog->nmaps : 1,
					   sizeof(*descs));
	int r = descs ? 0 : -ENOMEM;
	for (uint32_t i = 0; r == 0 && i < e->nprobes; i++) {
		struct proc_probe *pp = &e->probes[i];
		if (pp->req.how == PROCESS_USDT || pp->req.how == PROCESS_FUNC)
			r = section_add_probe(&sec, pp->probe, i,
					      pp->req.how == PROCESS_USDT,
					      &pp->section_index);
		/* a stock sys/sdt.h site: sonde patches it (fprobes.c) */
		if (r == 0 && pp->req.how == PROCESS_USDT && sec.sites.n)
			pp->stock_site = sec.sites.v[sec.sites.n - 1].len == 1;
	}
	if (r < 0)
		goto out;

	struct rt_header h = { .magic = RT_MAGIC, .version = RT_VERSION,
			       .header_size = sizeof(h), .nmaps = prog->nmaps,
			       .nslots = e->opts.follow_forks ? RT_SLOTS_FOLLOW :
					 RT_SLOTS_DEFAULT, .ring_map = -1,
			       .globals_map = prog->globals_map };
	uint64_t off = RT_ALIGN(sizeof(h), RT_CACHELINE);
	h.maps_off = off;
	off += (uint64_t)prog->nmaps * sizeof(struct rt_map_desc);
	for (uint32_t i = 0; i < prog->nmaps; i++) {
		const struct map_spec *m = &prog->maps[i];
		uint32_t key = m->key_size;
		if (!key && (m->kind == MAP_HASH || m->kind == MAP_PERCPU_HASH))
			key = 8;   /* a map without keys: one u64 zero key */
		uint32_t max = m->max_entries ? m->max_entries : 4096;
		r = rt_map_geometry(m->kind, key, m->value_size, max, h.nslots,
				    &descs[i]);
		if (r < 0) {
			log_error("cannot create map %s: %s (%u-byte keys, "
				  "%u-byte values, %u entries)", m->name,
				  r == -E2BIG ? "too large" : "unsupported shape",
				  key, m->value_size, max);
			goto out;
		}
		snprintf(descs[i].name, sizeof(descs[i].name), "%s", m->name);
		off = RT_ALIGN(off, RT_CACHELINE);
		descs[i].off = off;
		off += descs[i].size;
		if (m->kind == MAP_RINGBUF && (int32_t)i == prog->ringbuf_map) {
			h.ring_map = (int32_t)i;
			h.ring_size = ring_size(e, m);
		}
	}
	h.prog_off = RT_ALIGN(off, RT_CACHELINE);
	h.prog_size = section_write(&sec, NULL);
	off = h.prog_off + h.prog_size;
	if (h.ring_map >= 0) {
		h.ring_off = RT_ALIGN(off, PAGE);
		off = h.ring_off + h.ring_size;
	}
	h.size = RT_ALIGN(off, PAGE);

	e->memfd = memfd_create("sonde-region", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (e->memfd < 0 || ftruncate(e->memfd, (off_t)h.size) < 0) {
		r = -errno;
		log_error("cannot create the shared memory of %llu bytes: %s",
			  (unsigned long long)h.size, strerror(-r));
		goto out;
	}
	uint8_t *p = mmap(NULL, h.prog_off + h.prog_size,
			  PROT_READ | PROT_WRITE, MAP_SHARED, e->memfd, 0);
	if (p == MAP_FAILED) {
		r = -errno;
		log_error("cannot map the shared memory: %s", strerror(-r));
		goto out;
	}
	memcpy(p, &h, sizeof(h));
	memcpy(p + h.maps_off, descs, prog->nmaps * sizeof(*descs));
	section_write(&sec, p + h.prog_off);
	munmap(p, h.prog_off + h.prog_size);
	e->region_size = h.size;
	/* The traced process gets the memfd: its size is sealed first, so
	 * that it can neither shrink it under sonde's mappings (a SIGBUS at
	 * sonde's next read) nor grow it; the guard catches a fault anyway
	 * should sealing fail. */
	if (fcntl(e->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
		  F_SEAL_SEAL) < 0)
		log_warn("process engine: cannot seal its shared memory (%s): a "
			 "traced process that truncates it ends its session",
			 strerror(errno));
	r = rt_open(e->memfd, h.size, &e->rt);
	if (r < 0) {
		log_error("cannot map the shared memory: %s", strerror(-r));
		goto out;
	}
	if ((r = guard_add(e->rt.base, e->rt.size)) < 0 ||
	    (e->rt.ring_area &&
	     (r = guard_add(e->rt.ring_area, e->rt.ring_area_len)) < 0)) {
		log_error("process engine: cannot guard its shared memory: %s",
			  strerror(-r));
		goto out;
	}
	r = write_globals(e);
	log_info("process engine: %u maps, %u sites, %llu KiB of shared memory",
		 prog->nmaps, (unsigned)sec.sites.n,
		 (unsigned long long)(h.size >> 10));
out:
	section_free(&sec);
	free(descs);
	return r;
}
