/* glob.h - the one glob matcher: '*' (any run, empty too) and '?' (any
 * one byte), nothing else (no classes, no escapes), as bpftrace's probe
 * and symbol wildcards have it. */
#ifndef SONDE_GLOB_H
#define SONDE_GLOB_H

#include <stdbool.h>

/* Does pattern match the whole of s? */
bool glob_match(const char *pattern, const char *s);

#endif
