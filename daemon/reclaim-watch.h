/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reclaim watch: while regions are parked, reclaim that evicts page cache
 * is the sign they should come back, and nothing tells us it happens:
 * kswapd reclaim need not stall anybody, so PSI stays quiet, and a
 * converged daemon sleeps up to IdleIntervalSec=.  The watch reads
 * <root>/proc/vmstat every period (one small read) and calls back when
 * pgsteal_kswapd + pgsteal_direct or workingset_refault_file grew faster
 * than the limit over the period.  The manager keeps it armed only while
 * it has parked or held regions.  While armed it also calls back (with 0
 * pages) when nr_free_pages reaches the mark the policy left after a
 * converged pass: freed memory that lets the plan do with one region less.
 *
 * On a quiet system the period doubles after each reading that saw no
 * reclaim and no fast fall of free memory, up to a maximum the caller
 * sets; reclaim, a fast fall, or the caller's hurry (an event) bring it
 * back to the short period.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "reclaim-rate.h"

/*
 * Feeds one reading (reclaim_rate_step() and reclaim_step_over() in one):
 * the pages reclaim took since the previous reading (steals or refaults,
 * whichever is larger) when that is more than @limit_per_sec pages a second
 * allow over the time between the two readings, that time capped at
 * @span_usec (0: no cap), so a long period does not dilute a burst; else 0.
 * *@quiet (unless NULL): there was a previous reading and reclaim took
 * nothing since.
 */
uint64_t reclaim_rate_feed(struct reclaim_rate *r, uint64_t now_usec, uint64_t steal,
			   uint64_t refault, uint64_t limit_per_sec, uint64_t span_usec, bool *quiet);

struct reclaim_watch;
/* @pages: reclaimed faster than the limit, or 0: MemFree crossed a mark. */
typedef void (*reclaim_watch_cb)(struct reclaim_watch *w, uint64_t pages, void *userdata);

int reclaim_watch_new(sd_event *e, const char *root, uint64_t period_usec,
		      reclaim_watch_cb cb, void *userdata, struct reclaim_watch **ret);
struct reclaim_watch *reclaim_watch_free(struct reclaim_watch *w);
/* Arm (reading from now on) or disarm; @limit_per_sec 0 disarms too. */
void reclaim_watch_arm(struct reclaim_watch *w, bool on, uint64_t limit_per_sec);
/* Call back once nr_free_pages is at least @free_pages (0: no mark). */
void reclaim_watch_wake_at_free(struct reclaim_watch *w, uint64_t free_pages);
/* Call back once nr_free_pages is below @free_pages (0: no mark). */
void reclaim_watch_wake_below_free(struct reclaim_watch *w, uint64_t free_pages);
bool reclaim_watch_armed(const struct reclaim_watch *w);
/*
 * Let quiet readings stretch the period up to @max_usec (see
 * reclaim_watch_next_period()); by default it stays at the period given to
 * reclaim_watch_new().  Only for callers with events that hurry it.
 */
void reclaim_watch_set_max_period(struct reclaim_watch *w, uint64_t max_usec);
/* Something happened (an event, a pass that acted): back to the short period now. */
void reclaim_watch_hurry(struct reclaim_watch *w);
/* The period now. */
uint64_t reclaim_watch_period(const struct reclaim_watch *w);
/* Was the last call back with @pages 0 for the mark below (else: above)? */
bool reclaim_watch_fell_below(const struct reclaim_watch *w);
