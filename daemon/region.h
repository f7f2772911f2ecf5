/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What regionpmd knows about one physical region: the kernel's view (from a
 * region-get dump, refreshed on events), plus what the daemon measured and
 * did.  Plain data: shared by the genl client (fills it), the idle sampler
 * (fills idle fields), the policy (reads it) and the bus/CLI (show it).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef uint64_t usec_t_;	/* CLOCK_MONOTONIC microseconds */

enum rpm_region_state {
	RPM_REGION_ACTIVE = 0,	/* = REGIONPM_REGION_STATE_ACTIVE */
	RPM_REGION_PARKED = 1,
	RPM_REGION_BUSY = 2,
	RPM_REGION_HELD = 3,	/* region-hold: pageblocks isolated, nothing allocated there */
};

/* What the last plan made of a region (policy.c), for display. */
enum rpm_region_role {
	RPM_ROLE_NONE = 0,	/* not looked at (parked by others, busy, no memory) */
	RPM_ROLE_KEEP,		/* in the keep set: may hold pages */
	RPM_ROLE_PINNED,	/* in the keep set because it cannot be emptied now */
	RPM_ROLE_TARGET,	/* to be emptied */
	RPM_ROLE_SPARE,		/* empty, outside the keep set: to be parked */
	RPM_ROLE_PARKED,	/* parked */
};

/* Detailed page breakdown (region-get with the scan flag). */
struct rpm_region_detail {
	bool valid;
	usec_t_ when;			/* when the scan was taken */
	uint64_t free, anon, file_clean, file_dirty, writeback, shmem,
		 unevictable, slab, page_table, reserved, kernel_other,
		 offline, huge;
};

struct rpm_region {
	/* kernel view */
	uint32_t id;
	uint64_t start_pfn;
	uint64_t spanned_pages;
	uint64_t managed_pages;
	uint64_t free_pages;
	uint32_t node;
	char zones[32];			/* zone names, comma separated ("DMA,DMA32") */
	bool no_park;			/* the backend cannot park it (stock: a block at
					 * an end of ZONE_DMA32 would change zone) */
	enum rpm_region_state state;
	uint32_t owner_portid;		/* 0 when neither parked nor held */
	uint64_t parked_pages;
	uint64_t held_pages;		/* pages in the pageblocks a hold isolated */
	struct rpm_region_detail detail;

	/* daemon view */
	bool ours;			/* parked by this daemon's socket */
	usec_t_ release_unseen;		/* when a dump saw the kernel give it
					 * back before the release event came;
					 * 0 = not waiting for one */
	bool idle_valid;
	bool idle_sampling;		/* an idle sample of it is running */
	usec_t_ idle_when;
	uint64_t idle_file_pages;	/* file LRU pages found idle */
	uint64_t idle_anon_pages;
	uint64_t sampled_pages;		/* pages looked at by the sampler */
	usec_t_ last_vacated;		/* 0 = never */
	usec_t_ last_refilled;		/* first allocation after vacate/park */
	unsigned refill_count;		/* ping-pong counter, decays */
	usec_t_ backoff_until;		/* leave alone until then */
	uint32_t stuck_count;		/* compactions in a row without progress */
	uint32_t checkpoint_tries;	/* journal checkpoints for it since it last parked */
	uint64_t pages_migrated;	/* totals for this region */
	uint64_t pages_dropped;
	const char *last_action;	/* static string, for display */
	enum rpm_region_role role;	/* from the last plan */
	/*
	 * Scratch of the plan's max_parked_pct step: 0 when the region cannot
	 * be taken out, else its keeping order (1: empty, higher: dearer).
	 */
	uint8_t cap_key;
	uint32_t pinned_scans;		/* scans in a row that found it pinned */
	usec_t_ hold_since;		/* when we last held it (0: not held by us) */
};

/* Global kernel facts (info-get). */
struct rpm_kernel_info {
	uint64_t region_size;		/* bytes */
	uint32_t region_count;
	bool bias;
	uint32_t frontier;		/* region id of the allocation frontier */
	uint64_t parked_pages;
	uint64_t held_pages;		/* in held regions (0 from kernels without holds) */
};
