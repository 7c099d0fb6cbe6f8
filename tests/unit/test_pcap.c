/* test_pcap.c - skboutput()'s pcap files (src/output/pcap.c), fed the
 * perf-buffer records the BPF side writes (struct sonde_skb_record, then
 * the packet, padded to 8 bytes), read back byte for byte: the file
 * header (link type RAW), each packet from its call's offset, two calls
 * sharing one path, malformed records, and an unwritable path. The
 * kernel side runs in the kernel tier (tests/kernel/run), on a kernel
 * that allows fentry. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "output/pcap.h"
#include "unit.h"

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One record as bpf_skb_output leaves it: header, len bytes, padding. */
static size_t record(uint8_t *buf, uint64_t id, const char *pkt, uint64_t len,
		     uint64_t ns)
{
	struct sonde_skb_record h = { .id = id, .len = len, .ns = ns };
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), pkt, len);
	size_t n = sizeof(h) + len;
	while ((n + 4) % 8)
		buf[n++] = 0xee;   /* the perf buffer's padding */
	return n;
}

int main(void)
{
	char dir[] = "/tmp/sonde-test-pcap.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char a[128], b[128], bad[128];
	snprintf(a, sizeof(a), "%s/a.pcap", dir);
	snprintf(b, sizeof(b), "%s/b.pcap", dir);
	snprintf(bad, sizeof(bad), "%s/no/such/dir.pcap", dir);

	/* calls 0 and 2 share a.pcap, with offsets 14 and 0 */
	struct skb_output outs[] = {
		{ .path = a, .offset = 14 },
		{ .path = b, .offset = 0 },
		{ .path = a, .offset = 0 },
	};
	struct program prog = { .skb_outputs = outs, .nskb_outputs = 3 };
	struct pcap_files *pf = pcap_files_open(&prog);
	CHECK(pf != NULL, "opens the files skboutput() names");
	if (!pf)
		return UNIT_DONE();

	const char eth_ip[] = "ETHERNET-HDR##IP-PACKET";  /* 14 + 9 bytes */
	uint8_t buf[256];
	size_t n = record(buf, 0, eth_ip, 23, 5000000000ull);
	pcap_files_write(pf, buf, n);
	n = record(buf, 1, "whole", 5, 5000000000ull);
	pcap_files_write(pf, buf, n);
	n = record(buf, 2, "xy", 2, 5000000000ull);
	pcap_files_write(pf, buf, n);
	n = record(buf, 0, "short", 5, 1);    /* shorter than the offset */
	pcap_files_write(pf, buf, n);
	n = record(buf, 7, "no such call", 12, 1);
	pcap_files_write(pf, buf, n);
	n = record(buf, 1, "abc", 3, 1);
	((struct sonde_skb_record *)buf)->len = 200;   /* longer than it is */
	pcap_files_write(pf, buf, n);
	pcap_files_write(pf, buf, 10);                 /* not even a header */
	pcap_files_close(pf);

	size_t len;
	uint8_t *d = (uint8_t *)file_read(a, &len);
	CHECK(d && len >= 24, "a.pcap: written");
	if (d && len >= 24) {
		CHECK(le32(d) == 0xa1b2c3d4, "a.pcap: pcap magic (microseconds)");
		CHECK(le32(d + 16) == 65535, "a.pcap: snapshot length 65535");
		CHECK(le32(d + 20) == 101, "a.pcap: link type RAW (LINKTYPE_RAW 101)");
		/* three packets: 9 bytes, 2 bytes, 0 bytes */
		CHECK(len == 24 + 16 + 9 + 16 + 2 + 16 + 0,
		      "a.pcap: the three packets of its two calls, nothing else");
		if (len == 24 + 16 + 9 + 16 + 2 + 16) {
			const uint8_t *p = d + 24;
			CHECK(le32(p + 8) == 9 && le32(p + 12) == 9 &&
			      memcmp(p + 16, "IP-PACKET", 9) == 0,
			      "offset 14: the packet after the ethernet header");
			CHECK(le32(p) - le32(d + 24 + 16 + 9) == 0,
			      "packets stamped by the boot clock keep their order");
			p += 16 + 9;
			CHECK(le32(p + 8) == 2 && memcmp(p + 16, "xy", 2) == 0,
			      "offset 0 in the same file: the whole packet");
			p += 16 + 2;
			CHECK(le32(p + 8) == 0, "a packet shorter than the offset: empty");
		}
		/* the wall clock: boot-clock 5 s plus boot time, after 2020 */
		CHECK(le32(d + 24) > 1577836800u, "stamped with the wall clock");
	}
	free(d);
	d = (uint8_t *)file_read(b, &len);
	CHECK(d && len == 24 + 16 + 5 && memcmp(d + 24 + 16, "whole", 5) == 0,
	      "b.pcap: its one packet; the malformed records went nowhere");
	free(d);

	/* an unwritable path: NULL, nothing half-opened left */
	struct skb_output bad_out[] = { { .path = a, .offset = 0 },
					{ .path = bad, .offset = 0 } };
	struct program bad_prog = { .skb_outputs = bad_out, .nskb_outputs = 2 };
	CHECK(pcap_files_open(&bad_prog) == NULL,
	      "a path that cannot be written: an error");
	struct program none = { 0 };
	pf = pcap_files_open(&none);
	CHECK(pf != NULL, "a program without skboutput(): an empty set");
	pcap_files_close(pf);

	unlink(a);
	unlink(b);
	rmdir(dir);
	return UNIT_DONE();
}
