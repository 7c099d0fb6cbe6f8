/* pcap.c - see pcap.h.
 *
 * As bpftrace 0.17 does: libpcap's dumper on a "dead" handle of link type
 * DLT_RAW and 65535 bytes of snapshot, one per file. Calls that name the
 * same path (with different offsets) share its dumper, so they do not
 * truncate each other's file. The packet's time is the BPF side's
 * boot-clock reading plus the wall clock's distance from it, taken once
 * at start (bpftrace's boot time).
 *
 * libpcap is opened here, at run time, by the scripts that call
 * skboutput(): linked in, it and the libraries it needs (dbus, systemd,
 * gcrypt and five more) were loaded and relocated at every start of
 * every script, a third of `BEGIN { exit(); }`'s time in the dynamic
 * loader. The header still declares each function, and each pointer
 * below takes its type from that declaration. */
#include "pcap.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
/* libpcap's <pcap/bpf.h> defines a struct bpf_insn of its own (classic
 * BPF), which <linux/bpf.h> (program.h) defines too */
#define PCAP_DONT_INCLUDE_PCAP_BPF_H
#include <pcap/dlt.h>
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/log.h"
#include "../base/outfile.h"

#define SNAPLEN 65535   /* bpftrace's, and the largest IPv4 packet */

/* The names libpcap's shared object goes by: Debian's (libpcap0.8), then
 * upstream's. */
static const char *const pcap_sonames[] = {
	"libpcap.so.0.8", "libpcap.so.1", "libpcap.so",
};

static struct pcap_lib {
	__typeof__(pcap_open_dead) *open_dead;
	__typeof__(pcap_dump_fopen) *dump_fopen;
	__typeof__(pcap_geterr) *geterr;
	__typeof__(pcap_dump) *dump;
	__typeof__(pcap_dump_file) *dump_file;
	__typeof__(pcap_dump_flush) *dump_flush;
	__typeof__(pcap_dump_close) *dump_close;
	__typeof__(pcap_close) *close;
} pcaplib;  /* process-wide: filled once, by the first pcap_files_open */

/* dlsym's void * into a function pointer (ISO C has no such cast;
 * POSIX makes them the same size) */
static bool pcap_sym(void *h, void *field, const char *name)
{
	void *p = dlsym(h, name);
	memcpy(field, &p, sizeof(p));
	return p != NULL;
}

