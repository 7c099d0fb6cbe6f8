/* info.h - `sonde --info` (info.c). */
#ifndef SONDE_INFO_H
#define SONDE_INFO_H

#include <stdio.h>

#include "base/dialect.h"

/* Print the --info sections to out (as that bpftrace lists them): 0,
 * or -1 when the write failed. */
int info_print(FILE *out, enum dialect dialect);

#endif
