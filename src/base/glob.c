/* glob.c - the one glob matcher (glob.h). */
#include "glob.h"

#include <stddef.h>

/* Iterative: on a mismatch after a '*', let that star eat one more byte
 * and retry. Linear in practice, no recursion on hostile patterns. */
bool glob_match(const char *p, const char *s)
{
	const char *star = NULL, *resume = NULL;
	while (*s) {
		if (*p == '*') {
			star = ++p;
			resume = s;
		} else if (*p == '?' || *p == *s) {
			p++;
			s++;
		} else if (star) {
			p = star;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}
