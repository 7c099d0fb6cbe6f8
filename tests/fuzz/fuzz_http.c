/* fuzz_http.c - libFuzzer target: the metrics endpoint's request parser
 * (export/http.c) on arbitrary bytes, as any client on the network may
 * send them, fed whole and in every split a slow client could make; a
 * complete request is one whose answer names a known method and path. */
#include "export/http.h"

#include <errno.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct http_request r;
	int whole = http_parse_request((const char *)data, size, &r);
	if (whole != 0 && whole != 1 && whole != -EBADMSG)
		abort();
	if (whole == 1 && (r.method > HTTP_OTHER_METHOD ||
			   r.path > HTTP_PATH_OTHER || r.format >= HTTP_NFORMATS))
		abort();
	/* a prefix of a request is never more complete than the whole */
	for (size_t n = 0; n < size && n < 512; n++) {
		int part = http_parse_request((const char *)data, n, &r);
		if (part == 1 && whole == -EBADMSG)
			abort();
	}
	return 0;
}
