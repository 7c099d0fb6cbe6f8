/* unwind_target_fp.c - unwind_target built with frame pointers and no CFI (PROG_FLAGS_unwind_target_fp), for the unwinder's fallback. */
#include "unwind_target.c"
