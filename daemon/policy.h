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
#include <limits.h>

#include "reclaim-rate.h"
#include "region.h"

/*
 * Defaults of the tunables below, shared by conf_defaults() and
 * policy_config_defaults() so that the config file and a bare policy agree.
 */
/*
 * HeadroomPercent=auto: RPM_AUTO_HEADROOM_PERCENT and HysteresisPercent=
 * of memory counted on a sliding scale, see policy_headroom_base().  A
 * number (the default): that share of all memory.
 */
#define RPM_HEADROOM_AUTO		UINT_MAX
#define RPM_DEF_HEADROOM_PERCENT	10	/* of all memory, like the kernel's bias_headroom_pct */
#define RPM_AUTO_HEADROOM_PERCENT	10	/* like the kernel's bias_headroom_pct */
#define RPM_AUTO_FULL_BYTES		(2ULL << 30)	/* counted in full up to here */
#define RPM_AUTO_HALF_BYTES		(16ULL << 30)	/* half up to here, a fifth above */
#define RPM_DEF_PSI_SOME_AVG10_MAX	1000	/* 10.00 %: memory stalls are felt */
#define RPM_DEF_PSI_FULL_AVG10_MAX	200	/* 2.00 %: everything stalled, worse */
#define RPM_DEF_BUDGET_PAGES_PER_SEC	32768	/* 128 MiB/s of 4 KiB pages */
#define RPM_DEF_BUDGET_PAGES_PER_REGION	8192	/* 32 MiB per compact call */
#define RPM_DEF_MAX_PAGES_TO_VACATE	0	/* 0 = no limit, the cost model decides */
#define RPM_DEF_MIN_IDLE_AGE_SEC	30
#define RPM_DEF_PINGPONG_WINDOW_SEC	60
#define RPM_DEF_PINGPONG_BACKOFF_SEC	30
#define RPM_DEF_PRESSURE_BACKOFF_SEC	30
#define RPM_DEF_PARK			true
#define RPM_DEF_BIAS			true
#define RPM_DEF_DROP_CACHE		true
#define RPM_DEF_MIGRATE_COST_UJ		30.0	/* ~3 us of a 10 W core per 4 KiB page */
#define RPM_DEF_REGION_SAVING_MW	25.0	/* ~0.2 W/GiB background power, 128 MiB */
#define RPM_DEF_PAYBACK_SEC		3600
#define RPM_DEF_HYSTERESIS_PERCENT	3	/* park above headroom + this, unpark below headroom */
#define RPM_DEF_RECLAIM_UNPARK_PPS	1024	/* 4 MiB/s of refaults or kswapd steals */
#define RPM_DEF_CACHE_HISTORY_SEC	600	/* room kept for recently evicted cache */
#define RPM_DEF_CHECKPOINT_JOURNALS	true	/* flush ext4 journals whose buffers pin a region */

/* Tunables; every one is a config key (see conf.h / regionpmd.conf(5)). */
struct rpm_policy_config {
	unsigned headroom_percent;	/* keep MemAvailable >= this % of all memory; RPM_HEADROOM_AUTO */
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
	/* park only while MemAvailable stays above headroom + this % of memory */
	unsigned hysteresis_percent;
	/* file refaults or kswapd steals per second that bring a region back (0: never) */
	uint64_t reclaim_unpark_pages_per_sec;
	/* cache evicted by reclaim or by us within this long keeps its room */
	unsigned cache_history_sec;
	/* checkpoint ext4 journals when their pinned buffers keep a region from parking */
	bool checkpoint_journals;
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
	bool idle_samplers_busy;	/* no idle sample can start now ([Idle] MaxRegions) */
	uint64_t page_size;
	/* /proc/vmstat counters (cumulative); vmstat_valid says they were read */
	bool vmstat_valid;
	uint64_t file_pages;		/* nr_file_pages */
	uint64_t anon_pages;		/* nr_anon_pages */
	uint64_t refault_file;		/* workingset_refault_file */
	uint64_t pgsteal;		/* pgsteal_kswapd + pgsteal_direct */
	/* Pages the manager's reclaim watch saw evicted faster than
	 * ReclaimUnparkPagesPerSec= since the previous pass (0: none). */
	uint64_t reclaim_watch_pages;
	/* Nothing gives parked memory back but us (the stock backend: no
	 * shrinker, no OOM notifier): pressure gives back everything. */
	bool no_kernel_release;
	/*
	 * /proc/zoneinfo was read (marks_valid): the free pages the kernel
	 * keeps (high watermarks and lowmem reserves, its totalreserve_pages)
	 * and the free pages above those marks now.  Memory below the marks
	 * is not room: kswapd evicts cache to restore it.
	 */
	bool marks_valid;
	uint64_t kernel_reserve_pages;
	uint64_t free_above_marks;
	/*
	 * The same over the zones below ZONE_MOVABLE (all zones when there is
	 * none): their pages move only within them, so emptying a region
	 * there needs room there (the kernel's own check, room_above_marks()).
	 */
	uint64_t low_reserve_pages;
	uint64_t low_free_above_marks;
	/* The kernel can hold a region (region-hold) and lets a hold expire after this. */
	bool can_hold;
	usec_t_ hold_timeout;
	/*
	 * regionpm.max_parked_pct: parked and held pages stay within this
	 * share of each kernel zone, and of ZONE_MOVABLE with its node's
	 * zones below it (0: no such cap known; the plan does not model it).
	 */
	unsigned max_parked_pct;
};

