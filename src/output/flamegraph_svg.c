/* flamegraph_svg.c - a self-contained interactive SVG flame graph (click to zoom, search, tooltips). */

/*
 * The layout is flamegraph.pl's: one row per stack depth with the root
 * ("all") at the bottom, each frame as wide as its share of the samples,
 * siblings in name order, frames narrower than min_width pixels left
 * out, warm colours derived from the name so a function keeps its colour
 * across graphs. Every frame is a <g> holding a <title> (the tooltip:
 * "name (N samples, P%)"), a <rect> carrying its position in samples
 * (data-s start, data-n count, data-d depth) and a <text> label.
 *
 * The embedded script works from those data attributes alone: zooming
 * re-lays frames out over a sample range, search highlights frames whose
 * name matches a regular expression and reports the share of samples
 * under them (overlapping matches counted once). No external resource is
 * referenced, so the file can be mailed, attached or opened offline.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph_internal.h"

#define FG_FONT_SIZE 12
#define FG_FONT_WIDTH 0.59      /* average glyph width / font size, Verdana */
#define FG_XPAD 10
#define FG_YPAD1 (FG_FONT_SIZE * 3)             /* title and buttons */
#define FG_YPAD2 (FG_FONT_SIZE * 2 + 10)        /* details line */

struct svg_ctx {
	FILE *out;
	const struct flamegraph_opts *o;
	double scale;           /* pixels per sample */
	unsigned height;
	unsigned top;           /* first row of an icicle graph */
	const char *unit;
	uint64_t total;
};

/* Text as XML character data: markup escaped, invalid UTF-8 replaced so
 * the document always parses. */
static void xml_text(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	while (*p && n < max) {
		unsigned char c = *p;
		size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3
			   : (c >> 3) == 30 ? 4 : 0;
		size_t i;

		for (i = 1; i < len; i++)
			if ((p[i] & 0xc0) != 0x80)
				len = 0;
		if (len == 0 || (len == 1 && c < 0x20 && c != '\t')) {
			fputc('?', out);
			p++;
		} else if (c == '&') {
			fputs("&amp;", out);
			p++;
		} else if (c == '<') {
			fputs("&lt;", out);
			p++;
		} else if (c == '>') {
			fputs("&gt;", out);
			p++;
		} else if (c == '"') {
			fputs("&quot;", out);
			p++;
		} else {
			fwrite(p, 1, len, out);
			p += len;
		}
		n++;
	}
}

/* 1234567 -> "1,234,567", as flamegraph.pl writes counts. */
static void put_count(FILE *out, uint64_t v)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v), i;

	for (i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			fputc(',', out);
		fputc(digits[i], out);
	}
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* flamegraph.pl's "hot" palette, seeded by the name. */
static void put_color(FILE *out, const char *name)
{
	uint32_t h = name_hash(name);
	double v1 = (h & 0x3ff) / 1023.0, v2 = ((h >> 10) & 0x3ff) / 1023.0,
	       v3 = ((h >> 20) & 0x3ff) / 1023.0;

	fprintf(out, "rgb(%d,%d,%d)", 205 + (int)(50 * v3), (int)(230 * v1),
		(int)(55 * v2));
}

/* How much of NAME fits in W pixels: the whole, a prefix ending "..",
 * or nothing under three characters (the script does the same). */
static size_t label_chars(const char *name, double w, int *dots)
{
	double room = (w - 6) / (FG_FONT_SIZE * FG_FONT_WIDTH);
	size_t len = strlen(name), max = room > 0 ? (size_t)room : 0;

	*dots = 0;
	if (max < 3)
		return 0;
	if (len <= max)
		return len;
	*dots = 1;
	return max - 2;
}

