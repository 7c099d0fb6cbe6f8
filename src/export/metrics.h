/* metrics.h - the running program's maps as Prometheus metrics, served
 * over HTTP (--metrics): OpenMetrics 1.0 or Prometheus text 0.0.4, as
 * the scraper asks.
 *
 * Mapping (README "Metrics for Prometheus"): map @NAME is the metric
 * family sonde_NAME (@ alone: sonde_anon); each key field is a label
 * (key, or key0, key1, ...; --metrics-labels names them), every
 * kstack/ustack of a key is folded into one label, stack="root;...;leaf";
 * count() and sum() are counters, min(), max(), avg() and integers
 * (maps of plain integers only when --metrics-maps names them) gauges, stats() a summary (_count, _sum), hist() and lhist()
 * histograms. sonde adds sonde_events_lost_total and
 * sonde_map_updates_failed_total{map="@NAME"}. */
#ifndef SONDE_EXPORT_METRICS_H
#define SONDE_EXPORT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../output/output.h"
#include "../program.h"

struct metrics;

/* Check --metrics-maps ("@a,@b": only those; NULL: every aggregation)
 * and --metrics-labels specs ("@MAP:NAME[,NAME...]") against PROG and
 * listen on ADDR (http.h; NULL: no server, for tests): NULL with a
 * message when one is wrong (errno EINVAL: a usage error). Called
 * before anything is attached. */
struct metrics *metrics_new(const char *addr, const struct program *prog,
			    const char *maps, const char *const *labels,
			    size_t nlabels);
/* Where it listens: "http://127.0.0.1:9477/metrics". */
const char *metrics_url(const struct metrics *m);
/* The output that reads the maps (before the first step). */
void metrics_set_output(struct metrics *m, struct output *o);
/* One turn of the event loop: serve the sockets and render at most one
 * map of a scrape in progress. LOST: the engine's lost events so far. */
void metrics_step(struct metrics *m, uint64_t lost);
/* Work is waiting: the event loop should not sleep before the next step. */
bool metrics_busy(const struct metrics *m);
void metrics_free(struct metrics *m);

/* The whole exposition at once, as a scrape would see it (tests):
 * malloc'd text or NULL. */
char *metrics_render(struct metrics *m, bool openmetrics, uint64_t lost,
		     size_t *len);

#endif
