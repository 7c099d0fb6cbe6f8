/* cpu_hot_nofp.c - cpu_hot built like a distribution binary: -O2 without frame pointers (see the Makefile), for tests that unwind it. */
#include "cpu_hot.c"
