/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reclaim rates from two readings of /proc/vmstat's cumulative counters
 * (pgsteal_kswapd + pgsteal_direct, workingset_refault_file): pure, shared
 * by the policy (once a pass) and the reclaim watch (every 2 s).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct reclaim_rate {
	bool valid;
	uint64_t when_usec, steal, refault;
};

/* What reclaim did between two readings. */
struct reclaim_step {
	uint64_t steal, refault;	/* pages */
	uint64_t usec;
};

/*
 * Feeds one reading.  Returns true with the growth since the previous
 * reading in *@d; false (and *@d zeroed) when it only (re)starts: the
 * first reading, a clock that did not advance, counters that went back.
 */
bool reclaim_rate_step(struct reclaim_rate *r, uint64_t now_usec, uint64_t steal,
		       uint64_t refault, struct reclaim_step *d);

/*
 * The pages reclaim took over @d (steals or refaults, whichever is larger)
 * when that is faster than @limit_per_sec pages a second, else 0; always 0
 * with a limit of 0.
 */
uint64_t reclaim_step_over(const struct reclaim_step *d, uint64_t limit_per_sec);
