/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Dropping idle page cache of one physical range with DAMON, through its
 * sysfs admin tree (/sys/kernel/mm/damon/admin, the kernel's
 * Documentation/admin-guide/mm/damon/usage.rst): one kdamond, "paddr"
 * operations, one target region = the range, one DAMOS "pageout" scheme
 * for regions not accessed for @min_age_us, an "anon" filter (anonymous
 * pages are filtered out, so only page cache goes; shmem is not on the
 * file LRU's clean list either), and a size quota.  DAMON's paddr pageout
 * checks each page's accessed bit again before it reclaims, so hot pages
 * stay.  The kdamond runs for the call only and the tree is left as
 * found (nr_kdamonds 0).  A tree someone else uses (nr_kdamonds > 0) is
 * never touched: -EBUSY.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define RPM_SYS_DAMON_ADMIN	"/sys/kernel/mm/damon/admin"

struct damon_pageout {
	uint64_t start, end;		/* physical addresses, bytes */
	uint64_t min_age_us;		/* not accessed for at least this long */
	uint64_t quota_bytes;		/* at most this much per second (0: no quota) */
	unsigned timeout_ms;		/* stop the kdamond after this long */
	unsigned sample_us, aggr_us;	/* DAMON intervals (0: 5 ms, 100 ms) */
};

/* 0 if <root>/sys/kernel/mm/damon/admin/kdamonds exists. */
int damon_sysfs_probe(const char *root);

/*
 * Run the scheme and return the bytes DAMON paged out (sz_applied) in
 * *applied.  A message for the log goes to err on failure.
 */
int damon_sysfs_pageout(const char *root, const struct damon_pageout *p,
			uint64_t *applied, char *err, size_t errlen);

/* Write the whole scheme into the tree, without starting it (the part
 * damon_sysfs_pageout() does first; unit tested with a fixture tree). */
int damon_sysfs_setup(const char *root, const struct damon_pageout *p);
