/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Page idleness of one pfn range (a candidate region), with idle page
 * tracking: find the LRU pages in <root>/proc/kpageflags, set their bits in
 * <root>/sys/kernel/mm/page_idle/bitmap, wait (an sd-event timer, not a
 * sleep), read the bitmap back: a bit still set means nobody touched the
 * page.  Idle pages are counted as file or anon (KPF_ANON).
 *
 * The mark and count steps are plain functions over the two files, so they
 * run on fixture files in the unit tests.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

struct idle_counts {
	uint64_t lru;			/* LRU pages in the range (marked) */
	uint64_t idle_file;		/* still idle at count time */
	uint64_t idle_anon;
};

/* Marks every LRU page of [start_pfn, start_pfn + nr) idle; counts them. */
int idle_mark(const char *root, uint64_t start_pfn, uint64_t nr, struct idle_counts *c);
/* Reads the bitmap back and counts idle LRU pages (file / anon). */
int idle_count(const char *root, uint64_t start_pfn, uint64_t nr, struct idle_counts *c);

struct idle_sample;
typedef void (*idle_sample_cb)(struct idle_sample *s, int error,
			       const struct idle_counts *c, void *userdata);

/* Marks now, counts after @sample_sec seconds, then calls @cb.  The sample
 * frees itself after the callback; idle_sample_cancel() drops it earlier. */
int idle_sample_start(sd_event *e, const char *root, uint64_t start_pfn,
		      uint64_t nr, unsigned sample_sec, idle_sample_cb cb,
		      void *userdata, struct idle_sample **ret);
void idle_sample_cancel(struct idle_sample *s);
