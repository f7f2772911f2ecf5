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

/*
 * The reclaim watch's next period.  Back to @base after a reading that
 * saw reclaim (@reclaimed: any steal or refault, or the first reading),
 * or in which free memory fell by more than a quarter of its distance to
 * @low_mark (0: no mark, the distance is all of it): at that pace twice
 * the period would take it there.  Else twice @cur, up to @max: a quiet
 * system is read less and less often.  Never below @base.
 */
uint64_t reclaim_watch_next_period(uint64_t cur, uint64_t base, uint64_t max, bool reclaimed,
				   uint64_t prev_free, uint64_t free, uint64_t low_mark);
