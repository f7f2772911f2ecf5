/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The policy engine: pure C, no sd-event, no sd-bus, no I/O.  Inputs in
 * (a snapshot of the system and the regions, the configuration, its own
 * state), decisions out (a short list of actions).  The manager executes
 * the actions and feeds the results back with policy_note_*().
 * Unit tested with plain structs in daemon/test-policy.c.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "region.h"

/* Tunables; every one is a config key (see conf.h / regionpmd.conf(5)). */
struct rpm_policy_config {
	unsigned headroom_percent;	/* keep MemAvailable >= this % of MemTotal after parking */
	unsigned psi_some_avg10_max;	/* PSI some avg10 (percent*100) above which we stop and unpark */
	unsigned psi_full_avg10_max;
	uint64_t budget_pages_per_sec;	/* max pages migrated+dropped per second */
	uint64_t budget_pages_per_region; /* max pages one compact call may touch */
	uint64_t max_pages_to_vacate;	/* skip regions needing more than this (cost model) */
	unsigned min_idle_age_sec;	/* page cache idle this long may be dropped */
	unsigned pingpong_window_sec;	/* refill within this after vacate = ping-pong */
	unsigned pingpong_backoff_sec;	/* base back-off, doubles per repeat */
	unsigned pressure_backoff_sec;	/* pause after PSI crossed the limit */
	bool park;			/* park vacated regions (else only vacate) */
	bool bias;			/* enable the kernel's allocation bias */
	bool drop_cache;		/* allow dropping idle clean page cache */
	/* cost model: migration energy vs power saved by a powered-down region */
	double migrate_cost_uj_per_page;	/* microjoules to migrate one page */
	double region_saving_mw;	/* power saved per parked region (model) */
	unsigned payback_sec;		/* must pay back its cost within this */
};

/* What the system looks like right now. */
struct rpm_system {
	usec_t_ now;
	uint64_t mem_total_pages;
	uint64_t mem_available_pages;
	uint64_t mem_free_pages;
	unsigned psi_some_avg10;	/* percent * 100 */
	unsigned psi_full_avg10;
	bool psi_event;			/* a PSI trigger fired since last pass */
	uint64_t page_size;
};

enum rpm_action_kind {
	RPM_ACT_NONE = 0,
	RPM_ACT_ENABLE_BIAS,		/* write the runtime bias knob */
	RPM_ACT_SCAN,			/* refresh region detail (region-get scan) */
	RPM_ACT_SAMPLE_IDLE,		/* run the page_idle sampler on the region */
	RPM_ACT_COMPACT,		/* region-compact with mode + budget */
	RPM_ACT_PARK,			/* region-park (region must be empty) */
	RPM_ACT_UNPARK,			/* region-unpark */
};

enum rpm_compact_mode {		/* = enum regionpm_compact_mode */
	RPM_COMPACT_MIGRATE = 0,
	RPM_COMPACT_DROP = 1,
	RPM_COMPACT_BOTH = 2,
};

struct rpm_action {
	enum rpm_action_kind kind;
	uint32_t region;
	enum rpm_compact_mode mode;
	uint64_t budget;		/* pages, for RPM_ACT_COMPACT */
	const char *reason;		/* static string for the log */
};

/* The policy's memory between passes. */
struct rpm_policy_state {
	usec_t_ last_pass;
	double budget_tokens;		/* token bucket, pages */
	usec_t_ paused_until;		/* pressure back-off */
	bool bias_enabled;
	uint64_t total_migrated, total_dropped;
	unsigned regions_vacated, regions_parked, regions_released;
};

void policy_state_init(struct rpm_policy_state *st);

/*
 * One decision pass.  Fills at most max_actions into out and returns how
 * many.  Never returns actions that would park into pressure or below the
 * headroom; returns UNPARK actions first when pressure builds.
 */
size_t policy_decide(const struct rpm_policy_config *cfg,
		     struct rpm_policy_state *st,
		     const struct rpm_system *sys,
		     struct rpm_region *regions, size_t n_regions,
		     struct rpm_action *out, size_t max_actions);

/* Feedback from the manager after executing an action. */
void policy_note_compact(struct rpm_policy_state *st, struct rpm_region *r,
			 usec_t_ now, uint64_t migrated, uint64_t dropped,
			 uint64_t failed, int error);
void policy_note_parked(struct rpm_policy_state *st, struct rpm_region *r,
			usec_t_ now);
void policy_note_released(struct rpm_policy_state *st, struct rpm_region *r,
			  usec_t_ now, int reason);
/* First-allocation event for a region we vacated: ping-pong accounting. */
void policy_note_refill(const struct rpm_policy_config *cfg,
			struct rpm_policy_state *st, struct rpm_region *r,
			usec_t_ now);

/* Regions that hold unmovable pages (from detail) can never be emptied. */
bool region_has_unmovable(const struct rpm_region *r);
/* Pages that would have to move for the region to become empty. */
uint64_t region_used_pages(const struct rpm_region *r);
