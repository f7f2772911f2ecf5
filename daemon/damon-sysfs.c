// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * DAMON paddr pageout of one physical range (damon-sysfs.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "damon-sysfs.h"
#include "procfs-util.h"

#define KD	RPM_SYS_DAMON_ADMIN "/kdamonds"
#define CTX	KD "/0/contexts/0"
#define SCHEME	CTX "/schemes/0"

static int put(const char *root, const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int put(const char *root, const char *rel, const char *fmt, ...)
{
	char path[PATH_MAX], val[64];
	va_list ap;
	ssize_t w;
	int fd, r = 0, n;

	va_start(ap, fmt);
	n = vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s%s", root ? root : "", rel);
	fd = open(path, O_WRONLY | O_CLOEXEC | O_TRUNC);
	if (fd < 0)
		return -errno;
	w = write(fd, val, (size_t)n);
	if (w < 0)
		r = -errno;
	else if (w != n)
		r = -EIO;
	close(fd);
	return r;
}

static int get_u64(const char *root, const char *rel, uint64_t *v)
{
	char buf[64], *end;
	ssize_t n = procfs_read_file(root, rel, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return -EBADMSG;
	return 0;
}

int damon_sysfs_probe(const char *root)
{
	uint64_t n;

	return get_u64(root, KD "/nr_kdamonds", &n);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int damon_sysfs_setup(const char *root, const struct damon_pageout *p)
{
	unsigned sample = p->sample_us ? p->sample_us : 5000;
	unsigned aggr = p->aggr_us ? p->aggr_us : 100000;
	uint64_t min_age = (p->min_age_us + aggr - 1) / aggr;	/* in aggregation intervals */
	int r = 0;

	/* Each directory appears when the count above it is written. */
	r = r ?: put(root, KD "/0/contexts/nr_contexts", "1");
	r = r ?: put(root, CTX "/operations", "paddr");
	r = r ?: put(root, CTX "/monitoring_attrs/intervals/sample_us", "%u", sample);
	r = r ?: put(root, CTX "/monitoring_attrs/intervals/aggr_us", "%u", aggr);
	r = r ?: put(root, CTX "/monitoring_attrs/intervals/update_us", "%u", aggr * 10);
	r = r ?: put(root, CTX "/targets/nr_targets", "1");
	r = r ?: put(root, CTX "/targets/0/regions/nr_regions", "1");
	/* end before start: a start above the old end is refused otherwise */
	r = r ?: put(root, CTX "/targets/0/regions/0/end", "%" PRIu64, p->end);
	r = r ?: put(root, CTX "/targets/0/regions/0/start", "%" PRIu64, p->start);
	r = r ?: put(root, CTX "/schemes/nr_schemes", "1");
	r = r ?: put(root, SCHEME "/action", "pageout");
	r = r ?: put(root, SCHEME "/access_pattern/sz/max", "%" PRIu64, p->end - p->start);
	r = r ?: put(root, SCHEME "/access_pattern/sz/min", "0");
	r = r ?: put(root, SCHEME "/access_pattern/nr_accesses/max", "0");
	r = r ?: put(root, SCHEME "/access_pattern/nr_accesses/min", "0");
	r = r ?: put(root, SCHEME "/access_pattern/age/max", "%u", UINT32_MAX);
	r = r ?: put(root, SCHEME "/access_pattern/age/min", "%" PRIu64, min_age);
	r = r ?: put(root, SCHEME "/quotas/bytes", "%" PRIu64, p->quota_bytes);
	r = r ?: put(root, SCHEME "/quotas/reset_interval_ms", "1000");
	r = r ?: put(root, SCHEME "/filters/nr_filters", "1");
	r = r ?: put(root, SCHEME "/filters/0/type", "anon");
	r = r ?: put(root, SCHEME "/filters/0/matching", "Y");	/* anon: filtered out */
	return r;
}

int damon_sysfs_pageout(const char *root, const struct damon_pageout *p,
			uint64_t *applied, char *err, size_t errlen)
{
	unsigned waited = 0, step = 200;
	uint64_t n = 0, sz = 0;
	int r;

	*applied = 0;
	err[0] = '\0';
	r = get_u64(root, KD "/nr_kdamonds", &n);
	if (r < 0) {
		snprintf(err, errlen, "no DAMON sysfs interface (CONFIG_DAMON_SYSFS, CONFIG_DAMON_PADDR)");
		return r;
	}
	if (n) {
		snprintf(err, errlen, "DAMON is in use by someone else (%" PRIu64 " kdamonds)", n);
		return -EBUSY;
	}
	r = put(root, KD "/nr_kdamonds", "1");
	if (r == 0)
		r = damon_sysfs_setup(root, p);
	if (r == 0)
		r = put(root, KD "/0/state", "on");
	if (r < 0) {
		snprintf(err, errlen, "setting up the DAMON scheme: %s", strerror(-r));
		goto out;
	}
	/* Until the quota is used up or the time is over. */
	while (waited < p->timeout_ms) {
		sleep_ms(step);
		waited += step;
		if (put(root, KD "/0/state", "update_schemes_stats") < 0 ||
		    get_u64(root, SCHEME "/stats/sz_applied", &sz) < 0)
			continue;
		if (p->quota_bytes && sz >= p->quota_bytes)
			break;
	}
	*applied = sz;
	put(root, KD "/0/state", "off");
out:
	put(root, KD "/nr_kdamonds", "0");
	return r;
}
