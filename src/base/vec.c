/* vec.c - growth policy for VEC(): doubling, never shrinking. */
#include "vec.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int vec_reserve_(void **v, size_t *cap, size_t want, size_t elem)
{
	if (want <= *cap)
		return 0;
	if (!elem || want > SIZE_MAX / 2 / elem)
		return -ENOMEM;
	size_t ncap = *cap ? *cap * 2 : 8;
	while (ncap < want)
		ncap *= 2;
	void *p = realloc(*v, ncap * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = ncap;
	return 0;
}