enum rpm_action_kind {
	RPM_ACT_NONE = 0,
	RPM_ACT_ENABLE_BIAS,		/* write the runtime bias knob */
	RPM_ACT_SCAN,			/* refresh region detail (region-get scan) */
	RPM_ACT_SAMPLE_IDLE,		/* run the page_idle sampler on the region */
	RPM_ACT_COMPACT,		/* region-compact with mode + budget */
	RPM_ACT_PARK,			/* region-park (region must be empty) */
	RPM_ACT_UNPARK,			/* region-unpark (also ends a hold) */
	RPM_ACT_HOLD,			/* region-hold: no allocation from it any more */
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
	uint64_t budget;		/* pages, for RPM_ACT_COMPACT and a compacting PARK */
	bool compact_first;		/* PARK: empty the region and park it in one call */
	const char *reason;		/* static string for the log */
};

/*
 * Fixed sizes and limits of the policy (not tunables: they bound the work of
 * one pass and the policy's memory, so that it never needs malloc).
 */
#define RPM_POLICY_TRACKED_REGIONS	32	/* regions with an adapted budget */
#define RPM_POLICY_MAX_PREP		8	/* SCAN + SAMPLE_IDLE actions per pass */
#define RPM_POLICY_TOPK			32	/* targets considered per pass, cheapest first */
#define RPM_POLICY_COST_BUCKETS		256	/* resolution of the keep-set selection */
#define RPM_POLICY_MAX_RESCAN_SHIFT	6	/* pinned regions: rescan after 60 s << 6 at most */
#define RPM_POLICY_ZONE_NODES		64	/* nodes told apart by the per-zone floor */
#define RPM_POLICY_GIVEN_MAX		64	/* regions one give-back forgets the emptying of */
#define RPM_POLICY_ZONE_KINDS		6	/* DMA, DMA32, Normal, Movable, Device, other */
#define RPM_ZONE_KIND_MOVABLE		3	/* the kind of ZONE_MOVABLE */
#define RPM_POLICY_ZONE_SLOTS		(RPM_POLICY_ZONE_NODES * RPM_POLICY_ZONE_KINDS)
#define RPM_POLICY_MIN_CHUNK		256	/* smallest compact call worth its setup, pages */
#define RPM_POLICY_BURST_SEC		10	/* token bucket capacity, seconds of budget */
#define RPM_POLICY_DETAIL_MAX_AGE_SEC	60	/* rescan a region's detail after this */
#define RPM_POLICY_MAX_BACKOFF_SHIFT	10	/* ping-pong back-off doubles at most 10 times */
#define RPM_POLICY_SHORT_POLL_MSEC	200	/* pass interval while memory is short */
#define RPM_POLICY_ZONE_FLOOR_PERMILLE	2	/* parks and holds leave each zone this much free */
#define RPM_POLICY_GROWTH_WINDOW_SEC	10	/* give-backs this close together: demand grows */
#define RPM_POLICY_GROWTH_MAX_SHIFT	4	/* n used give-backs in a row: at least 2^n regions, n <= 4 */
#define RPM_POLICY_MOVE_CREDIT_SEC	10	/* reclaim this soon after our moves is theirs */
#define RPM_POLICY_GROW_FREE_REGIONS	2	/* growing use: keep this many regions free (at most the headroom) */
#define RPM_POLICY_GROW_LEAD_SEC	8	/* ... or what it grows in this long, if more */

/* The policy's memory between passes. */
struct rpm_policy_state {
	usec_t_ last_pass;
	double budget_tokens;		/* token bucket, pages */
	usec_t_ paused_until;		/* pressure back-off */
	/*
	 * A back-off after memory fell below the headroom (not PSI, not
	 * reclaim): anonymous memory and pgsteal at its highest.
	 */
	bool pause_for_headroom;
	uint64_t pause_top, pause_top_steal;
	bool bias_enabled;
	uint64_t total_migrated, total_dropped;
	unsigned regions_vacated, regions_parked, regions_released;