static void svg_frame(struct svg_ctx *c, const struct fg_node *n,
		      const char *name, uint64_t start, size_t depth)
{
	FILE *out = c->out;
	double x = FG_XPAD + start * c->scale, w = n->total * c->scale;
	unsigned fh = c->o->frame_height;
	double y = c->o->inverted ? c->top + (double)depth * fh
		   : c->height - FG_YPAD2 - (depth + 1) * (double)fh;
	size_t chars;
	int dots;

	fputs("<g><title>", out);
	xml_text(out, name, SIZE_MAX);
	fputs(" (", out);
	put_count(out, n->total);
	fprintf(out, " %s, %.2f%%)</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\""
		" height=\"%u\" fill=\"", c->unit,
		c->total ? 100.0 * n->total / c->total : 0.0, x, y, w, fh - 1);
	put_color(out, name);
	fprintf(out, "\" rx=\"2\" ry=\"2\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64
		"\" data-d=\"%zu\"/><text x=\"%.1f\" y=\"%.1f\">", start, n->total,
		depth, x + 3, y + fh - 4.5);
	chars = label_chars(name, w, &dots);
	xml_text(out, name, chars);
	if (dots)
		fputs("..", out);
	fputs("</text></g>\n", out);
}

static void svg_walk(struct svg_ctx *c, const struct fg_node *n, uint64_t start,
		     size_t depth)
{
	uint64_t x = start;
	size_t i;

	if (n->total * c->scale < c->o->min_width)
		return;
	svg_frame(c, n, n->name ? n->name : "all", start, depth);
	/* callees sit on top of their caller, from its left edge */
	for (i = 0; i < n->nkids; i++) {
		svg_walk(c, n->kids[i], x, depth + 1);
		x += n->kids[i]->total;
	}
}