static int pcap_load(void)
{
	if (pcaplib.close)
		return 0;
	void *h = NULL;
	for (size_t i = 0; !h && i < sizeof(pcap_sonames) / sizeof(*pcap_sonames); i++)
		h = dlopen(pcap_sonames[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		log_error("skboutput(): cannot load libpcap (Debian's "
			  "libpcap0.8 package): %s", dlerror());
		return -ENOENT;
	}
	/* close last: it says all the others are there */
	if (pcap_sym(h, &pcaplib.open_dead, "pcap_open_dead") &&
	    pcap_sym(h, &pcaplib.dump_fopen, "pcap_dump_fopen") &&
	    pcap_sym(h, &pcaplib.geterr, "pcap_geterr") &&
	    pcap_sym(h, &pcaplib.dump, "pcap_dump") &&
	    pcap_sym(h, &pcaplib.dump_file, "pcap_dump_file") &&
	    pcap_sym(h, &pcaplib.dump_flush, "pcap_dump_flush") &&
	    pcap_sym(h, &pcaplib.dump_close, "pcap_dump_close") &&
	    pcap_sym(h, &pcaplib.close, "pcap_close"))
		return 0;
	log_error("skboutput(): libpcap lacks a function sonde needs: %s",
		  dlerror());
	pcaplib.close = NULL;
	dlclose(h);
	return -ENOENT;
}

struct pcap_file {
	const char *path;
	pcap_dumper_t *dumper;
	bool failed;                /* reported; nothing more is written */
};

struct pcap_files {
	pcap_t *dead;
	struct pcap_file *files;    /* distinct paths */
	uint32_t nfiles;
	uint32_t *file_of;          /* per skb output: its file */
	uint32_t noutputs;
	const struct skb_output *outputs;
	uint64_t boot_to_wall_ns;
	unsigned long long bad;     /* records that made no sense */
};

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int open_file(struct pcap_files *pf, const char *path,
		     struct pcap_file *out)
{
	char why[PATH_MAX + 256];
	FILE *f = outfile_open(path, why, sizeof(why));
	if (!f) {
		log_error("skboutput(): cannot write the pcap file %s: %s", path,
			  *why ? why : strerror(errno));
		return -1;
	}
	out->path = path;
	out->dumper = pcaplib.dump_fopen(pf->dead, f);
	if (!out->dumper) {
		log_error("skboutput(): cannot write the pcap file %s: %s", path,
			  pcaplib.geterr(pf->dead));
		fclose(f);
		return -1;
	}
	return 0;
}

struct pcap_files *pcap_files_open(const struct program *prog)
{
	struct pcap_files *pf = calloc(1, sizeof(*pf));
	if (!pf)
		goto nomem;
	pf->outputs = prog->skb_outputs;
	pf->noutputs = prog->nskb_outputs;
	if (!pf->noutputs)
		return pf;
	if (pcap_load() < 0) {
		free(pf);
		return NULL;
	}
	pf->boot_to_wall_ns = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME);
	pf->dead = pcaplib.open_dead(DLT_RAW, SNAPLEN);
	pf->files = calloc(pf->noutputs, sizeof(*pf->files));
	pf->file_of = calloc(pf->noutputs, sizeof(*pf->file_of));
	if (!pf->dead || !pf->files || !pf->file_of)
		goto nomem;
	for (uint32_t i = 0; i < pf->noutputs; i++) {
		const char *path = pf->outputs[i].path;
		uint32_t j = 0;
		while (j < pf->nfiles && strcmp(pf->files[j].path, path) != 0)
			j++;
		if (j == pf->nfiles) {
			if (open_file(pf, path, &pf->files[j]) < 0) {
				pcap_files_close(pf);
				return NULL;
			}
			pf->nfiles++;
		}
		pf->file_of[i] = j;
	}
	return pf;
nomem:
	log_error("skboutput(): %s", strerror(ENOMEM));
	pcap_files_close(pf);
	return NULL;
}

void pcap_files_write(void *files, const void *data, size_t size)
{
	struct pcap_files *pf = files;
	struct sonde_skb_record h;
	if (!pf || size < sizeof(h))
		return;
	memcpy(&h, data, sizeof(h));
	/* the packet is len bytes; the perf buffer pads records to 8 */
	if (h.id >= pf->noutputs || h.len > size - sizeof(h)) {
		pf->bad++;
		return;
	}
	struct pcap_file *f = &pf->files[pf->file_of[h.id]];
	uint64_t off = pf->outputs[h.id].offset;
	if (f->failed)
		return;
	uint64_t ns = h.ns + pf->boot_to_wall_ns;
	uint32_t len = off < h.len ? (uint32_t)(h.len - off) : 0;
	/* what is kept of a packet is at most the file's snapshot length,
	 * its length on the wire stays whole (as tcpdump -s writes them) */
	struct pcap_pkthdr ph = {
		.ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			.tv_usec = (suseconds_t)(ns % 1000000000ull / 1000) },
		.caplen = len < SNAPLEN ? len : SNAPLEN, .len = len,
	};
	errno = 0;
	pcaplib.dump((u_char *)f->dumper, &ph,
		  (const u_char *)data + sizeof(h) + (len ? off : 0));
	if (ferror(pcaplib.dump_file(f->dumper))) {
		log_error("skboutput(): writing %s: %s (no more packets go "
			  "there)", f->path, strerror(errno ? errno : EIO));
		f->failed = true;
	}
}

void pcap_files_close(struct pcap_files *pf)
{
	if (!pf)
		return;
	for (uint32_t i = 0; i < pf->nfiles; i++) {
		struct pcap_file *f = &pf->files[i];
		if (!f->dumper)
			continue;
		if (!f->failed && (pcaplib.dump_flush(f->dumper) < 0 ||
				   ferror(pcaplib.dump_file(f->dumper))))
			log_error("skboutput(): writing %s: %s", f->path,
				  strerror(errno ? errno : EIO));
		pcaplib.dump_close(f->dumper);
	}
	if (pf->bad)
		log_warn("skboutput(): %llu malformed packet records ignored",
			 pf->bad);
	if (pf->dead)
		pcaplib.close(pf->dead);
	free(pf->files);
	free(pf->file_of);
	free(pf);
}