	/* A parked region was taken back by the shrinker or OOM notifier. */
	bool pressure_pending;
	/*
	 * Give-backs in a row, each within RPM_POLICY_GROWTH_WINDOW_SEC of
	 * the last and after at least half of it was used; the last one gave
	 * giveback_pages (as confirmed by policy_note_given()), leaving
	 * MemFree at giveback_free.
	 */
	unsigned giveback_streak;
	usec_t_ last_giveback;
	uint64_t giveback_pages, giveback_free;
	/* Back-off parameters of the last pass, for the policy_note_*() calls. */
	usec_t_ pingpong_window, pingpong_backoff;
	/* vmstat of the previous pass, for rates */
	struct reclaim_rate vm_rate;
	uint64_t vm_prev_dropped;
	/*
	 * Pages we migrated lately that reclaim has not yet been seen to
	 * make room for (move_credit), since move_credit_when.
	 */
	uint64_t vm_prev_migrated, move_credit;
	usec_t_ move_credit_when;
	/* Page cache high-water mark and what reclaim or we evicted since. */
	uint64_t cache_peak;
	usec_t_ cache_peak_when;
	uint64_t cache_evicted;		/* net of what came back since */
	uint64_t cache_last;		/* nr_file_pages at the previous pass */
	/*
	 * While memory is parked and MemFree is above the growth rule's
	 * floor: the MemFree below which the manager should decide at once
	 * (0: no mark), because memory in use that grows into the last free
	 * regions makes reclaim evict cache.  Set by every pass.
	 */
	uint64_t low_free_pages;
	/* Memory in use grows: no parking until grow_until (use_growing()). */
	uint64_t grow_base;
	usec_t_ grow_base_when, grow_until;
	uint64_t grow_rate;		/* pages/s, the fastest of this growth */
	uint64_t grow_start;		/* page cache + anonymous pages when this burst began */
	usec_t_ grow_step_when;		/* the last step of it */
	uint64_t grow_top;		/* the most anonymous memory in this growth */
	uint64_t grow_top_steal;	/* pgsteal when it was reached */
	/* The last plan, for status and metrics. */
	struct rpm_plan_summary {
		unsigned keep, targets, pinned, spare, parked;
		unsigned capped;	/* of keep: kept for max_parked_pct */
		unsigned low_kept;	/* of keep: kept as room for the kernel zones' pages */
		bool planned;		/* this pass computed a keep set (the figures below) */
		uint64_t need_pages, keep_capacity;
		uint64_t cache_reserve;
		uint64_t shortfall;	/* pages the active regions cannot hold */
		bool converged;		/* nothing left to do but watch */
		/*
		 * Converged: MemFree (pages) at or above which the plan needs
		 * one region less, so the daemon should look again (0: no
		 * mark).  The manager's reclaim watch reads it.
		 */
		uint64_t wake_free_pages;
		/*
		 * Converged: the monotonic time (usec) at which a back-off or
		 * the room kept for evicted cache ends, which can change the
		 * plan with no event to say so (0: none).  The manager's next
		 * pass comes no later.
		 */
		usec_t_ recheck_at;
		/*
		 * The last pass gave memory back for pressure or a headroom
		 * shortfall: decide again within RPM_POLICY_SHORT_POLL_MSEC,
		 * since an allocation burst outruns a one-second pass and
		 * a stock kernel has no shrinker to give parked memory back.
		 */
		bool short_of_memory;
	} plan;
	/* Adapted per-region compact budgets of the regions worked on lately. */
	struct rpm_region_budget {
		uint32_t id;
		bool used;
		uint64_t budget;	/* pages per compact call, adapted */
		uint64_t pending;	/* budget of the call in flight (for refunds) */
		usec_t_ when;		/* last use, for eviction */
	} budgets[RPM_POLICY_TRACKED_REGIONS];
};

void policy_config_defaults(struct rpm_policy_config *cfg);
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

/*
 * Feedback from the manager after executing an action.
 *
 * policy_note_compact(): call after r->free_pages has been updated from the
 * reply; error is 0 or the -errno of the request.  It refunds the unused
 * part of the budget and adapts the region's budget (halved when a quarter
 * or more of the pages it tried failed, or on error; doubled on a clean run).
 * policy_note_released(): reason is a REGIONPM_RELEASE_REASON_* value; a
 * release by the shrinker or the OOM notifier counts as pressure and as a
 * ping-pong of that region.
 * Protected cgroups are not the policy's business: it may choose a mode
 * that drops cache, and the manager (do_compact) turns it into MIGRATE for
 * a region where /proc/kpagecgroup shows page cache of a protected cgroup.
 */
