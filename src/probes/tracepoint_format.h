/* tracepoint_format.h - parsing of tracefs "format" files into the
 * fields of a tracepoint's `args` record. Pure text processing: no
 * kernel, no files, so it is unit-tested on copies of real formats. */
#ifndef SONDE_TRACEPOINT_FORMAT_H
#define SONDE_TRACEPOINT_FORMAT_H

#include <stdint.h>

#include "../base/arena.h"
#include "../types.h"

/* Parse a format file's text. The common_ fields are skipped, as
 * bpftrace does (BPF cannot read them through `args`). On success
 * *fields (arena) holds *nfields entries in file order and *size is the
 * record's size up to the end of its last field. Returns 0, or -EINVAL
 * when a field line is malformed or no "format:" section is found. */
int tp_format_parse(struct arena *a, const char *text,
		    struct record_field **fields, uint32_t *nfields,
		    uint32_t *size);

/* The RECORD type for `args`, or NULL (errno set) when the text does
 * not parse. */
const struct type *tp_format_type(struct arena *a, const char *text);

#endif
