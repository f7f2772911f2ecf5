// SPDX-License-Identifier: GPL-2.0-or-later
#include "reclaim-watch.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "procfs-util.h"

uint64_t reclaim_rate_feed(struct reclaim_rate *r, uint64_t now_usec, uint64_t steal,
			   uint64_t refault, uint64_t limit_per_sec, uint64_t span_usec, bool *quiet)
{
	struct reclaim_step d;
	bool step = reclaim_rate_step(r, now_usec, steal, refault, &d);

	if (quiet)
		*quiet = step && !d.steal && !d.refault;
	if (!step)
		return 0;
	if (span_usec && d.usec > span_usec)
		d.usec = span_usec;
	return reclaim_step_over(&d, limit_per_sec);
}

struct reclaim_watch {
	sd_event_source *timer;
	const char *root;
	uint64_t period_usec, limit;
	uint64_t max_period_usec;	/* quiet readings stretch the period up to it */
	uint64_t cur_usec;		/* the period now */
	uint64_t prev_free;		/* nr_free_pages at the last reading */
	uint64_t wake_free;		/* call back once MemFree reaches it (0: never) */
	uint64_t wake_below;		/* call back once MemFree falls below it (0: never) */
	bool fell_below;		/* the last call back was for wake_below */
	struct reclaim_rate rate;
	reclaim_watch_cb cb;
	void *userdata;
};

static uint64_t mono_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct reclaim_watch *w = userdata;
	struct rpm_vmstat vm;
	uint64_t pages;
	bool quiet;

	(void)usec;
	if (procfs_read_vmstat(w->root, &vm) < 0) {
		w->cur_usec = w->period_usec;
		goto out;
	}
	/* Over a long period, a burst counts as over a short one. */
	pages = reclaim_rate_feed(&w->rate, mono_usec(), vm.pgsteal_kswapd + vm.pgsteal_direct,
				  vm.workingset_refault_file, w->limit, w->period_usec, &quiet);
	w->cur_usec = reclaim_watch_next_period(w->cur_usec, w->period_usec, w->max_period_usec,
						!quiet, w->prev_free, vm.nr_free_pages, w->wake_below);
	w->prev_free = vm.nr_free_pages;
	if (pages) {
		w->cb(w, pages, w->userdata);
	} else if (w->wake_free && vm.nr_free_pages >= w->wake_free) {
		w->wake_free = 0;	/* once: the next pass sets a new mark */
		w->fell_below = false;
		w->cb(w, 0, w->userdata);
	} else if (w->wake_below && vm.nr_free_pages < w->wake_below) {
		w->wake_below = 0;	/* once, as above */
		w->fell_below = true;
		w->cb(w, 0, w->userdata);
	}
out:
	/* The callback may have disarmed the watch, or hurried it. */
	if (w->limit)
		sd_event_source_set_time_relative(s, w->cur_usec);
	return 0;
}

int reclaim_watch_new(sd_event *e, const char *root, uint64_t period_usec,
		      reclaim_watch_cb cb, void *userdata, struct reclaim_watch **ret)
{
	struct reclaim_watch *w;
	int r;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->root = root;
	w->period_usec = period_usec;
	w->max_period_usec = period_usec;
	w->cur_usec = period_usec;
	w->cb = cb;
	w->userdata = userdata;
	/* accuracy: a tenth of the period, so wake-ups can be coalesced */
	r = sd_event_add_time_relative(e, &w->timer, CLOCK_MONOTONIC, period_usec,
				       period_usec / 10, on_timer, w);
	if (r < 0) {
		free(w);
		return r;
	}
	sd_event_source_set_description(w->timer, "reclaim-watch");
	sd_event_source_set_enabled(w->timer, SD_EVENT_OFF);
	*ret = w;
	return 0;
}

struct reclaim_watch *reclaim_watch_free(struct reclaim_watch *w)
{
	if (!w)
		return NULL;
	sd_event_source_disable_unref(w->timer);
	free(w);
	return NULL;
}

void reclaim_watch_arm(struct reclaim_watch *w, bool on, uint64_t limit_per_sec)
{
	if (!w)
		return;
	if (!on || !limit_per_sec) {
		if (w->limit)
			sd_event_source_set_enabled(w->timer, SD_EVENT_OFF);
		w->limit = 0;
		w->rate.valid = false;
		return;
	}
	if (!w->limit) {
		w->cur_usec = w->period_usec;
		sd_event_source_set_time_relative(w->timer, w->period_usec);
		sd_event_source_set_enabled(w->timer, SD_EVENT_ON);
	}
	w->limit = limit_per_sec;
}

void reclaim_watch_wake_at_free(struct reclaim_watch *w, uint64_t free_pages)
{
	if (w)
		w->wake_free = free_pages;
}

void reclaim_watch_wake_below_free(struct reclaim_watch *w, uint64_t free_pages)
{
	if (w)
		w->wake_below = free_pages;
}

bool reclaim_watch_fell_below(const struct reclaim_watch *w)
{
	return w && w->fell_below;
}

bool reclaim_watch_armed(const struct reclaim_watch *w)
{
	return w && w->limit;
}

void reclaim_watch_set_max_period(struct reclaim_watch *w, uint64_t max_usec)
{
	if (w)
		w->max_period_usec = max_usec > w->period_usec ? max_usec : w->period_usec;
}

void reclaim_watch_hurry(struct reclaim_watch *w)
{
	uint64_t due, now;

	if (!w || w->cur_usec == w->period_usec)
		return;
	w->cur_usec = w->period_usec;
	if (!w->limit)
		return;
	/* Read again within one base period, not at the end of a long one. */
	if (sd_event_source_get_time(w->timer, &due) < 0 ||
	    sd_event_now(sd_event_source_get_event(w->timer), CLOCK_MONOTONIC, &now) < 0 ||
	    due > now + w->period_usec)
		sd_event_source_set_time_relative(w->timer, w->period_usec);
}

uint64_t reclaim_watch_period(const struct reclaim_watch *w)
{
	return w ? w->cur_usec : 0;
}
