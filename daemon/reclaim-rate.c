// SPDX-License-Identifier: GPL-2.0-or-later
/* Reclaim rates from two vmstat readings (see reclaim-rate.h). */
#include "reclaim-rate.h"

bool reclaim_rate_step(struct reclaim_rate *r, uint64_t now_usec, uint64_t steal,
		       uint64_t refault, struct reclaim_step *d)
{
	bool ok = r->valid && now_usec > r->when_usec && steal >= r->steal &&
		  refault >= r->refault;

	*d = (struct reclaim_step){ 0 };
	if (ok)
		*d = (struct reclaim_step){ .steal = steal - r->steal,
					    .refault = refault - r->refault,
					    .usec = now_usec - r->when_usec };
	*r = (struct reclaim_rate){ .valid = true, .when_usec = now_usec,
				    .steal = steal, .refault = refault };
	return ok;
}

uint64_t reclaim_step_over(const struct reclaim_step *d, uint64_t limit_per_sec)
{
	uint64_t pages = d->steal > d->refault ? d->steal : d->refault;
	double limit = (double)limit_per_sec * (double)d->usec / 1e6;

	return limit_per_sec && d->usec && (double)pages > limit ? pages : 0;
}

uint64_t reclaim_watch_next_period(uint64_t cur, uint64_t base, uint64_t max, bool reclaimed,
				   uint64_t prev_free, uint64_t free, uint64_t low_mark)
{
	uint64_t dist = prev_free > low_mark ? prev_free - low_mark : 0;
	uint64_t fell = prev_free > free ? prev_free - free : 0;

	if (max < base)
		max = base;
	if (reclaimed || fell > dist / 4 || cur < base)
		return base;
	return cur > max / 2 ? max : cur * 2;
}
