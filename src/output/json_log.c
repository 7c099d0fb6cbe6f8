/* json_log.c - sonde's own messages and diagnostics as JSON lines on
 * stderr (-f json's log_line): a file of its own so that the diagnostic
 * renderer's fuzz target links it without the rest of output/. */
#include "output.h"

#include <stdio.h>

/* sonde's own messages and diagnostics on stderr (log.h): ", \,
 * newline, tab by name, other control bytes and DEL as \u00XX, bytes
 * from 0x80 as they are. */
void output_json_log_line(FILE *out, const char *type, const char *msg)
{
	fprintf(out, "{\"type\": \"%s\", \"data\": \"", type);
	for (const char *s = msg; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputs("\"}\n", out);
}
