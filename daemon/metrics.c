// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics.h"

static void header(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

int metrics_format(FILE *f, const struct rpm_metrics *mx)
{
	header(f, "regionpm_regions", "gauge",
	       "Memory regions with memory, by state (empty: active and all pages free).");
	fprintf(f, "regionpm_regions{state=\"in_use\"} %u\n", mx->regions_in_use);
	fprintf(f, "regionpm_regions{state=\"empty\"} %u\n", mx->regions_empty);
	fprintf(f, "regionpm_regions{state=\"parked\"} %u\n", mx->regions_parked);
	fprintf(f, "regionpm_regions{state=\"busy\"} %u\n", mx->regions_busy);
	header(f, "regionpm_region_size_bytes", "gauge", "Size of one region.");
	fprintf(f, "regionpm_region_size_bytes %" PRIu64 "\n", mx->region_size_bytes);
	header(f, "regionpm_pages_migrated_total", "counter",
	       "Pages migrated out of regions by this daemon.");
	fprintf(f, "regionpm_pages_migrated_total %" PRIu64 "\n", mx->pages_migrated);
	header(f, "regionpm_pages_dropped_total", "counter",
	       "Clean page cache pages dropped from regions by this daemon.");
	fprintf(f, "regionpm_pages_dropped_total %" PRIu64 "\n", mx->pages_dropped);
	header(f, "regionpm_pages_failed_total", "counter",
	       "Pages a compaction could not move.");
	fprintf(f, "regionpm_pages_failed_total %" PRIu64 "\n", mx->pages_failed);
	header(f, "regionpm_compactions_total", "counter", "Compaction requests that ran.");
	fprintf(f, "regionpm_compactions_total %u\n", mx->compactions);
	header(f, "regionpm_parks_total", "counter", "Regions parked by this daemon.");
	fprintf(f, "regionpm_parks_total %u\n", mx->parks);
	header(f, "regionpm_releases_total", "counter",
	       "Parked regions given back, by who gave them back.");
	fprintf(f, "regionpm_releases_total{by=\"daemon\"} %u\n", mx->unparks);
	fprintf(f, "regionpm_releases_total{by=\"kernel\"} %u\n", mx->released_by_kernel);
	header(f, "regionpm_errors_total", "counter",
	       "Kernel requests (compact, park, unpark) that failed.");
	fprintf(f, "regionpm_errors_total %u\n", mx->errors);
	header(f, "regionpm_modelled_power_watts", "gauge",
	       "DRAM power of all regions by the daemon's power model.");
	fprintf(f, "regionpm_modelled_power_watts %.6f\n", mx->modelled_power_mw / 1000.0);
	header(f, "regionpm_power_down_ratio", "gauge",
	       "Share of the regions' memory that the model has in power-down now.");
	fprintf(f, "regionpm_power_down_ratio %.6f\n", mx->power_down_ratio);
	header(f, "regionpm_paused", "gauge", "1 while paused (D-Bus Pause()) or a dry run.");
	fprintf(f, "regionpm_paused %d\n", mx->paused || mx->dry_run);
	return ferror(f) ? -EIO : 0;
}

int metrics_write(const char *path, const struct rpm_metrics *mx)
{
	char tmp[PATH_MAX];
	const char *base = strrchr(path, '/');
	FILE *f;
	int fd, r;

	base = base ? base + 1 : path;
	if (!*base)
		return -EISDIR;
	if (snprintf(tmp, sizeof(tmp), "%.*s.%s.tmp", (int)(base - path), path, base) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	/* readable by node_exporter whatever the daemon's umask */
	if (fchmod(fd, 0644) < 0) {
		r = -errno;
		close(fd);
		unlink(tmp);
		return r;
	}
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		unlink(tmp);
		return r;
	}
	r = metrics_format(f, mx);
	if (fflush(f) != 0 && !r)
		r = -errno;
	if (fclose(f) != 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}
