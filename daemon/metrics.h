/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * regionpmd's metrics for fleets: the Prometheus text format, written to
 * MetricsFile= for node_exporter's textfile collector.  Pure: no sd-event,
 * no sd-bus; the manager fills struct rpm_metrics.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct rpm_metrics {
	unsigned regions_in_use, regions_empty, regions_parked, regions_busy;
	uint64_t region_size_bytes;
	uint64_t pages_migrated, pages_dropped, pages_failed;
	unsigned compactions, parks, unparks, released_by_kernel;
	unsigned errors;		/* kernel requests that failed */
	double modelled_power_mw;	/* power_model_regions() */
	double power_down_ratio;	/* share of memory in power-down now */
	bool paused, dry_run;
};

/* Every metric with its # HELP and # TYPE lines.  0 or -errno. */
int metrics_format(FILE *f, const struct rpm_metrics *mx);

/*
 * Atomically replaces @path: written to a hidden temporary file in the same
 * directory (node_exporter ignores names not ending in .prom), mode 0644,
 * then renamed over it, so a reader sees the old or the new file, never a
 * part.  0 or -errno (nothing is left behind on failure).
 */
int metrics_write(const char *path, const struct rpm_metrics *mx);
