/* pcap.h - the pcap files skboutput() writes: one per distinct path,
 * link type RAW (IP packets, no link-layer header), opened before
 * anything is attached and closed at the end, through libpcap. */
#ifndef SONDE_OUTPUT_PCAP_H
#define SONDE_OUTPUT_PCAP_H

#include <stddef.h>

#include "../program.h"

struct pcap_files;

/* Open (create, truncate) every file prog->skb_outputs names, with the
 * same protection as -o in sticky world-writable directories. NULL with
 * the file and the reason printed. A program without skboutput() gets an
 * empty set. */
struct pcap_files *pcap_files_open(const struct program *prog);

/* One perf-buffer record (struct sonde_skb_record, then the packet):
 * written to its call's file from the call's offset on, stamped with the
 * wall clock. A file that fails (disk full) is reported once and not
 * written again. */
void pcap_files_write(void *files, const void *data, size_t size);

/* Flush and close; reports a failed flush. NULL is a no-op. */
void pcap_files_close(struct pcap_files *f);

#endif