/* The embedded viewer. Kept free of "]]>" (it sits in a CDATA section). */
static const char fg_script[] =
"\"use strict\";\n"
"var svg, frames, details, searchbtn, matchedtxt, unzoombtn, total, fw, minw;\n"
"var XPAD = 10, FONT = 12, FONTW = 0.59, HILITE = \"rgb(230,0,230)\";\n"
"var zoomed = null, searching = null;\n"
"function init(evt) {\n"
"  svg = document.documentElement;\n"
"  frames = document.getElementById(\"frames\");\n"
"  details = document.getElementById(\"details\").firstChild;\n"
"  searchbtn = document.getElementById(\"search\");\n"
"  matchedtxt = document.getElementById(\"matched\");\n"
"  unzoombtn = document.getElementById(\"unzoom\");\n"
"  fw = +svg.getAttribute(\"width\") - 2 * XPAD;\n"
"  minw = +svg.getAttribute(\"data-minw\");\n"
"  total = frames.children.length ? num(frames.children[0], \"data-n\") : 0;\n"
"  frames.addEventListener(\"click\", function (e) {\n"
"    var g = frame_of(e.target); if (g) zoom(g);\n"
"  });\n"
"  frames.addEventListener(\"mouseover\", function (e) {\n"
"    var g = frame_of(e.target);\n"
"    if (g) details.nodeValue = \"Function: \" + g.querySelector(\"title\").textContent;\n"
"  });\n"
"  frames.addEventListener(\"mouseout\", function () { details.nodeValue = \" \"; });\n"
"  unzoombtn.addEventListener(\"click\", unzoom);\n"
"  searchbtn.addEventListener(\"click\", function () {\n"
"    if (searching === null) search_prompt(); else reset_search();\n"
"  });\n"
"  window.addEventListener(\"keydown\", function (e) {\n"
"    if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) {\n"
"      e.preventDefault(); search_prompt();\n"
"    } else if (e.key === \"Escape\") { reset_search(); unzoom(); }\n"
"  });\n"
"}\n"
"function frame_of(t) {\n"
"  while (t && t.parentNode !== frames) t = t.parentNode;\n"
"  return t;\n"
"}\n"
"function num(g, a) { return +g.querySelector(\"rect\").getAttribute(a); }\n"
"function name_of(g) {\n"
"  return g.querySelector(\"title\").textContent.replace(/ \\([^()]*\\)$/, \"\");\n"
"}\n"
"function label(name, w) {\n"
"  var max = Math.floor((w - 6) / (FONT * FONTW));\n"
"  if (max < 3) return \"\";\n"
"  return name.length <= max ? name : name.substring(0, max - 2) + \"..\";\n"
"}\n"
"function place(g, x, w, cls) {\n"
"  var r = g.querySelector(\"rect\"), t = g.querySelector(\"text\");\n"
"  g.setAttribute(\"class\", cls);\n"
"  if (cls === \"hide\") return;\n"
"  r.setAttribute(\"x\", x.toFixed(1)); r.setAttribute(\"width\", w.toFixed(1));\n"
"  t.setAttribute(\"x\", (x + 3).toFixed(1));\n"
"  t.textContent = label(name_of(g), w);\n"
"}\n"
"/* show the samples [lo, lo + span) across the whole width; frames below\n"
"   depth d that cover it are drawn full width and faded */\n"
"function layout(lo, span, d) {\n"
"  var gs = frames.children, i;\n"
"  for (i = 0; i < gs.length; i++) {\n"
"    var g = gs[i], s = num(g, \"data-s\"), n = num(g, \"data-n\"), gd = num(g, \"data-d\");\n"
"    if (gd < d) {\n"
"      if (s <= lo && s + n >= lo + span) place(g, XPAD, fw, \"parent\");\n"
"      else place(g, 0, 0, \"hide\");\n"
"    } else if (s >= lo && s + n <= lo + span && n / span * fw >= minw) {\n"
"      place(g, XPAD + (s - lo) / span * fw, n / span * fw, \"\");\n"
"    } else place(g, 0, 0, \"hide\");\n"
"  }\n"
"}\n"
"function zoom(g) {\n"
"  zoomed = g;\n"
"  layout(num(g, \"data-s\"), num(g, \"data-n\"), num(g, \"data-d\"));\n"
"  unzoombtn.setAttribute(\"class\", \"\");\n"
"  if (searching !== null) search(searching);\n"
"}\n"
"function unzoom() {\n"
"  if (zoomed === null) return;\n"
"  zoomed = null;\n"
"  layout(0, total, 0);\n"
"  unzoombtn.setAttribute(\"class\", \"hide\");\n"
"  if (searching !== null) search(searching);\n"
"}\n"
"function search_prompt() {\n"
"  var term = prompt(\"Search for (regular expression):\", searching || \"\");\n"
"  if (term !== null && term !== \"\") search(term);\n"
"}\n"
"function reset_search() {\n"
"  var gs = frames.children, i;\n"
"  searching = null;\n"
"  for (i = 0; i < gs.length; i++) {\n"
"    var r = gs[i].querySelector(\"rect\");\n"
"    if (r.hasAttribute(\"data-fill\")) {\n"
"      r.setAttribute(\"fill\", r.getAttribute(\"data-fill\"));\n"
"      r.removeAttribute(\"data-fill\");\n"
"    }\n"
"  }\n"
"  searchbtn.setAttribute(\"class\", \"\");\n"
"  searchbtn.firstChild.nodeValue = \"Search\";\n"
"  matchedtxt.firstChild.nodeValue = \" \";\n"
"}\n"
"function search(term) {\n"
"  var re, gs = frames.children, spans = [], i, matched = 0, end = -1;\n"
"  try { re = new RegExp(term); } catch (e) { alert(e.message); return; }\n"
"  reset_search();\n"
"  searching = term;\n"
"  for (i = 0; i < gs.length; i++) {\n"
"    var g = gs[i], r = g.querySelector(\"rect\");\n"
"    if (!re.test(name_of(g))) continue;\n"
"    r.setAttribute(\"data-fill\", r.getAttribute(\"fill\"));\n"
"    r.setAttribute(\"fill\", HILITE);\n"
"    spans.push([num(g, \"data-s\"), num(g, \"data-n\")]);\n"
"  }\n"
"  /* a matching frame's callees lie inside it: count samples once */\n"
"  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
"  for (i = 0; i < spans.length; i++) {\n"
"    var s = spans[i][0], e = s + spans[i][1];\n"
"    if (e <= end) continue;\n"
"    matched += e - Math.max(s, end); end = e;\n"
"  }\n"
"  searchbtn.setAttribute(\"class\", \"show\");\n"
"  searchbtn.firstChild.nodeValue = \"Reset Search\";\n"
"  matchedtxt.firstChild.nodeValue = \"Matched: \" +\n"
"    (total ? (100 * matched / total).toFixed(1) : \"0.0\") + \"%\";\n"
"}\n";