void policy_note_compact(struct rpm_policy_state *st, struct rpm_region *r,
			 usec_t_ now, uint64_t migrated, uint64_t dropped,
			 uint64_t failed, int error);
/*
 * After a compaction: with no page migrated or dropped and an obstacle
 * named by the kernel (enum regionpm_obstacle, 0 = none), leave the region
 * alone for PingPongBackoffSec, doubling on each repeat; progress resets.
 */
void policy_note_obstacle(const struct rpm_policy_config *cfg,
			  struct rpm_region *r, usec_t_ now, uint32_t obstacle,
			  uint64_t progress);
/*
 * After a park refused with -@err: is the region stuck (back it off with
 * policy_note_obstacle() and no progress) rather than nearly done?
 * Refused for good (EPERM: ZONE_DMA; ENOSPC: max_parked_pct), or EBUSY
 * with fewer pages moved by the call than it left behind: what is left
 * will not move now (kernel pages, metadata buffers in use), and a few
 * pages moved each time (cache that came back meanwhile) must not reset
 * the back-off, or the region is tried again every pass.
 */
bool policy_park_stuck(int err, uint64_t moved, uint64_t left);

/*
 * A park refused because page cache in the region would not move, with
 * CheckpointJournals= on: checkpoint the ext4 journals now, wait for the
 * next checkpoint allowed (*@until), or back the region off as stuck.
 * Checkpoints are at least RPM_CHECKPOINT_INTERVAL_USEC apart; a region
 * gets at most RPM_CHECKPOINT_TRIES of them before it parks again.
 */
#define RPM_CHECKPOINT_INTERVAL_USEC	(10 * 1000000ULL)
#define RPM_CHECKPOINT_TRIES		2
enum rpm_checkpoint_step {
	RPM_CHECKPOINT_NO,	/* back off as stuck */
	RPM_CHECKPOINT_NOW,	/* checkpoint, then try the region again */
	RPM_CHECKPOINT_WAIT,	/* try again at *until, then checkpoint */
};
enum rpm_checkpoint_step policy_checkpoint_step(const struct rpm_region *r, usec_t_ now,
						usec_t_ last_checkpoint, usec_t_ *until);
void policy_note_parked(struct rpm_policy_state *st, struct rpm_region *r,
			usec_t_ now);
/*
 * policy_note_given(): the manager gave @r back (an UNPARK action that
 * succeeded; call before changing r's state).  Only confirmed give-backs
 * count for the growth ramp: a failed unpark or a dry run leaves MemFree
 * where it was, which would otherwise read as memory used at once.
 */
void policy_note_given(struct rpm_policy_state *st, const struct rpm_region *r);
void policy_note_released(struct rpm_policy_state *st, struct rpm_region *r,
			  usec_t_ now, int reason);
/* First-allocation event for a region we vacated: ping-pong accounting. */
void policy_note_refill(const struct rpm_policy_config *cfg,
			struct rpm_policy_state *st, struct rpm_region *r,
			usec_t_ now);

/*
 * The memory HeadroomPercent= and HysteresisPercent= are shares of, in
 * pages of @page_size bytes, for @all_pages of memory: all of it for a
 * number; for auto, the first 2 GiB in full, half of the memory from 2 to
 * 16 GiB and a fifth of the rest.
 */
uint64_t policy_headroom_base(const struct rpm_policy_config *cfg, uint64_t all_pages,
			      uint64_t page_size);

/* All memory in pages: MemTotal plus what is parked. */
uint64_t policy_all_memory(uint64_t mem_total_pages, const struct rpm_region *regions, size_t n);

/*
 * The headroom in pages: its share of all memory, MemTotal
 * (@mem_total_pages) plus what is parked, so that parking cannot shrink it.
 */
uint64_t policy_headroom_pages(const struct rpm_policy_config *cfg, uint64_t mem_total_pages,
			       uint64_t page_size, const struct rpm_region *regions, size_t n);

/* The park limit in pages: the headroom plus HysteresisPercent= of the same memory. */
uint64_t policy_park_limit_pages(const struct rpm_policy_config *cfg, uint64_t mem_total_pages,
				 uint64_t page_size, const struct rpm_region *regions, size_t n);

/* After a SCAN: a region found pinned again is rescanned less often. */
void policy_note_scan(struct rpm_region *r);

/* Regions that hold unmovable pages (from detail) can never be emptied. */
bool region_has_unmovable(const struct rpm_region *r);
/* Pages that would have to move for the region to become empty. */
uint64_t region_used_pages(const struct rpm_region *r);