static const char fg_style[] =
"text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
"#title { text-anchor: middle; font-size: 17px; }\n"
"#subtitle { text-anchor: middle; fill: rgb(160,160,160); }\n"
"#search, #unzoom { cursor: pointer; }\n"
"#search { opacity: 0.5; }\n"
"#search:hover, #search.show { opacity: 1; }\n"
"#matched { text-anchor: end; }\n"
"#frames > g:hover > rect { stroke: black; stroke-width: 0.5; }\n"
"#frames > g { cursor: pointer; }\n"
".hide { display: none; }\n"
".parent { opacity: 0.5; }\n";

int flamegraph_write_svg(const struct flamegraph *fg, FILE *out,
			 const struct flamegraph_opts *opts)
{
	struct flamegraph_opts o = opts ? *opts : (struct flamegraph_opts){ 0 };
	struct svg_ctx c = { .out = out, .o = &o };
	unsigned width;

	if (!o.title)
		o.title = "Flame Graph";
	if (!o.count_name)
		o.count_name = "samples";
	if (!o.width)
		o.width = 1200;
	if (o.width < 2 * FG_XPAD + 100)
		o.width = 2 * FG_XPAD + 100;
	if (!o.frame_height)
		o.frame_height = 16;
	if (o.min_width <= 0)
		o.min_width = 0.1;
	width = o.width;
	c.total = fg->root.total;
	c.unit = o.count_name;
	c.scale = c.total ? (double)(width - 2 * FG_XPAD) / c.total : 0;
	/* the root row "all" plus one row per frame of the deepest stack */
	c.top = FG_YPAD1 + (o.subtitle ? FG_FONT_SIZE * 2 : 0);
	c.height = FG_YPAD1 + FG_YPAD2 + (unsigned)(fg->max_depth + 1) * o.frame_height
		   + (o.subtitle ? FG_FONT_SIZE * 2 : 0);

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\""
		" onload=\"init(evt)\" data-minw=\"%g\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		width, c.height, width, c.height, o.min_width);
	fputs("<!-- Flame graph written by sonde. Click a frame to zoom, Ctrl-F"
	      " or Search to highlight, Esc to reset. -->\n", out);
	fputs("<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
	      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\""
	      " offset=\"95%\"/></linearGradient></defs>\n", out);
	fprintf(out, "<style type=\"text/css\"><![CDATA[\n%s]]></style>\n", fg_style);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n",
		fg_script);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"url(#background)\"/>\n",
		width, c.height);
	fprintf(out, "<text id=\"title\" x=\"%u\" y=\"%d\">", width / 2, FG_FONT_SIZE * 2);
	xml_text(out, o.title, SIZE_MAX);
	fputs("</text>\n", out);
	if (o.subtitle) {
		fprintf(out, "<text id=\"subtitle\" x=\"%u\" y=\"%d\">", width / 2,
			FG_FONT_SIZE * 4);
		xml_text(out, o.subtitle, SIZE_MAX);
		fputs("</text>\n", out);
	}
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", FG_XPAD,
		c.height - FG_FONT_SIZE / 2 - 4);
	fprintf(out, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%d\">Reset Zoom</text>\n",
		FG_XPAD, FG_FONT_SIZE * 2);
	fprintf(out, "<text id=\"search\" x=\"%u\" y=\"%d\">Search</text>\n",
		width - FG_XPAD - 100, FG_FONT_SIZE * 2);
	fprintf(out, "<text id=\"matched\" x=\"%u\" y=\"%u\"> </text>\n",
		width - FG_XPAD, c.height - FG_FONT_SIZE / 2 - 4);
	fputs("<g id=\"frames\">\n", out);
	if (c.total)
		svg_walk(&c, &fg->root, 0, 0);
	fputs("</g>\n</svg>\n", out);
	return ferror(out) ? -EIO : 0;
}
