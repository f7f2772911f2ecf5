// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The regionpmd policy engine: pure decisions, no I/O, no globals, no malloc.
 *
 * One pass plans, then acts:
 *   1. ENABLE_BIAS once, if configured.
 *   2. Pressure (PSI above a limit, a PSI trigger, a parked region taken
 *      back by the kernel) or MemAvailable below the headroom: pause all
 *      work for PressureBackoffSec= and give memory back (our holds, then
 *      our parked regions, most recently parked first) until the headroom
 *      is restored.  Reclaim that evicts useful cache (file refaults or
 *      reclaim steals above ReclaimUnparkPagesPerSec=) gives back as much
 *      as it took and pauses too.  Nothing else happens in such a pass.
 *   3. Plan the keep set: the fewest regions that hold every page in use
 *      plus the free memory the headroom needs (MemAvailable counts
 *      reclaimable cache, so only the part of the headroom it does not
 *      cover must be free) plus room for cache evicted lately.  Regions
 *      that cannot be emptied now are kept first, then the ones dearest
 *      to empty (most pages to migrate); the threshold is found with a
 *      cost histogram, so the plan is O(regions) without sorting.  Every
 *      other region with pages is a target; empty ones are spare.  When
 *      even all active regions are too few, parked ones come back.
 *   4. Act on the plan: PARK spare regions (highest first) while
 *      MemAvailable stays above headroom + hysteresis; HOLD targets
 *      (kernel permitting) so that nothing, migrations included, lands
 *      in them; then work on the cheapest targets (top-k): SCAN where the
 *      breakdown is stale, COMPACT paid from a token bucket, and the
 *      last call of a region is a PARK that compacts first, so an emptied
 *      region is never refilled before it is parked.
 */
#include <errno.h>
#include <string.h>

#include <linux/regionpm.h>

#include "policy.h"

#define USEC_PER_SEC	1000000ULL

static usec_t_ sec_to_usec(unsigned sec)
{
	return (usec_t_)sec * USEC_PER_SEC;
}

void policy_config_defaults(struct rpm_policy_config *cfg)
{
	*cfg = (struct rpm_policy_config) {
		.headroom_percent = RPM_DEF_HEADROOM_PERCENT,
		.psi_some_avg10_max = RPM_DEF_PSI_SOME_AVG10_MAX,
		.psi_full_avg10_max = RPM_DEF_PSI_FULL_AVG10_MAX,
		.budget_pages_per_sec = RPM_DEF_BUDGET_PAGES_PER_SEC,
		.budget_pages_per_region = RPM_DEF_BUDGET_PAGES_PER_REGION,
		.max_pages_to_vacate = RPM_DEF_MAX_PAGES_TO_VACATE,
		.min_idle_age_sec = RPM_DEF_MIN_IDLE_AGE_SEC,
		.pingpong_window_sec = RPM_DEF_PINGPONG_WINDOW_SEC,
		.pingpong_backoff_sec = RPM_DEF_PINGPONG_BACKOFF_SEC,
		.pressure_backoff_sec = RPM_DEF_PRESSURE_BACKOFF_SEC,
		.park = RPM_DEF_PARK,
		.bias = RPM_DEF_BIAS,
		.drop_cache = RPM_DEF_DROP_CACHE,
		.migrate_cost_uj_per_page = RPM_DEF_MIGRATE_COST_UJ,
		.region_saving_mw = RPM_DEF_REGION_SAVING_MW,
		.payback_sec = RPM_DEF_PAYBACK_SEC,
		.hysteresis_percent = RPM_DEF_HYSTERESIS_PERCENT,
		.reclaim_unpark_pages_per_sec = RPM_DEF_RECLAIM_UNPARK_PPS,
		.cache_history_sec = RPM_DEF_CACHE_HISTORY_SEC,
		.checkpoint_journals = RPM_DEF_CHECKPOINT_JOURNALS,
	};
}

void policy_state_init(struct rpm_policy_state *st)
{
	memset(st, 0, sizeof(*st));
	st->pingpong_window = sec_to_usec(RPM_DEF_PINGPONG_WINDOW_SEC);
	st->pingpong_backoff = sec_to_usec(RPM_DEF_PINGPONG_BACKOFF_SEC);
}

bool region_has_unmovable(const struct rpm_region *r)
{
	const struct rpm_region_detail *d = &r->detail;

	if (!d->valid)
		return false;
	/*
	 * kernel_other is not counted: most of it is pages on per-CPU free
	 * lists, which a compaction drains.  Kernel pages that really stay
	 * are found by compacting: the kernel names them as the obstacle and
	 * policy_note_obstacle() backs the region off.
	 */
	return d->slab + d->page_table + d->reserved > 0;
}

uint64_t region_used_pages(const struct rpm_region *r)
{
	if (r->state == RPM_REGION_PARKED)
		return 0;
	return r->managed_pages > r->free_pages ?
		r->managed_pages - r->free_pages : 0;
}

/* ---- per-region adapted budgets --------------------------------------- */

static struct rpm_region_budget *budget_find(struct rpm_policy_state *st,
					     uint32_t id)
{
	for (size_t i = 0; i < RPM_POLICY_TRACKED_REGIONS; i++)
		if (st->budgets[i].used && st->budgets[i].id == id)
			return &st->budgets[i];
	return NULL;
}

/* Find or make the entry of a region; the least recently used one goes. */
static struct rpm_region_budget *budget_get(struct rpm_policy_state *st,
					    uint32_t id, uint64_t initial,
					    usec_t_ now)
{
	struct rpm_region_budget *b = budget_find(st, id), *victim = NULL;

	if (b)
		return b;
	for (size_t i = 0; i < RPM_POLICY_TRACKED_REGIONS; i++) {
		b = &st->budgets[i];
		if (!b->used) {
			victim = b;
			break;
		}
		if (!victim || b->when < victim->when)
			victim = b;
	}
	*victim = (struct rpm_region_budget) {
		.id = id, .used = true, .budget = initial, .when = now,
	};
	return victim;
}

/* ---- pressure and memory ---------------------------------------------- */

static uint64_t pct_of(uint64_t total, unsigned pct)
{
	return total / 100 * pct + total % 100 * pct / 100;
}

/*
 * The headroom is a share of all memory, parked regions included: parking
 * lowers MemTotal, and a share of the shrinking MemTotal let each park
 * shrink the headroom for the next one (an idle 2 GiB guest ended up
 * with 13 of 16 regions parked and ~150 MiB available).
 */
static uint64_t all_memory(const struct rpm_system *sys,
			   const struct rpm_region *regions, size_t n)
{
	uint64_t total = sys->mem_total_pages;

	for (size_t i = 0; i < n; i++)
		if (regions[i].state == RPM_REGION_PARKED)
			total += regions[i].parked_pages;
	return total;
}

static bool psi_over_limit(const struct rpm_policy_config *cfg,
			   const struct rpm_system *sys)
{
	return sys->psi_some_avg10 > cfg->psi_some_avg10_max ||
	       sys->psi_full_avg10 > cfg->psi_full_avg10_max;
}

/* PSI rising but not yet over the limit: work at half speed. */
static bool psi_rising(const struct rpm_policy_config *cfg,
		       const struct rpm_system *sys)
{
	return sys->psi_some_avg10 > cfg->psi_some_avg10_max / 2 ||
	       sys->psi_full_avg10 > cfg->psi_full_avg10_max / 2;
}

/*
 * Free pages above the kernel's marks: in all zones, and of them in the
 * zones below ZONE_MOVABLE (all of it without one).  all == UINT64_MAX:
 * the marks are unknown, nothing is checked.
 */
struct room {
	uint64_t all, low;
};

struct pass {
	const struct rpm_policy_config *cfg;
	struct rpm_policy_state *st;
	const struct rpm_system *sys;
	struct rpm_region *regions;
	size_t n_regions;
	struct rpm_action *out;
	size_t max_actions, n;
	uint64_t headroom;	/* unpark below this MemAvailable */
	uint64_t park_limit;	/* park or hold only above this */
	uint64_t avail;		/* MemAvailable as it will be after our actions */
	uint64_t absorb;	/* pages the rest of memory can still take in */
	/*
	 * Free pages above the kernel's marks not yet spoken for by this
	 * pass's parks, holds and moves.
	 */
	struct room room;
	uint64_t region_pages;	/* the largest region's managed + parked pages */
	unsigned prep;		/* SCAN and SAMPLE_IDLE actions so far */
	bool waiting;		/* work was left for want of tokens or room */
	bool movable_zone;	/* some region is in ZONE_MOVABLE */
	/* Free and all pages per (node, zone): parking must not empty a zone. */
	struct zone_acct {
		uint64_t total, free;
	} zones[RPM_POLICY_ZONE_SLOTS];
};

/*
 * The (node, zone) slot of a region: its first zone (regions straddle
 * zones only at the low end, which the kernel never parks), nodes beyond
 * RPM_POLICY_ZONE_NODES folded onto lower ones (a coarser check there).
 */
static unsigned zone_slot(const struct rpm_region *r)
{
	const char *z = r->zones;
	unsigned k = RPM_POLICY_ZONE_KINDS - 1;

	/* A switch on the name's length: a pass asks for every region's slot. */
	switch (strcspn(z, ",")) {
	case 3:
		k = memcmp(z, "DMA", 3) ? k : 0;
		break;
	case 5:
		k = memcmp(z, "DMA32", 5) ? k : 1;
		break;
	case 6:
		k = !memcmp(z, "Normal", 6) ? 2 : !memcmp(z, "Device", 6) ? 4 : k;
		break;
	case 7:
		k = memcmp(z, "Movable", 7) ? k : RPM_ZONE_KIND_MOVABLE;
		break;
	}
	return (r->node % RPM_POLICY_ZONE_NODES) * RPM_POLICY_ZONE_KINDS + k;
}

static void count_zones(struct pass *p)
{
	for (size_t i = 0; i < p->n_regions; i++) {
		const struct rpm_region *r = &p->regions[i];
		struct zone_acct *z = &p->zones[zone_slot(r)];

		z->total += r->managed_pages + r->parked_pages;
		if (r->state == RPM_REGION_ACTIVE)
			z->free += r->free_pages;
	}
}

/*
 * Taking @pages free pages of r's zone away (park or hold) leaves that zone
 * at least RPM_POLICY_ZONE_FLOOR_PERMILLE of it free.  The kernel's
 * watermarks are per zone: with the global MemAvailable fine, a zone left
 * without free pages (a small NUMA node) would wake kswapd for every
 * allocation there; ZONE_MOVABLE counts with the zones below it (see
 * zone_can_give()).  The floor is about a zone's low watermark (min_free_kbytes' share plus 0.1 % of the zone):
 * the kernel keeps zones there itself, and migration spills into lower
 * zones below it.  Half the headroom's share (5 % of the zone), the floor
 * before, kept a region of a full ZONE_MOVABLE from ever being emptied
 * (daemon-movable: 6 of 8), and refused the park of regions already
 * emptied in ZONE_NORMAL (fragment at 8 GiB: they filled again).
 */
static uint64_t zone_floor(const struct zone_acct *z)
{
	return z->total * RPM_POLICY_ZONE_FLOOR_PERMILLE / 1000;
}

/*
 * ZONE_MOVABLE counts with its node's zones below it, as the kernel's
 * max_parked_pct does: every allocation that may use ZONE_MOVABLE falls
 * back to them (an empty ZONE_MOVABLE only sends its allocations there,
 * kswapd is not woken while a lower zone is above its watermark), so the
 * last region of a movablecore= zone can go while the kernel zones have
 * room; before, it never could once its zone's other regions were empty.
 */
static bool zone_can_give(struct pass *p, const struct rpm_region *r, uint64_t pages)
{
	unsigned slot = zone_slot(r), kind = slot % RPM_POLICY_ZONE_KINDS;
	struct zone_acct z = p->zones[slot];

	if (kind == RPM_ZONE_KIND_MOVABLE)
		for (unsigned k = 0; k < kind; k++) {
			z.free += p->zones[slot - kind + k].free;
			z.total += p->zones[slot - kind + k].total;
		}
	return z.free >= pages && z.free - pages >= zone_floor(&z);
}

static void zone_take(struct pass *p, const struct rpm_region *r, uint64_t pages)
{
	struct zone_acct *z = &p->zones[zone_slot(r)];

	z->free -= pages < z->free ? pages : z->free;
}

static uint64_t sub_floor0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static bool region_in_movable(const struct rpm_region *r)
{
	return zone_slot(r) % RPM_POLICY_ZONE_KINDS == RPM_ZONE_KIND_MOVABLE;
}

/*
 * Room for emptying r: @own of its free pages leave the allocator (parked
 * or held) and @moves of its pages move out.  A kernel zone's pages move
 * only into kernel zones (their migration target is allocated without
 * __GFP_HIGHMEM, and the kernel checks the room there before each batch:
 * a DMA32 region of a movablecore= guest was compacted every pass and
 * refused for "no free memory above the watermarks" while ZONE_MOVABLE
 * had 30,000 free pages).  ZONE_MOVABLE's pages go anywhere.
 */
static bool room_fits(const struct room *rm, const struct rpm_region *r,
		      uint64_t own, uint64_t moves)
{
	if (rm->all == UINT64_MAX)
		return true;
	if (own > UINT64_MAX - moves)
		return false;
	return own + moves <= (region_in_movable(r) ? rm->all : rm->low);
}

/* @pages of r's free pages go (parked or held). */
static void room_take_free(struct room *rm, const struct rpm_region *r, uint64_t pages)
{
	if (rm->all == UINT64_MAX)
		return;
	rm->all = sub_floor0(rm->all, pages);
	if (!region_in_movable(r))
		rm->low = sub_floor0(rm->low, pages);
	if (rm->low > rm->all)
		rm->low = rm->all;
}

/*
 * @pages move out of r: a kernel zone's into the kernel zones; those of
 * ZONE_MOVABLE into its free pages first, the rest into the zones below
 * (the allocator's fallback).
 */
static void room_take_moves(struct room *rm, const struct rpm_region *r, uint64_t pages)
{
	uint64_t high;

	if (rm->all == UINT64_MAX)
		return;
	high = rm->all - rm->low;
	if (!region_in_movable(r))
		rm->low = sub_floor0(rm->low, pages);
	else if (pages > high)
		rm->low = sub_floor0(rm->low, pages - high);
	rm->all = sub_floor0(rm->all, pages);
	if (rm->low > rm->all)
		rm->low = rm->all;
}

static bool emit(struct pass *p, enum rpm_action_kind kind, uint32_t region,
		 enum rpm_compact_mode mode, uint64_t budget, const char *reason)
{
	if (p->n >= p->max_actions)
		return false;
	p->out[p->n++] = (struct rpm_action) {
		.kind = kind, .region = region, .mode = mode,
		.budget = budget, .reason = reason,
	};
	return true;
}

static bool held_by_us(const struct rpm_region *r)
{
	return r->state == RPM_REGION_HELD && r->ours;
}

/* ---- giving memory back --------------------------------------------------- */

/*
 * Order of giving memory back: our holds first (they hold no data and
 * cost nothing to end), then our parked regions before those parked by
 * someone else (a tool may have a reason we do not know), the most
 * recently parked first (LIFO undoes the last, least proven decision),
 * then the lowest id: with the bias on, the kernel puts slab and page
 * tables in the lowest active regions of a zone (its frontier is counted
 * over them), so memory comes back at the bottom, where the parks (highest
 * first) took it last.  Highest first spread the slab of a file server
 * over six regions: the daemon had parked all but four at idle, gave the
 * top ones back during the fill, and the frontier then lay among them.
 * Returns true if a is to be given back before b.
 */
static bool unpark_before(const struct rpm_region *a, const struct rpm_region *b)
{
	bool ha = held_by_us(a), hb = held_by_us(b);

	if (ha != hb)
		return ha;
	if (a->ours != b->ours)
		return a->ours;
	if (a->last_vacated != b->last_vacated)
		return a->last_vacated > b->last_vacated;
	return a->id < b->id;
}

static bool releasable(const struct rpm_region *r)
{
	return r->state == RPM_REGION_PARKED || held_by_us(r);
}

/* What giving r back adds to MemAvailable. */
static uint64_t release_gain(const struct rpm_region *r)
{
	if (r->state == RPM_REGION_HELD)
		return r->free_pages;
	return r->parked_pages ? r->parked_pages : r->spanned_pages;
}

/*
 * Give back until @need pages are back (at least one region when
 * @at_least_one).  Each round takes the next region in unpark_before()
 * order: O(regions) per region given back, and pressure gives back few.
 */
static void unpark(struct pass *p, uint64_t need, bool at_least_one,
		   const char *why)
{
	struct rpm_region *given[RPM_POLICY_GIVEN_MAX];
	const struct rpm_region *prev = NULL;
	size_t n_given = 0;
	uint64_t got = 0;

	while (got < need || (at_least_one && !prev)) {
		struct rpm_region *best = NULL;

		for (size_t i = 0; i < p->n_regions; i++) {
			struct rpm_region *r = &p->regions[i];

			if (!releasable(r))
				continue;
			if (prev && !unpark_before(prev, r))
				continue;
			if (!best || unpark_before(r, best))
				best = r;
		}
		if (!best || !emit(p, RPM_ACT_UNPARK, best->id, 0, 0, why))
			break;
		/* Do not vacate it again before the pressure is long gone. */
		if (best->state == RPM_REGION_PARKED) {
			best->backoff_until = p->sys->now +
				sec_to_usec(p->cfg->pingpong_backoff_sec);
			if (n_given < RPM_POLICY_GIVEN_MAX)
				given[n_given++] = best;
		}
		got += release_gain(best);
		prev = best;
	}
	/*
	 * What came back is counted when the manager confirms it
	 * (policy_note_given()): an unpark that failed, or a dry run, gives
	 * nothing, and MemFree that did not rise must not read as memory
	 * used at once (it doubled the next give-back).
	 */
	if (got) {
		p->st->last_giveback = p->sys->now;
		p->st->giveback_pages = 0;
		p->st->giveback_free = p->sys->mem_free_pages;
	}
	/*
	 * Given back to be used, a region's first allocation is no refill of
	 * a region we emptied (policy_note_refill()).  Counted as one, it
	 * doubled the back-off: database at 2 GiB with movablecore had a
	 * region given back in the fill allocated from twice, and it waited
	 * 80 s instead of 30 before it was emptied again (3 regions empty of
	 * 4 at +60).  Cleared after the loop: the order above compares it.
	 */
	while (n_given)
		given[--n_given]->last_vacated = 0;
}

/*
 * How much to give back when memory is wanted.  A workload that grows
 * (a fill of the page cache, a VM booting) wants memory again a few
 * seconds after each give-back, and the rate of one region per pass
 * let reclaim evict cache the workload read back from disk later
 * (fragment at 8 GiB read 1.35 M sectors during its fill).  So each
 * give-back within RPM_POLICY_GROWTH_WINDOW_SEC of the previous one
 * gives back at least 2^n regions after n such give-backs in a row, up
 * to RPM_POLICY_GROWTH_MAX_SHIFT; a quiet spell starts over.
 *
 * The streak grows only when at least half of the last give-back was
 * used by the next one (else it starts over), and only on a give-back:
 * one burst raises
 * several signals within seconds (the kernel's shrinker releases a
 * region, a PSI trigger fires, the reclaim watch counts the evictions,
 * the growth rule sees the rise), and each raised the streak, with or
 * without anything given: vmhost at 8 GiB, where a guest grew by three
 * regions, had 2, 4 and then 11 regions come back within two seconds
 * (17 for 3), and the 30 s pause kept them out.  And the doubling is of
 * a region, not of @need: a need worked out from what is short (the
 * growth's lead, the evictions, the headroom) already says how much.
 */
static bool giveback_used(const struct pass *p)
{
	const struct rpm_policy_state *st = p->st;

	return st->giveback_pages &&
	       p->sys->mem_free_pages + st->giveback_pages / 2 <= st->giveback_free;
}

static uint64_t growth_ramp(struct pass *p, uint64_t need)
{
	struct rpm_policy_state *st = p->st;
	usec_t_ now = p->sys->now;
	uint64_t ramp;
	bool any = false;

	for (size_t i = 0; i < p->n_regions && !any; i++)
		any = releasable(&p->regions[i]);
	if (!any || !need)
		return need;	/* nothing to give or nothing wanted: no give-back */
	if (st->last_giveback && now >= st->last_giveback &&
	    now - st->last_giveback <= sec_to_usec(RPM_POLICY_GROWTH_WINDOW_SEC) &&
	    giveback_used(p)) {
		if (st->giveback_streak < RPM_POLICY_GROWTH_MAX_SHIFT)
			st->giveback_streak++;
	} else {
		st->giveback_streak = 0;	/* a quiet spell, or it was not wanted */
	}
	if (!st->giveback_streak)
		return need;	/* a held region gives back only its free pages */
	ramp = p->region_pages << st->giveback_streak;
	return need > ramp ? need : ramp;
}

/* ---- cache and reclaim ------------------------------------------------ */

/*
 * The page cache's high-water mark within CacheHistorySec=, and how much
 * of it reclaim or our drops evicted since: room for that much is kept,
 * so cache pushed out by parking can come back without a fight.  Cache
 * that went away because its files were deleted is not counted (no
 * reclaim evicted it).
 */
static uint64_t cache_reserve(struct pass *p)
{
	struct rpm_policy_state *st = p->st;
	const struct rpm_system *sys = p->sys;
	usec_t_ window = sec_to_usec(p->cfg->cache_history_sec);

	if (!sys->vmstat_valid || !window)
		return 0;
	/* Cache that came back used up part of the room. */
	if (sys->file_pages > st->cache_last)
		st->cache_evicted -= st->cache_evicted < sys->file_pages - st->cache_last ?
				     st->cache_evicted : sys->file_pages - st->cache_last;
	st->cache_last = sys->file_pages;
	if (sys->file_pages >= st->cache_peak ||
	    sys->now - st->cache_peak_when > window) {
		st->cache_peak = sys->file_pages;
		st->cache_peak_when = sys->now;
		st->cache_evicted = 0;
		return 0;
	}
	return st->cache_evicted < st->cache_peak - sys->file_pages ?
	       st->cache_evicted : st->cache_peak - sys->file_pages;
}

/*
 * The growth is over when process memory (anonymous) fell a region or
 * more below the most it reached, and reclaim did not take most of that:
 * a process exited or shrank.  Parking what it freed evicts nothing it
 * reads, so the hold ends there rather than PressureBackoffSec= after
 * the last growth (vmhost at 8 GiB: guests grew, four regions came back,
 * within a second others shrank by three regions, and the hold kept the
 * daemon three regions short of its bound for 30 s).  Page cache that goes
 * with deleted files does not end it: deletions churn file system
 * metadata, whose buffers pin regions until the journal is checkpointed,
 * and the files' neighbours are often read next (fileserver at 8 GiB,
 * when cache counted too: the daemon started with the deletions, 38
 * parks were refused for metadata buffers against 10, it dropped 203,298
 * pages of cache against 53,177, and reached 0.71 of its bound at +60 s
 * against 0.95).  What reclaim evicted does not count either: that is
 * pressure, not a free.
 */
static bool fell_from(const struct pass *p, uint64_t top, uint64_t top_steal, uint64_t anon)
{
	uint64_t fell, stolen;

	if (anon + p->region_pages > top)
		return false;
	fell = top - anon;
	stolen = p->sys->pgsteal > top_steal ? p->sys->pgsteal - top_steal : 0;
	return stolen < fell / 2;
}

/* Anonymous memory at its most since @top was set: keep the mark. */
static void note_top(uint64_t *top, uint64_t *top_steal, const struct rpm_system *sys,
		     bool reset)
{
	if (reset || sys->anon_pages > *top) {
		*top = sys->anon_pages;
		*top_steal = sys->pgsteal;
	}
}

/*
 * The back-off after memory fell below the headroom ends the same way:
 * it keeps a growing workload from having regions parked under it again,
 * and a workload whose processes freed a region's worth is not growing
 * (vmhost at 8 GiB: a guest grew, a region came back, 20 s later another
 * guest shrank by two regions, and nothing was parked for the 10 s left
 * of the back-off).  Not after PSI pressure or evictions: those are the
 * system telling us memory was short, whatever the workload does next.
 */
static void end_headroom_pause(struct pass *p)
{
	struct rpm_policy_state *st = p->st;
	const struct rpm_system *sys = p->sys;

	if (!st->pause_for_headroom || sys->now >= st->paused_until || !sys->vmstat_valid)
		return;
	note_top(&st->pause_top, &st->pause_top_steal, sys, false);
	if (fell_from(p, st->pause_top, st->pause_top_steal, sys->anon_pages))
		st->paused_until = sys->now;
}

/*
 * Growth is a quarter of a region within RPM_POLICY_GROWTH_WINDOW_SEC, or
 * as fast over a longer @span: passes can be further apart than the window
 * (a converged daemon sleeps until an event or IdleIntervalSec=), and a
 * growth between them is a growth all the same.  fragment at 2 GiB with
 * movablecore: the daemon parked 12 regions at idle, the fill took MemFree
 * from 112,343 to 49,809 pages in the 10.0 s to the next pass, which
 * started over instead of seeing it; nothing came back until PSI and
 * reclaim (3,800 pages evicted, 22,448 sectors read back in the fill).
 */
static uint64_t grow_threshold(const struct pass *p, usec_t_ span)
{
	usec_t_ window = sec_to_usec(RPM_POLICY_GROWTH_WINDOW_SEC);
	uint64_t quarter = p->region_pages / 4;

	if (span <= window)
		return quarter;
	return (uint64_t)((double)quarter * (double)span / (double)window);
}

/*
 * Memory in use is growing: the page cache and anonymous memory together
 * grew by a quarter of a region within RPM_POLICY_GROWTH_WINDOW_SEC,
 * lately (PressureBackoffSec=).  Free memory is turning into cache or
 * process memory then (a copy, a fill, a build, a database sizing its
 * buffers); parking it would only make reclaim evict cache the workload
 * reads again.  Measured on fragment at 8 GiB: the daemon parked again
 * each time the back-off after a give-back ended, in the middle of the
 * fill, which then read 230 MiB back from disk where stock read none; on
 * database at 2 GiB, counting the page cache alone, anonymous buffers took
 * the last free memory, and the 24,440 sectors read back in the fill were
 * cache kswapd evicted for them.  While it grows nothing is parked,
 * emptied (a target's last call parks it) or held.  The sum does not move
 * when we park or hold (those change free pages only), nor when we migrate.
 */
static bool use_growing(struct pass *p)
{
	struct rpm_policy_state *st = p->st;
	const struct rpm_system *sys = p->sys;
	usec_t_ window = sec_to_usec(RPM_POLICY_GROWTH_WINDOW_SEC);
	uint64_t use = sys->file_pages + sys->anon_pages;
	bool was_growing = sys->now < st->grow_until;

	if (!sys->vmstat_valid)
		return false;
	if (!st->grow_base_when || use < st->grow_base || sys->now < st->grow_base_when) {
		st->grow_base = use;
		st->grow_base_when = sys->now;
		/* Grown since it began counts from the lowest since. */
		if (use < st->grow_start)
			st->grow_start = use;
	} else if (use - st->grow_base > grow_threshold(p, sys->now - st->grow_base_when)) {
		/*
		 * Over at least a second: one burst is not a rate.  The
		 * fastest of this growth, since fills come in bursts (fragment
		 * alternates file writes with anonymous allocations).
		 */
		usec_t_ span = sys->now - st->grow_base_when;
		uint64_t rate;

		if (span < sec_to_usec(1))
			span = sec_to_usec(1);
		rate = (use - st->grow_base) * 1000000ULL / span;
		if (sys->now >= st->grow_until || rate > st->grow_rate)
			st->grow_rate = rate;
		/*
		 * A new growth, or a step after a quiet spell within the
		 * same one (the hold lasts PressureBackoffSec=): a new burst,
		 * whose lead is what it grew, not the sum of all of them.
		 */
		if (!was_growing || sys->now - st->grow_step_when > window)
			st->grow_start = st->grow_base;
		st->grow_step_when = sys->now;
		st->grow_until = sys->now + sec_to_usec(p->cfg->pressure_backoff_sec);
		st->grow_base = use;
		st->grow_base_when = sys->now;
		note_top(&st->grow_top, &st->grow_top_steal, sys, !was_growing);
	} else {
		if (was_growing)
			note_top(&st->grow_top, &st->grow_top_steal, sys, false);
		if (sys->now - st->grow_base_when > window) {
			/* Slower than that: start over from here. */
			st->grow_base = use;
			st->grow_base_when = sys->now;
		}
	}
	if (sys->now < st->grow_until &&
	    fell_from(p, st->grow_top, st->grow_top_steal, sys->anon_pages))
		st->grow_until = sys->now;
	if (sys->now >= st->grow_until)
		st->grow_rate = 0;
	return sys->now < st->grow_until;
}

/*
 * The free memory to keep while memory in use grows, whatever its rate:
 * two regions, but never more than the headroom.  The headroom is what the
 * operator asked to keep available; above it parking is allowed, so a
 * larger floor gives back what the next pass parks again.  That is the
 * case wherever two regions are a large share of memory: two regions of
 * 128 MiB are 12.5 % of 2 GiB, above the headroom of 10 %, and after a
 * park at the park limit (headroom + 3 %) a growth of a quarter region
 * brought a region back (vmhost at 2 GiB with movablecore: vm1 grew by
 * 21,000 pages, MemFree fell to 52,935 against 65,536, and the region
 * given back stayed empty until it was parked again 30 s later); with
 * regions of 1 GiB on a 4 GiB machine it would keep half of memory free.
 */
static uint64_t grow_fixed_floor(const struct pass *p)
{
	uint64_t floor = RPM_POLICY_GROW_FREE_REGIONS * p->region_pages;

	return floor < p->headroom ? floor : p->headroom;
}

/*
 * The free memory to keep while memory in use grows: the fixed floor
 * above, or what it grows in RPM_POLICY_GROW_LEAD_SEC at the fastest rate
 * seen in this growth if that is more (at most half of memory).  Two
 * regions last a slow fill many passes, but not a fast one: database's
 * fill at 8 GiB grows by about 16,000 pages a second, ate the two regions
 * in four seconds, and the region a pass that came back let kswapd evict
 * cache the fill read again (150,832 sectors against stock's 64).  The
 * lead covers the reclaim watch's period, twice, and the pass that acts
 * on it.
 *
 * At most what the growth added since it began, though: a growth is taken
 * to go on for as long again as it went on so far, no longer.  A fill goes
 * on, and its lead reaches the full 8 s within 8 s; a burst stops, and
 * extrapolating its rate for 8 s gave back several times what it took
 * (vmhost at 8 GiB: a guest grew by three regions within two seconds, and
 * the lead at that rate was ten).
 */
static uint64_t grow_floor(const struct pass *p)
{
	const struct rpm_policy_state *st = p->st;
	const struct rpm_system *sys = p->sys;
	uint64_t floor = grow_fixed_floor(p);
	uint64_t lead = sys->now < st->grow_until ?
			st->grow_rate * RPM_POLICY_GROW_LEAD_SEC : 0;
	uint64_t use = sys->file_pages + sys->anon_pages;
	uint64_t grown = use > st->grow_start ? use - st->grow_start : 0;
	uint64_t cap = sys->mem_total_pages / 2;

	if (lead > grown)
		lead = grown;
	if (lead > cap)
		lead = cap;
	return lead > floor ? lead : floor;
}

/*
 * The MemFree below which the manager should decide at once: the growth
 * rule's floor, while some memory is parked and MemFree is above it.
 * Between passes (a converged daemon sleeps up to IdleIntervalSec=, and
 * even a busy one only looks on events), growing memory use crosses the
 * floor unseen until reclaim has evicted cache.  Armed only from above,
 * so a daemon that keeps MemFree below it is not woken every time the
 * reclaim watch reads it.
 */
static uint64_t low_mark(const struct pass *p)
{
	uint64_t floor = grow_floor(p);
	bool parked = false;

	for (size_t i = 0; i < p->n_regions && !parked; i++)
		parked = releasable(&p->regions[i]);
	return parked && p->sys->mem_free_pages >= floor ? floor : 0;
}

/*
 * The pages we migrated within RPM_POLICY_MOVE_CREDIT_SEC that reclaim
 * may still be evicting cache for: a move into memory without free room
 * wakes kswapd, which steals about as many pages as moved in.
 */
static uint64_t move_credit(struct rpm_policy_state *st, usec_t_ now)
{
	uint64_t moved = st->total_migrated - st->vm_prev_migrated;

	st->vm_prev_migrated = st->total_migrated;
	if (moved) {
		st->move_credit += moved;
		st->move_credit_when = now;
	} else if (now - st->move_credit_when > sec_to_usec(RPM_POLICY_MOVE_CREDIT_SEC)) {
		st->move_credit = 0;
	}
	return st->move_credit;
}

/*
 * Update the reclaim rates from the vmstat counters.  Returns the pages
 * reclaim evicted (or that were read back in) since the last pass when
 * that is faster than ReclaimUnparkPagesPerSec= while we hold memory
 * back: that much comes back, at least one region.  0 otherwise.
 */
static uint64_t reclaim_wants_memory(struct pass *p)
{
	struct rpm_policy_state *st = p->st;
	const struct rpm_system *sys = p->sys;
	uint64_t steals, dropped, limit, credit, watch, ours_d, ours_w;
	struct reclaim_step d;
	bool ours = false, want;

	if (!sys->vmstat_valid)
		return 0;
	dropped = st->total_dropped - st->vm_prev_dropped;
	st->vm_prev_dropped = st->total_dropped;
	credit = move_credit(st, sys->now);
	if (!reclaim_rate_step(&st->vm_rate, sys->now, sys->pgsteal, sys->refault_file, &d))
		return 0;
	st->cache_evicted += d.steal + dropped;

	limit = p->cfg->reclaim_unpark_pages_per_sec;
	if (!limit)
		return 0;
	for (size_t i = 0; i < p->n_regions && !ours; i++)
		ours = p->regions[i].ours;
	/*
	 * Steals that made room for pages we moved are the planned cost of
	 * the consolidation, not demand: without this, emptying a region
	 * into full memory woke kswapd, its steals unparked a region and
	 * the pressure back-off kept it open for 30 s (daemon-movable
	 * reached its bound after 11 to 44 s, once not within 60 s).
	 * Refaults are never ours: the data was wanted again.
	 */
	watch = sys->reclaim_watch_pages;
	ours_d = d.steal < credit ? d.steal : credit;
	ours_w = watch < credit ? watch : credit;
	d.steal -= ours_d;
	watch -= ours_w;
	st->move_credit -= ours_d > ours_w ? ours_d : ours_w;
	/* A burst between two passes far apart, seen by the reclaim watch,
	 * counts even where the average over the whole gap does not. */
	want = reclaim_step_over(&d, limit) || watch >= limit;
	if (!ours || !want)
		return 0;
	steals = d.steal > watch ? d.steal : watch;
	return d.refault > steals ? d.refault : steals;
}

/* ---- parking ---------------------------------------------------------- */

/*
 * A region we worked on that is now empty was vacated, even if the manager
 * told policy_note_compact() before it refreshed the free count: record it
 * here so that a later refill counts as ping-pong.
 */
static void observe_vacated(struct pass *p)
{
	for (size_t i = 0; i < p->n_regions; i++) {
		struct rpm_region *r = &p->regions[i];

		if ((r->state != RPM_REGION_ACTIVE && !held_by_us(r)) ||
		    !r->managed_pages || r->free_pages < r->managed_pages)
			continue;
		if (!r->pages_migrated && !r->pages_dropped)
			continue;
		if (r->last_vacated && r->last_vacated > r->last_refilled)
			continue;	/* already recorded */
		r->last_vacated = p->sys->now;
		p->st->regions_vacated++;
	}
}

/* ---- the plan ----------------------------------------------------------- */

enum klass {
	K_SKIP,		/* not ours to plan: parked, busy, held by others, no memory */
	K_PINNED,	/* cannot be emptied now: kept */
	K_EMPTY,
	K_MOVABLE,
};

struct plan {
	enum klass klass;
	bool need_scan;
	enum rpm_compact_mode mode;
	uint64_t used;		/* pages in use */
	uint64_t migrate;	/* of which would be migrated */
	uint64_t drop;		/* of which would be dropped */
	uint64_t cost;		/* estimated work, pages (drops count 1/8) */
};

static bool detail_fresh(const struct rpm_region *r, usec_t_ now)
{
	return r->detail.valid &&
	       now - r->detail.when <= sec_to_usec(RPM_POLICY_DETAIL_MAX_AGE_SEC);
}

static bool idle_fresh(const struct rpm_policy_config *cfg,
		       const struct rpm_region *r, usec_t_ now)
{
	return r->idle_valid && r->idle_when <= now &&
	       now - r->idle_when <= sec_to_usec(cfg->min_idle_age_sec);
}

/* The region has ISA DMA memory, which the kernel never parks. */
static bool region_dma(const struct rpm_region *r)
{
	const char *z = r->zones;

	while (*z) {
		if (z[0] == 'D' && z[1] == 'M' && z[2] == 'A' && (z[3] == ',' || !z[3]))
			return true;
		while (*z && *z != ',')
			z++;
		if (*z)
			z++;
	}
	return false;
}

/*
 * Mode and cost.  Hot pages are always migrated, never left behind; page
 * cache is dropped only where the idle sampler found it idle (clean and
 * unused for MinIdleAgeSec=), because cache that is read again costs a
 * disk read, more than moving it.  In mode BOTH the kernel drops only
 * clean, unmapped, inactive cache and migrates the rest, so a region is
 * emptied either way.
 */
static void plan_mode(const struct rpm_policy_config *cfg,
		      const struct rpm_region *r, usec_t_ now, struct plan *pl)
{
	const struct rpm_region_detail *d = &r->detail;
	uint64_t droppable = 0;

	pl->mode = RPM_COMPACT_MIGRATE;
	if (cfg->drop_cache && d->valid && d->file_clean && idle_fresh(cfg, r, now)) {
		droppable = r->idle_file_pages < d->file_clean ?
			    r->idle_file_pages : d->file_clean;
		if (droppable)
			pl->mode = RPM_COMPACT_BOTH;
	}
	if (droppable > pl->used)
		droppable = pl->used;
	pl->drop = droppable;
	pl->migrate = pl->used - droppable;
	pl->cost = pl->migrate + pl->drop / 8;
}

/* Energy of the migrations against what parking saves within PaybackSec=. */
static bool worth_it(const struct rpm_policy_config *cfg, uint64_t migrate)
{
	double cost_uj = (double)migrate * cfg->migrate_cost_uj_per_page;
	double saving_uj = cfg->region_saving_mw * 1000.0 * cfg->payback_sec;

	return cost_uj <= saving_uj;
}

/* A pinned region's breakdown is refreshed ever less often. */
static bool rescan_due(const struct rpm_region *r, usec_t_ now)
{
	unsigned shift = r->pinned_scans < RPM_POLICY_MAX_RESCAN_SHIFT ?
			 r->pinned_scans : RPM_POLICY_MAX_RESCAN_SHIFT;

	return !r->detail.valid ||
	       now - r->detail.when > sec_to_usec(RPM_POLICY_DETAIL_MAX_AGE_SEC) << shift;
}

static void classify(const struct pass *p, const struct rpm_region *r,
		     struct plan *pl)
{
	const struct rpm_policy_config *cfg = p->cfg;
	usec_t_ now = p->sys->now;

	memset(pl, 0, sizeof(*pl));
	pl->klass = K_SKIP;
	if ((r->state != RPM_REGION_ACTIVE && !held_by_us(r)) || !r->managed_pages)
		return;
	pl->used = r->managed_pages > r->free_pages ?
		   r->managed_pages - r->free_pages : 0;
	pl->migrate = pl->cost = pl->used;
	pl->klass = K_PINNED;
	if (region_dma(r) || r->no_park)
		return;		/* never parked: it may as well hold pages */
	if (!pl->used) {
		/*
		 * All its managed pages free, but reserved pages (memblock,
		 * firmware) are not managed: the kernel cannot take those,
		 * the region cannot be parked.  Reserved memory stays; slab
		 * in an old breakdown may have gone, so only reserved counts.
		 */
		if (!r->detail.valid || !r->detail.reserved)
			pl->klass = K_EMPTY;
		return;
	}
	if (now < r->backoff_until)
		return;		/* stuck or ping-ponging: leave it be */
	if (cfg->max_pages_to_vacate && pl->used > cfg->max_pages_to_vacate)
		return;
	if (region_has_unmovable(r))
		return;
	pl->klass = K_MOVABLE;
	if (!detail_fresh(r, now)) {
		pl->need_scan = true;
		return;
	}
	plan_mode(cfg, r, now, pl);
	if (!worth_it(cfg, pl->migrate))
		pl->klass = K_PINNED;
}

static unsigned cost_bucket(const struct pass *p, uint64_t cost)
{
	uint64_t b = cost * RPM_POLICY_COST_BUCKETS / (p->region_pages + 1);

	return b < RPM_POLICY_COST_BUCKETS ? (unsigned)b : RPM_POLICY_COST_BUCKETS - 1;
}

/* ---- the kernel's max_parked_pct ----------------------------------------- */

static uint64_t region_size(const struct rpm_region *r)
{
	return r->managed_pages + r->parked_pages;
}

/* Out of the allocator for the kernel's cap: parked, or held by someone else. */
static bool cap_out(const struct rpm_region *r)
{
	return r->state == RPM_REGION_PARKED ||
	       (r->state == RPM_REGION_HELD && !held_by_us(r));
}

/*
 * Could the plan still take @r out (a target or a spare)?  Regions kept
 * already (pinned, or kept for an earlier zone) cannot.
 */
static bool cap_candidate(const struct rpm_region *r)
{
	return r->cap_key && r->role == RPM_ROLE_NONE;
}

/*
 * Keeping order for the cap (rpm_region.cap_key): dearest to empty first
 * (64 cost classes, keys 2 to 65), empty regions last (1); 0: not a
 * candidate.
 */
#define CAP_KEYS	66
/* Zones over the cap worked on per walk of the regions. */
#define CAP_GROUPS	16

struct cap_group {
	unsigned node, lo, hi;		/* zone kinds lo..hi of node */
	bool low_zones;			/* instead: every zone below ZONE_MOVABLE */
	uint64_t excess;		/* candidate pages that must stay */
	uint64_t in_t;			/* of them, still to keep at key t */
	unsigned t;
	uint64_t hist[CAP_KEYS];	/* candidate pages per key */
};

static uint8_t cap_key(const struct pass *p, const struct plan *pl)
{
	if (pl->klass == K_EMPTY)
		return 1;
	if (pl->klass != K_MOVABLE)
		return 0;
	return (uint8_t)(2 + cost_bucket(p, pl->cost) * (CAP_KEYS - 2) / RPM_POLICY_COST_BUCKETS);
}

/*
 * Taking the histogram's classes from the highest down, the class where
 * @want pages are reached, and in *@in_t how many of that class are
 * still needed there.  Not reached: class 0, all of it.
 */
static unsigned hist_threshold(const uint64_t *hist, unsigned n, uint64_t want,
			       uint64_t *in_t)
{
	uint64_t acc = 0;

	*in_t = 0;
	for (unsigned k = n; k-- > 0;) {
		if (acc + hist[k] >= want) {
			*in_t = want - acc;
			return k;
		}
		acc += hist[k];
		*in_t = hist[k];
	}
	return 0;
}

/*
 * Keep, in each of the @n groups (disjoint), the dearest candidates until
 * the group's excess stays: they join the keep set's capacity (*@cap) and
 * leave the cost histogram @hist.  Two walks of the regions for all groups.
 */
static void keep_for_cap(struct pass *p, struct cap_group *g, size_t n,
			 uint64_t *hist, uint64_t *cap, uint64_t *cand, unsigned *kept)
{
	signed char map[RPM_POLICY_ZONE_SLOTS];
	struct plan pl;

	memset(map, -1, sizeof(map));
	for (size_t j = 0; j < n; j++) {
		if (!g[j].low_zones) {
			for (unsigned k = g[j].lo; k <= g[j].hi; k++)
				map[g[j].node * RPM_POLICY_ZONE_KINDS + k] = (signed char)j;
			continue;
		}
		for (unsigned slot = 0; slot < RPM_POLICY_ZONE_SLOTS; slot++)
			if (slot % RPM_POLICY_ZONE_KINDS != RPM_ZONE_KIND_MOVABLE)
				map[slot] = (signed char)j;
	}
	for (size_t i = 0; i < p->n_regions; i++) {
		const struct rpm_region *r = &p->regions[i];
		int j = map[zone_slot(r)];

		if (j >= 0 && cap_candidate(r))
			g[j].hist[r->cap_key] += region_size(r);
	}
	for (size_t j = 0; j < n; j++)
		g[j].t = hist_threshold(g[j].hist, CAP_KEYS, g[j].excess, &g[j].in_t);
	for (size_t i = 0; i < p->n_regions; i++) {
		struct rpm_region *r = &p->regions[i];
		int j = map[zone_slot(r)];
		unsigned k;

		if (j < 0 || !cap_candidate(r))
			continue;
		k = r->cap_key;
		if (k < g[j].t || (k == g[j].t && !g[j].in_t))
			continue;
		if (k == g[j].t)
			g[j].in_t -= g[j].in_t < region_size(r) ? g[j].in_t : region_size(r);
		r->role = RPM_ROLE_KEEP;
		*cap += r->managed_pages;
		classify(p, r, &pl);	/* the few regions kept: its histogram bucket */
		if (pl.klass == K_MOVABLE)
			hist[cost_bucket(p, pl.cost)] -= r->managed_pages;
		if (cand)
			cand[zone_slot(r)] -= region_size(r);
		(*kept)++;
		p->st->plan.keep++;
	}
}

/*
 * The kernel refuses a park or hold that would take more than
 * regionpm.max_parked_pct of a zone (of ZONE_MOVABLE together with its
 * node's zones below it).  A plan that counted on emptying past the cap
 * left a region the kernel would not take, and moved nothing into the
 * room the kernel made it keep: at 8 GiB with movablecore=50%, DMA32's
 * 13th park was refused, its region (512 pages in use) stayed unplanned,
 * and the plan kept a region of ZONE_MOVABLE that could have been emptied
 * into it.  So before the keep set is chosen, each zone whose candidates
 * (targets and spares) would not fit under the cap keeps the dearest of
 * them until the rest fits; they count as kept capacity.  Kernel zones
 * first, each on its own; then ZONE_MOVABLE with the zones below it,
 * counting what those kept.
 */
static void keep_within_cap(struct pass *p, uint64_t *hist, uint64_t *cap)
{
	uint64_t out[RPM_POLICY_ZONE_SLOTS] = { 0 }, cand[RPM_POLICY_ZONE_SLOTS] = { 0 };
	unsigned pct = p->sys->max_parked_pct;
	struct cap_group g[CAP_GROUPS];
	size_t n = 0;

	if (!pct || pct >= 100)
		return;
	for (size_t i = 0; i < p->n_regions; i++) {
		struct rpm_region *r = &p->regions[i];

		if (cap_out(r))
			out[zone_slot(r)] += region_size(r);
		else if (cap_candidate(r))
			cand[zone_slot(r)] += region_size(r);
	}
	/* The kernel zones one by one (phase 0), then Movable and below (1). */
	for (unsigned phase = 0; phase < 2; phase++) {
		unsigned first = phase ? RPM_ZONE_KIND_MOVABLE : 0;
		unsigned last = phase ? RPM_ZONE_KIND_MOVABLE : RPM_ZONE_KIND_MOVABLE - 1;

		for (unsigned node = 0; node < RPM_POLICY_ZONE_NODES; node++) {
			unsigned base = node * RPM_POLICY_ZONE_KINDS;

			for (unsigned hi = first; hi <= last; hi++) {
				unsigned lo = phase ? 0 : hi;
				uint64_t total = 0, taken = 0, limit;

				for (unsigned k = lo; k <= hi; k++) {
					total += p->zones[base + k].total;
					taken += out[base + k] + cand[base + k];
				}
				limit = total * pct / 100;
				if (taken <= limit)
					continue;
				g[n] = (struct cap_group){ .node = node, .lo = lo, .hi = hi,
							   .excess = taken - limit };
				if (++n == CAP_GROUPS) {
					keep_for_cap(p, g, n, hist, cap, cand, &p->st->plan.capped);
					n = 0;
				}
			}
		}
		if (n)
			keep_for_cap(p, g, n, hist, cap, cand, &p->st->plan.capped);
		n = 0;
	}
}

/*
 * Kept only until its back-off ends (given back for growth, refilled, or
 * its park refused), mostly empty and with nothing unmovable: once the
 * back-off is over the plan will likely empty it.  Its free pages are no
 * capacity for the keep set: pages moved there would move a second time.
 */
static bool backing_off(const struct pass *p, const struct rpm_region *r)
{
	return r->role == RPM_ROLE_PINNED && p->sys->now < r->backoff_until &&
	       (r->state == RPM_REGION_ACTIVE || held_by_us(r)) && !region_dma(r) &&
	       !region_has_unmovable(r) && r->free_pages * 2 >= r->managed_pages;
}

/*
 * With a ZONE_MOVABLE, the pages in the zones below it move only within
 * those zones (as their slab and page tables are allocated only there):
 * the keep set must hold them there, with the kernel's marks of those
 * zones and the slack for new allocations free.  Without this the plan
 * counted ZONE_MOVABLE's free pages for a DMA32 target that the kernel
 * then refused to empty ("no free memory above the watermarks") every
 * pass, and kept a ZONE_MOVABLE region whose pages could have moved
 * into that target's free pages (daemon-movable at 2 GiB: 6 empty of a
 * bound of 7).  The dearest of the kernel zones' candidates stay until
 * the rest fits.
 */
static void keep_low_room(struct pass *p, uint64_t *hist, uint64_t *cap)
{
	struct cap_group g = { .low_zones = true };
	uint64_t used = 0, kept = 0, need;
	struct plan pl;

	if (!p->movable_zone)
		return;
	for (size_t i = 0; i < p->n_regions; i++) {
		const struct rpm_region *r = &p->regions[i];

		if (region_in_movable(r))
			continue;
		classify(p, r, &pl);
		if (pl.klass == K_SKIP)
			continue;
		used += pl.used;
		if (r->role == RPM_ROLE_KEEP)
			kept += r->managed_pages;
		else if (r->role == RPM_ROLE_PINNED)
			kept += backing_off(p, r) ? pl.used : r->managed_pages;
	}
	need = used + p->region_pages / 16 +
	       (p->sys->marks_valid ? p->sys->low_reserve_pages : 0);
	if (kept >= need)
		return;
	g.excess = need - kept;
	keep_for_cap(p, &g, 1, hist, cap, NULL, &p->st->plan.low_kept);
}

/*
 * Plan the keep set and mark each region's role.  Returns the pages the
 * active regions cannot hold (0 when they can): then parked memory must
 * come back.
 */
static uint64_t plan_keep_set(struct pass *p, uint64_t cache_room)
{
	uint64_t hist[RPM_POLICY_COST_BUCKETS] = { 0 };
	struct rpm_plan_summary *sum = &p->st->plan;
	uint64_t used = 0, cap = 0, need, free_need, reserve;
	uint64_t reclaimable, all_active = 0, slack, need_low, marks, kept_free, kept_low;
	unsigned threshold = RPM_POLICY_COST_BUCKETS;	/* keep buckets above */
	uint64_t in_threshold = 0;	/* capacity still to take from it */
	struct plan pl;

	memset(sum, 0, sizeof(*sum));
	for (size_t i = 0; i < p->n_regions; i++) {
		struct rpm_region *r = &p->regions[i];

		classify(p, r, &pl);
		r->role = r->state == RPM_REGION_PARKED ? RPM_ROLE_PARKED : RPM_ROLE_NONE;
		r->cap_key = cap_key(p, &pl);
		sum->parked += r->state == RPM_REGION_PARKED;
		if (pl.klass == K_SKIP)
			continue;
		all_active += r->managed_pages;
		used += pl.used;
		if (pl.klass == K_PINNED) {
			r->role = RPM_ROLE_PINNED;
			/* Backing off: emptied later, its free pages are no room. */
			cap += backing_off(p, r) ? pl.used : r->managed_pages;
			sum->pinned++;
		} else if (pl.klass == K_MOVABLE) {
			hist[cost_bucket(p, pl.cost)] += r->managed_pages;
		}
	}
	keep_within_cap(p, hist, &cap);
	keep_low_room(p, hist, &cap);
	/*
	 * After the plan MemAvailable is the free memory of the keep set plus
	 * what it can reclaim: only the part of the headroom that reclaimable
	 * memory does not cover has to be free.
	 */
	reclaimable = p->sys->mem_available_pages > p->sys->mem_free_pages ?
		      p->sys->mem_available_pages - p->sys->mem_free_pages : 0;
	free_need = p->park_limit > reclaimable ? p->park_limit - reclaimable : 0;
	slack = p->region_pages / 16;	/* allocations between two passes */
	/*
	 * Whatever the headroom, the keep set keeps the kernel's reserve
	 * (high watermarks, lowmem reserves) free, and above it the room for
	 * evicted cache or the slack: planned below the marks, a keep set
	 * full of cache has kswapd evict cache for every page moved in and
	 * for every allocation after (with reclaimable cache covering the
	 * headroom, the plan kept 2,048 free pages where the kernel's
	 * marks at 8 GiB are about 7,000).
	 */
	marks = p->sys->marks_valid ? p->sys->kernel_reserve_pages : 0;
	kept_free = marks + (cache_room > slack ? cache_room : slack);
	reserve = free_need > kept_free ? free_need : kept_free;
	/*
	 * Idle cache counts as used: it is dropped only where the keep set
	 * has no room for it (vacate()).  Planned away, it was dropped
	 * whenever its idle sample came in before its region was emptied,
	 * though nothing was short of memory (fileserver at 8 GiB with
	 * movablecore=50%: 99,828 pages dropped, and the hot phase read
	 * 18.9 % of its hot set back from disk; stock reads none of it).
	 */
	need = used + reserve;
	sum->need_pages = need;
	/*
	 * Parked memory comes back only when even every active region is too
	 * little with the lower (unpark) headroom: park and unpark thresholds
	 * differ, so noise cannot park and unpark one region over and over.
	 *
	 * Nor is the room the keep set keeps above the kernel's marks: with
	 * reclaimable memory covering the headroom, free memory at the marks
	 * is where the kernel keeps it anyway (kswapd evicts the coldest
	 * cache), and whether that cache was worth a region is for the
	 * reclaim watch (steals and refaults, reclaim_wants_memory()), the
	 * growth check and PSI to judge.  Only half the marks must stay
	 * free: below that the kernel is short of free pages whatever its
	 * cache.  With the full marks (and the slack) asked for, cache that
	 * crept up gave a region back for a few pages: fragment at 2 GiB
	 * parked and unparked one region every 100 s of its hot phase
	 * (MemFree 373 pages above the marks, MemAvailable six times the
	 * headroom), once with a full region emptied into the one given back
	 * (31,266 pages migrated); database at 2 GiB emptied a region
	 * (32,768 pages moved), parked it, and gave it back a second later,
	 * 669 pages below the marks.
	 */
	free_need = p->headroom > reclaimable ? p->headroom - reclaimable : 0;
	kept_low = marks ? marks / 2 : slack / 2;
	need_low = used + (free_need > kept_low ? free_need : kept_low);
	sum->cache_reserve = cache_room;

	/* Dearest to empty first: find the bucket where the capacity suffices. */
	if (cap < need)
		threshold = hist_threshold(hist, RPM_POLICY_COST_BUCKETS, need - cap,
					   &in_threshold);
	for (size_t i = 0; i < p->n_regions; i++) {
		struct rpm_region *r = &p->regions[i];
		unsigned b;

		classify(p, r, &pl);
		if (pl.klass != K_MOVABLE || r->role == RPM_ROLE_KEEP)
			continue;	/* kept for the cap already */
		b = cost_bucket(p, pl.cost);
		/* Within the threshold bucket the lowest regions stay. */
		if (b > threshold || (b == threshold && in_threshold)) {
			r->role = RPM_ROLE_KEEP;
			cap += r->managed_pages;
			if (b == threshold)
				in_threshold = in_threshold > r->managed_pages ?
					       in_threshold - r->managed_pages : 0;
			sum->keep++;
		} else {
			r->role = RPM_ROLE_TARGET;
			sum->targets++;
		}
	}
	/* Empty regions fill what the capacity still lacks, lowest first. */
	for (size_t i = 0; i < p->n_regions; i++) {
		struct rpm_region *r = &p->regions[i];

		classify(p, r, &pl);
		if (pl.klass != K_EMPTY || r->role == RPM_ROLE_KEEP)
			continue;
		if (cap < need) {
			r->role = RPM_ROLE_KEEP;
			cap += r->managed_pages;
			sum->keep++;
		} else {
			r->role = RPM_ROLE_SPARE;
			sum->spare++;
		}
	}
	sum->keep += sum->pinned;
	sum->keep_capacity = cap;
	sum->planned = true;
	sum->shortfall = need_low > all_active ? need_low - all_active : 0;
	return sum->shortfall;
}

/* ---- acting on the plan ------------------------------------------------- */

/* Park spare regions, highest first: the bias keeps high regions empty longest. */
static void park_spare(struct pass *p)
{
	for (size_t k = p->n_regions; k-- > 0;) {
		struct rpm_region *r = &p->regions[k];
		/* A held region's free pages are already out of MemAvailable. */
		uint64_t cost = held_by_us(r) ? 0 : r->managed_pages;

		if (r->role != RPM_ROLE_SPARE || p->sys->now < r->backoff_until)
			continue;
		if (p->avail < cost || p->avail - cost < p->park_limit)
			continue;
		if (cost && !zone_can_give(p, r, cost))
			continue;
		if (!emit(p, RPM_ACT_PARK, r->id, 0, 0, "region is empty"))
			return;
		p->avail -= cost;
		zone_take(p, r, cost);
		room_take_free(&p->room, r, cost);
	}
}

/* Give every region we hold back to the allocator. */
static void end_holds(struct pass *p, const char *why)
{
	for (size_t i = 0; i < p->n_regions; i++) {
		struct rpm_region *r = &p->regions[i];

		if (!held_by_us(r))
			continue;
		if (!emit(p, RPM_ACT_UNPARK, r->id, 0, 0, why))
			return;
		p->avail += r->free_pages;
	}
}

/* Held by us, or a hold for it asked for earlier in this pass. */
static bool held_now(const struct pass *p, const struct rpm_region *r)
{
	if (held_by_us(r))
		return true;
	for (size_t i = 0; i < p->n; i++)
		if (p->out[i].kind == RPM_ACT_HOLD && p->out[i].region == r->id)
			return true;
	return false;
}

/*
 * Emptying r and parking it takes from MemAvailable its free pages (unless
 * held: gone already) plus the pages that move into the keep set (what it
 * takes from its zone is zone_cost()).
 */
static uint64_t park_cost(const struct pass *p, const struct rpm_region *r,
			  const struct plan *pl)
{
	return pl->migrate + (held_now(p, r) ? 0 : r->free_pages);
}

/*
 * What emptying and parking r takes from its own (node, zone): its free
 * pages (unless held) and the moved pages that the zone has room for above
 * its floor.  Migration targets come from the target's own zone first and
 * from the node's lower zones once it runs short (a full ZONE_MOVABLE
 * spills into DMA32), so a zone that cannot take the moved pages still
 * lets the region go; MemAvailable, checked as a whole, pays for them.
 */
static uint64_t zone_cost(struct pass *p, const struct rpm_region *r,
			  const struct plan *pl)
{
	struct zone_acct *z = &p->zones[zone_slot(r)];
	uint64_t own = held_now(p, r) ? 0 : r->free_pages;
	uint64_t floor = zone_floor(z), room;

	room = z->free > own + floor ? z->free - own - floor : 0;
	return own + (pl->migrate < room ? pl->migrate : room);
}

static bool parkable_once_empty(struct pass *p, const struct rpm_region *r,
				const struct plan *pl)
{
	uint64_t cost = park_cost(p, r, pl);

	return p->avail >= cost && p->avail - cost >= p->park_limit &&
	       zone_can_give(p, r, zone_cost(p, r, pl));
}

/*
 * Hold every target we may: its free pages leave the allocator, so that
 * migrations out of other targets and new allocations land in the keep
 * set, once.  A hold that has lived a third of the kernel's timeout is
 * renewed; a hold on a region the plan now keeps ends.
 */
static void hold_targets(struct pass *p)
{
	usec_t_ renew = p->sys->hold_timeout / 3;
	uint64_t moves = 0;	/* what the targets held so far will move */
	struct room planned = p->room;	/* less those moves */
	struct plan pl;

	for (size_t k = p->n_regions; k-- > 0;) {
		struct rpm_region *r = &p->regions[k];
		/*
		 * A held target that only waits (backing off after a refused
		 * park or a refill) and is mostly empty keeps its hold: ended,
		 * the moves out of the other targets filled it (fileserver at
		 * 8 GiB: a region left with one kernel page took 32,768 pages
		 * back and had to be emptied again; moved/resident 2.89).
		 */
		bool waiting = backing_off(p, r);

		if (held_by_us(r) && r->role != RPM_ROLE_TARGET && r->role != RPM_ROLE_SPARE &&
		    !waiting) {
			if (!emit(p, RPM_ACT_UNPARK, r->id, 0, 0, "kept after all: hold ends"))
				return;
			p->avail += r->free_pages;
			continue;
		}
		if ((r->role != RPM_ROLE_TARGET && !waiting) || !p->sys->can_hold)
			continue;
		if (held_by_us(r)) {
			if (renew && p->sys->now - r->hold_since >= renew &&
			    !emit(p, RPM_ACT_HOLD, r->id, 0, 0, "renew the hold"))
				return;
			/* Its moves are still to come: they use the room too. */
			classify(p, r, &pl);
			if (r->role == RPM_ROLE_TARGET && pl.klass == K_MOVABLE) {
				moves += pl.migrate;
				room_take_moves(&planned, r, pl.migrate);
			}
			continue;
		}
		if (waiting || r->state != RPM_REGION_ACTIVE || p->sys->now < r->backoff_until)
			continue;
		/*
		 * Hold only what vacate() will empty: what can be parked then.
		 * A target whose breakdown is still to be read is held too,
		 * as if all it holds moves: held after its scan, it had taken
		 * the moves out of the cheaper targets emptied meanwhile
		 * (fragment at 8 GiB: two regions scanned a pass late took
		 * 26,600 pages and were emptied in turn; moved/resident 2.64).
		 * If the scan finds it cannot be emptied, the hold ends at the
		 * next pass.  One with pages the allocator does not manage
		 * (reserved pages, holes: the kernel's own regions, which a
		 * first pass has not scanned either) waits for its scan: the
		 * kernel would refuse the hold.
		 */
		classify(p, r, &pl);
		if (pl.klass != K_MOVABLE || !parkable_once_empty(p, r, &pl))
			continue;
		if (pl.need_scan && (!worth_it(p->cfg, pl.migrate) ||
				     region_size(r) < r->spanned_pages))
			continue;
		/*
		 * Its moves, and those of the targets held before it, must fit
		 * above the kernel's marks once it is held: a target held
		 * with no room to empty it only keeps free memory out.
		 */
		if (!room_fits(&planned, r, r->free_pages, pl.migrate))
			continue;
		if (!emit(p, RPM_ACT_HOLD, r->id, 0, 0, "to be emptied: no allocations"))
			return;
		moves += pl.migrate;
		p->avail -= r->free_pages;
		zone_take(p, r, r->free_pages);
		room_take_free(&p->room, r, r->free_pages);
		room_take_free(&planned, r, r->free_pages);
		room_take_moves(&planned, r, pl.migrate);
	}
	/*
	 * While the targets' pages move, a region that only waits for its
	 * back-off to end is held too, or the moves land in its free pages
	 * and move again when it is emptied in turn (database at 2 GiB with
	 * movablecore: a region given back during the fill took 13,000 of the
	 * pages moved out of a target 3 s before its back-off ended, and was
	 * emptied next; moved/resident 1.54).
	 */
	for (size_t k = p->n_regions; moves && p->sys->can_hold && k-- > 0;) {
		struct rpm_region *r = &p->regions[k];

		if (!backing_off(p, r) || r->state != RPM_REGION_ACTIVE)
			continue;
		if (!room_fits(&planned, r, r->free_pages, 0))
			continue;
		if (p->avail < r->free_pages || p->avail - r->free_pages < p->park_limit ||
		    !zone_can_give(p, r, r->free_pages))
			continue;
		if (!emit(p, RPM_ACT_HOLD, r->id, 0, 0, "backing off: no moves into it"))
			return;
		p->avail -= r->free_pages;
		zone_take(p, r, r->free_pages);
		room_take_free(&p->room, r, r->free_pages);
		room_take_free(&planned, r, r->free_pages);
	}
}

/* Cheapest first, the highest region among equals. */
static bool vacate_before(const struct rpm_region *a, const struct plan *pa,
			  const struct rpm_region *b, const struct plan *pb)
{
	if (pa->cost != pb->cost)
		return pa->cost < pb->cost;
	return a->id > b->id;
}

struct pick {
	struct rpm_region *r;
	struct plan pl;
};

/* The RPM_POLICY_TOPK cheapest targets, in order; returns how many. */
static size_t top_targets(struct pass *p, struct pick *top)
{
	size_t n = 0;
	struct plan pl;

	for (size_t i = 0; i < p->n_regions; i++) {
		struct rpm_region *r = &p->regions[i];
		size_t j;

		if (r->role != RPM_ROLE_TARGET)
			continue;
		classify(p, r, &pl);
		if (n == RPM_POLICY_TOPK &&
		    !vacate_before(r, &pl, top[n - 1].r, &top[n - 1].pl))
			continue;
		j = n < RPM_POLICY_TOPK ? n++ : n - 1;
		while (j > 0 && vacate_before(r, &pl, top[j - 1].r, &top[j - 1].pl)) {
			top[j] = top[j - 1];
			j--;
		}
		top[j] = (struct pick) { .r = r, .pl = pl };
	}
	return n;
}

/*
 * Empty one target: as many calls as the token bucket pays for, each at
 * most the region's adapted budget, the last one a PARK that compacts
 * first (so the emptied region is never open to the allocator; the
 * margin covers pages that arrive meanwhile).  One region is finished
 * before the next is started: without holds, pages moved out of a
 * half-emptied target land in the free pages of the next one (movable
 * allocations prefer their own zone), and came back when that one was
 * emptied in turn.  Returns false when the bucket ran dry before the
 * region was planned to its end.
 */
static bool compact(struct pass *p, struct rpm_region *r, const struct plan *pl)
{
	struct rpm_policy_state *st = p->st;
	uint64_t cap = p->cfg->budget_pages_per_region;
	uint64_t left = pl->used, avail_cost;
	struct rpm_region_budget *b;

	if (r->spanned_pages && cap > r->spanned_pages)
		cap = r->spanned_pages;	/* the kernel refuses more */
	if (!cap)
		return true;
	b = budget_get(st, r->id, cap, p->sys->now);
	if (b->budget > cap || !b->budget)
		b->budget = cap;
	/* Parking takes the free pages (already gone if held), moves take free pages elsewhere. */
	avail_cost = park_cost(p, r, pl);
	/* Its free pages are no room for other targets' moves: they would move twice. */
	if (!held_now(p, r))
		room_take_free(&p->room, r, r->free_pages);
	while (p->n < p->max_actions) {
		uint64_t tokens = st->budget_tokens > 0 ? (uint64_t)st->budget_tokens : 0;
		uint64_t budget = b->budget < tokens ? b->budget : tokens;
		bool park;

		/* Too few tokens for a call worth making: wait for the bucket. */
		if (budget < RPM_POLICY_MIN_CHUNK && budget < left)
			return false;
		park = p->cfg->park && left + left / 8 + 64 <= budget &&
		       parkable_once_empty(p, r, pl);
		if (park) {
			zone_take(p, r, zone_cost(p, r, pl));
			p->out[p->n++] = (struct rpm_action) {
				.kind = RPM_ACT_PARK, .region = r->id, .mode = pl->mode,
				.budget = budget, .compact_first = true,
				.reason = "empty it and park it in one call",
			};
			p->avail -= avail_cost;
		} else {
			emit(p, RPM_ACT_COMPACT, r->id, pl->mode, budget,
			     pl->mode == RPM_COMPACT_BOTH ?
			     "drop idle cache, migrate the rest" : "migrate");
		}
		st->budget_tokens -= (double)budget;
		b->pending = budget;
		b->when = p->sys->now;
		if (park || budget >= left)
			break;
		left -= budget;
	}
	p->absorb -= pl->migrate < p->absorb ? pl->migrate : p->absorb;
	room_take_moves(&p->room, r, pl->migrate);
	return true;
}

/*
 * Idle cache is dropped only where the keep set has no room for it: when
 * every page of the targets at hand fits where their moves go (the checks
 * in vacate()), their cache moves too, where moving is worth its energy.
 * Idle is a guess -- a file read once at the start and again later looks
 * idle in between -- and memory with room to spare keeps cache on a
 * kernel without regionpm too; dropped, it is read back from disk when it
 * turns hot.  Short of room, idle cache goes first, as reclaim would.
 */
static bool room_for_all(const struct pass *p, const struct pick *top, size_t n)
{
	struct room rm = p->room;
	uint64_t moves = 0;

	for (size_t i = 0; i < n; i++) {
		const struct rpm_region *r = top[i].r;
		uint64_t own = held_now(p, r) ? 0 : r->free_pages;

		if (top[i].pl.need_scan)
			continue;
		if (!room_fits(&rm, r, own, top[i].pl.used))
			return false;
		room_take_free(&rm, r, own);
		room_take_moves(&rm, r, top[i].pl.used);
		moves += top[i].pl.used;
	}
	return moves <= p->absorb;
}

static void keep_cache(const struct pass *p, struct plan *pl)
{
	if (pl->mode != RPM_COMPACT_BOTH || !worth_it(p->cfg, pl->used))
		return;
	pl->mode = RPM_COMPACT_MIGRATE;
	pl->migrate = pl->cost = pl->used;
	pl->drop = 0;
}

static void vacate(struct pass *p)
{
	struct pick top[RPM_POLICY_TOPK];
	size_t n = top_targets(p, top);
	bool broke = false;	/* no tokens for another compact call */
	bool cache_fits = room_for_all(p, top, n);

	for (size_t i = 0; i < n && p->n < p->max_actions; i++) {
		struct rpm_region *r = top[i].r;
		struct plan *pl = &top[i].pl;

		if (pl->need_scan) {
			if (p->prep < RPM_POLICY_MAX_PREP &&
			    emit(p, RPM_ACT_SCAN, r->id, 0, 0, "no fresh page breakdown"))
				p->prep++;
			continue;
		}
		if (broke)
			continue;
		if (cache_fits)
			keep_cache(p, pl);
		/* The pages that move must fit outside the region, above the headroom. */
		if (pl->migrate > p->absorb)
			continue;
		/*
		 * ... and into free memory above the kernel's marks: moved into
		 * memory below them, they make kswapd evict cache to restore
		 * the marks, whatever it is (fileserver at 8 GiB: a pass moved
		 * 100,000 pages into a keep set with 26,000 free, kswapd
		 * evicted 69,383 pages in 2 s, and the hot phase read 13.5 %
		 * of its hot set back from disk).  MemAvailable counts that
		 * cache as available; only the free pages are room.  The
		 * region's own free pages go too, when it is parked.
		 */
		if (!room_fits(&p->room, r, held_now(p, r) ? 0 : r->free_pages, pl->migrate))
			continue;
		/*
		 * Empty only what can be parked once empty.  A region emptied
		 * and then refused its park (the zone's floor, the headroom)
		 * stays open: the next target's pages land in it, and the
		 * daemon moved whole regions back and forth (fragment at
		 * 8 GiB: two regions traded 5,120 pages a second).
		 */
		if (p->cfg->park && !parkable_once_empty(p, r, pl))
			continue;
		broke = !compact(p, r, pl);
	}
	/* Work left that only time (tokens) or the next pass's slots allow. */
	p->waiting = broke || (n && p->n >= p->max_actions);
	/*
	 * Left-over preparation: learn which targets' cache is idle (so it
	 * can be dropped rather than moved) and re-check pinned regions,
	 * ever less often while they stay pinned.
	 */
	for (size_t i = 0; i < n && p->prep < RPM_POLICY_MAX_PREP; i++) {
		struct rpm_region *r = top[i].r;

		/*
		 * Not while its sample runs, nor with every sampler busy: a
		 * pass that asks again is not converged, and the daemon woke
		 * every few seconds for the two minutes of a sample.
		 */
		if (r->idle_sampling || p->sys->idle_samplers_busy)
			continue;
		if (!top[i].pl.need_scan && p->cfg->drop_cache && r->detail.file_clean &&
		    !idle_fresh(p->cfg, r, p->sys->now) &&
		    emit(p, RPM_ACT_SAMPLE_IDLE, r->id, 0, 0, "page cache idleness unknown"))
			p->prep++;
	}
	for (size_t i = 0; i < p->n_regions && p->prep < RPM_POLICY_MAX_PREP; i++) {
		struct rpm_region *r = &p->regions[i];

		if (r->role == RPM_ROLE_PINNED && !region_dma(r) &&
		    p->sys->now >= r->backoff_until && rescan_due(r, p->sys->now) &&
		    emit(p, RPM_ACT_SCAN, r->id, 0, 0, "pinned: still?"))
			p->prep++;
	}
}

/* ---- the pass --------------------------------------------------------- */

static void refill_tokens(const struct rpm_policy_config *cfg,
			  struct rpm_policy_state *st,
			  const struct rpm_system *sys)
{
	double rate = (double)cfg->budget_pages_per_sec;
	double cap = rate * RPM_POLICY_BURST_SEC;

	if (psi_rising(cfg, sys))
		rate /= 2;
	if (!st->last_pass)		/* first pass: one second's worth */
		st->budget_tokens = rate;
	else if (sys->now > st->last_pass)
		st->budget_tokens += rate * (double)(sys->now - st->last_pass) /
				     USEC_PER_SEC;
	if (st->budget_tokens > cap)
		st->budget_tokens = cap;
	st->last_pass = sys->now;
}

/*
 * HeadroomPercent=auto: 10 % of the first 2 GiB, 5 % of the next 14 GiB,
 * 2 % of the rest (HysteresisPercent= likewise).  A share of all memory
 * keeps free what grows with the machine, where what the headroom is for
 * (a burst of allocations between two of our passes, before the kernel's
 * shrinker gives parked memory back) does not grow as fast: the kernel's
 * own reserve (min_free_kbytes) grows with the square root of memory, and
 * hypervisors keep free memory on a sliding scale for the same reason
 * (ESXi's minFree: 6 % of the first 4 GB down to 1 % above 28 GB).  At
 * 2 GiB and below nothing changes: there 5 % measured worse (vmhost:
 * reclaim took 4,687 pages, lowest empty/strict 0.75 against 1.00).
 *
 * Not the default: vmhost at 8 GiB ended with every region the strict
 * bound allows empty (35 of 35, the flat 13 % keeps about four more), but
 * its guests grow by 4 % of memory at once, more than the smaller headroom
 * left free; kswapd and the kernel's shrinker met the burst (2,407 pages
 * of cold cache evicted, no OOM), then three give-back rules in a row
 * brought 17 regions back for a growth of three, and the lowest
 * empty/strict from +60 fell to 0.73 (flat: 0.83).
 */
uint64_t policy_headroom_base(const struct rpm_policy_config *cfg, uint64_t all_pages,
			      uint64_t page_size)
{
	uint64_t full, half, base;

	if (cfg->headroom_percent != RPM_HEADROOM_AUTO)
		return all_pages;
	if (!page_size)
		page_size = 4096;
	full = RPM_AUTO_FULL_BYTES / page_size;
	half = RPM_AUTO_HALF_BYTES / page_size;
	if (all_pages <= full)
		return all_pages;
	base = full;
	if (all_pages <= half)
		return base + (all_pages - full) / 2;
	base += (half - full) / 2;
	return base + (all_pages - half) / 5;
}

static unsigned headroom_percent(const struct rpm_policy_config *cfg)
{
	return cfg->headroom_percent == RPM_HEADROOM_AUTO ? RPM_AUTO_HEADROOM_PERCENT :
							    cfg->headroom_percent;
}

uint64_t policy_all_memory(uint64_t mem_total_pages, const struct rpm_region *regions, size_t n)
{
	struct rpm_system sys = { .mem_total_pages = mem_total_pages };

	return all_memory(&sys, regions, n);
}

uint64_t policy_headroom_pages(const struct rpm_policy_config *cfg, uint64_t mem_total_pages,
			       uint64_t page_size, const struct rpm_region *regions, size_t n)
{
	uint64_t base = policy_headroom_base(cfg, policy_all_memory(mem_total_pages, regions, n),
					     page_size);

	return pct_of(base, headroom_percent(cfg));
}

/* Park only above the headroom plus the hysteresis, both shares of @base. */
static uint64_t park_limit_of(const struct rpm_policy_config *cfg, uint64_t base)
{
	return pct_of(base, headroom_percent(cfg)) + pct_of(base, cfg->hysteresis_percent);
}

uint64_t policy_park_limit_pages(const struct rpm_policy_config *cfg, uint64_t mem_total_pages,
				 uint64_t page_size, const struct rpm_region *regions, size_t n)
{
	return park_limit_of(cfg, policy_headroom_base(cfg, policy_all_memory(mem_total_pages,
									       regions, n),
						       page_size));
}

/*
 * Converged, the daemon sleeps up to IdleIntervalSec= between passes; memory
 * freed meanwhile (a process that shrinks or exits) can let the plan do
 * without one more region.  That happens once MemFree has grown by what
 * the keep set's spare capacity lacks of a region: the mark the reclaim
 * watch compares MemFree with.  At least a quarter of a region above
 * today's, so small changes do not wake it.  Seen on vmhost at 2 GiB: in
 * the hot phase the converged passes came 20, 40 and 60 s apart, and
 * memory freed after one waited for the next.
 */
static uint64_t wake_mark(const struct pass *p)
{
	const struct rpm_plan_summary *sum = &p->st->plan;
	uint64_t spare = sum->keep_capacity > sum->need_pages ?
			 sum->keep_capacity - sum->need_pages : 0;
	uint64_t gap = p->region_pages > spare ? p->region_pages - spare : 0;

	if (gap < p->region_pages / 4)
		gap = p->region_pages / 4;
	return p->sys->mem_free_pages + gap;
}

/*
 * Converged, the plan can still change with the clock alone: a region
 * backing off is left alone (kept as if pinned, not held, not parked)
 * until its back-off ends, and the room kept for evicted cache lapses
 * CacheHistorySec= after the cache's peak.  No event and no change of
 * MemFree says so; without a pass at that time the plan waited for
 * IdleIntervalSec= (vmhost at 2 GiB with movablecore: a region the
 * converged plan could have taken waited 40 s for the idle pass).
 */
static usec_t_ recheck_time(const struct pass *p, uint64_t cache_room)
{
	const struct rpm_policy_state *st = p->st;
	usec_t_ now = p->sys->now, at = 0;

	for (size_t i = 0; i < p->n_regions; i++) {
		const struct rpm_region *r = &p->regions[i];

		if (r->backoff_until <= now || !r->managed_pages ||
		    (r->state != RPM_REGION_ACTIVE && !held_by_us(r)) ||
		    region_dma(r) || r->no_park || region_has_unmovable(r))
			continue;
		if (!at || r->backoff_until < at)
			at = r->backoff_until;
	}
	if (cache_room && p->cfg->cache_history_sec) {
		usec_t_ lapse = st->cache_peak_when + sec_to_usec(p->cfg->cache_history_sec);

		if (lapse > now && (!at || lapse < at))
			at = lapse;
	}
	return at;
}

size_t policy_decide(const struct rpm_policy_config *cfg,
		     struct rpm_policy_state *st,
		     const struct rpm_system *sys,
		     struct rpm_region *regions, size_t n_regions,
		     struct rpm_action *out, size_t max_actions)
{
	uint64_t all = all_memory(sys, regions, n_regions);
	uint64_t base = policy_headroom_base(cfg, all, sys->page_size);
	struct pass p = {
		.cfg = cfg, .st = st, .sys = sys,
		.regions = regions, .n_regions = n_regions,
		.out = out, .max_actions = max_actions,
		.headroom = pct_of(base, headroom_percent(cfg)),
		.avail = sys->mem_available_pages,
		.room = { UINT64_MAX, UINT64_MAX },
	};
	bool psi = sys->psi_event || psi_over_limit(cfg, sys);
	/* The kernel took a parked region back: it unparks what it needs. */
	bool pressure = psi || st->pressure_pending;
	uint64_t shortfall, room, evicted, floor;
	bool growing;

	p.park_limit = park_limit_of(cfg, base);
	for (size_t i = 0; i < n_regions; i++) {
		uint64_t size = regions[i].managed_pages + regions[i].parked_pages;

		if (size > p.region_pages)
			p.region_pages = size;
		p.movable_zone |= region_in_movable(&regions[i]);
	}
	if (sys->marks_valid) {
		p.room.all = sys->free_above_marks;
		p.room.low = p.movable_zone ? sys->low_free_above_marks : sys->free_above_marks;
		if (p.room.low > p.room.all)
			p.room.low = p.room.all;
	}
	st->pingpong_window = sec_to_usec(cfg->pingpong_window_sec);
	st->pingpong_backoff = sec_to_usec(cfg->pingpong_backoff_sec);
	st->pressure_pending = false;
	st->plan.converged = false;
	st->plan.planned = false;
	st->plan.wake_free_pages = 0;
	st->plan.recheck_at = 0;
	st->low_free_pages = low_mark(&p);
	st->plan.short_of_memory = false;
	refill_tokens(cfg, st, sys);

	if (cfg->bias && !st->bias_enabled &&
	    emit(&p, RPM_ACT_ENABLE_BIAS, 0, 0, 0, "bias configured"))
		st->bias_enabled = true;

	/*
	 * Before the pressure check, so that a pass under pressure takes the
	 * evictions into account too: they came with the same burst, and
	 * were counted again by the next pass when the pressure had been
	 * answered (vmhost at 8 GiB: two regions back for a PSI trigger,
	 * then four for the evictions that had woken it).
	 */
	evicted = reclaim_wants_memory(&p);
	if (pressure || p.avail < p.headroom) {
		uint64_t short_by = p.avail < p.headroom ? p.headroom - p.avail : 0;
		uint64_t want = short_by > evicted ? short_by : evicted;

		st->paused_until = sys->now + sec_to_usec(cfg->pressure_backoff_sec);
		/* Evictions answered here pause as they would have alone. */
		st->pause_for_headroom = !pressure && !evicted;
		note_top(&st->pause_top, &st->pause_top_steal, sys, true);
		/* PSI wants a region at least, and more if it goes on and the last one was used. */
		if (psi && !want)
			want = 1;
		uint64_t need = growth_ramp(&p, want);

		/*
		 * Without a kernel that gives parked memory back, an allocation
		 * burst that outruns our passes ends in the OOM killer (the
		 * stock backend's pressure test did, with a region a pass):
		 * everything comes back at once, and is parked again after
		 * PressureBackoffSec= if the pressure is gone.
		 */
		if (sys->no_kernel_release)
			need = UINT64_MAX;
		unpark(&p, need, psi,
		       p.avail < p.headroom ? "memory below headroom" : "memory pressure");
		/* Look again soon only while there is something to give back. */
		st->plan.short_of_memory = p.n > 0;
		return p.n;
	}
	if (evicted) {
		/* As much back as reclaim took since the last pass, or more. */
		st->paused_until = sys->now + sec_to_usec(cfg->pressure_backoff_sec);
		st->pause_for_headroom = false;
		unpark(&p, growth_ramp(&p, evicted), true, "reclaim evicts cache");
		st->plan.short_of_memory = p.n > 0;
		return p.n;
	}
	room = cache_reserve(&p);
	growing = use_growing(&p);
	st->low_free_pages = low_mark(&p);	/* with the rate just seen */
	/*
	 * Memory in use grows into what is free: give a region back before
	 * reclaim has to evict cache to make room, not after (the reclaim
	 * watch only sees evictions once they happened: fileserver at 2 GiB,
	 * with the daemon started at idle, read 2.7 % of its hot set back
	 * from disk after kswapd trimmed the cache three times in its fill).
	 */
	floor = grow_floor(&p);
	if (growing && sys->mem_free_pages < floor) {
		/*
		 * A region, or for a fast growth its lead and a region more at
		 * once: the low mark re-arms a region above the floor, so the
		 * reclaim watch sees the next burst coming (fragment's fill
		 * at 8 GiB ate 60,000 pages between two readings 2 s apart,
		 * from just above the floor).
		 */
		uint64_t need = p.region_pages;

		if (floor > grow_fixed_floor(&p) &&
		    floor + p.region_pages - sys->mem_free_pages > need)
			need = floor + p.region_pages - sys->mem_free_pages;
		unpark(&p, growth_ramp(&p, need), false,
		       "memory in use grows into free memory");
		if (p.n) {
			st->plan.short_of_memory = true;
			return p.n;
		}
	}
	end_headroom_pause(&p);
	if (sys->now < st->paused_until)
		return p.n;

	observe_vacated(&p);
	count_zones(&p);
	shortfall = plan_keep_set(&p, room);
	if (shortfall) {
		unpark(&p, shortfall, false, "the active regions are too few");
		return p.n;
	}
	if (growing) {
		end_holds(&p, "memory in use grows: hold ends");
		return p.n;	/* not converged: look again after IntervalSec= */
	}
	if (cfg->park)
		park_spare(&p);
	if (cfg->park)
		hold_targets(&p);
	p.absorb = p.avail > p.headroom ? p.avail - p.headroom : 0;
	vacate(&p);
	/*
	 * Nothing to do but watch: every region is where the plan wants it, or
	 * what is left cannot be done now (no room to move it, backing off)
	 * and only an event or a change of memory can make it possible.
	 */
	st->plan.converged = p.n == 0 && !p.waiting;
	st->plan.wake_free_pages = st->plan.converged ? wake_mark(&p) : 0;
	st->plan.recheck_at = st->plan.converged ? recheck_time(&p, room) : 0;
	return p.n;
}

/* ---- feedback --------------------------------------------------------- */

void policy_note_compact(struct rpm_policy_state *st, struct rpm_region *r,
			 usec_t_ now, uint64_t migrated, uint64_t dropped,
			 uint64_t failed, int error)
{
	struct rpm_region_budget *b = budget_find(st, r->id);
	uint64_t done = migrated + dropped + failed;

	st->total_migrated += migrated;
	st->total_dropped += dropped;
	r->pages_migrated += migrated;
	r->pages_dropped += dropped;
	r->last_action = "compact";

	if (b) {
		/* Give back what the call did not use. */
		if (b->pending > done)
			st->budget_tokens += (double)(b->pending - done);
		/* Pinned pages and errors: smaller steps; clean runs: larger. */
		if (error < 0 || (done && failed * 4 >= done)) {
			b->budget /= 2;
			if (b->budget < RPM_POLICY_MIN_CHUNK)
				b->budget = RPM_POLICY_MIN_CHUNK;
		} else if (done && !failed && b->budget < UINT64_MAX / 2) {
			b->budget *= 2;	/* policy_decide caps it */
		}
		b->when = now;
	}
	if (!error && r->managed_pages && r->free_pages >= r->managed_pages) {
		r->last_vacated = now;
		st->regions_vacated++;
	}
}

void policy_note_obstacle(const struct rpm_policy_config *cfg,
			  struct rpm_region *r, usec_t_ now, uint32_t obstacle,
			  uint64_t progress)
{
	unsigned shift;

	/*
	 * The kernel stopped before migrating below its watermarks: nothing in
	 * the region is in the way, the keep set lacks free memory now.  After
	 * some progress the next pass's room check (free pages above the
	 * marks) decides when to go on.  Refused before a page moved, the
	 * check saw room the kernel did not (others allocated meanwhile, or
	 * the room is in zones the pages cannot use): asked again at once,
	 * the kernel said the same every pass and the plan never converged
	 * (a DMA32 region of a movablecore= guest, daemon-movable).  Wait one
	 * base back-off, without doubling: nothing is stuck.
	 */
	if (obstacle == REGIONPM_OBSTACLE_NO_ROOM) {
		r->last_action = "no room";
		if (!progress)
			r->backoff_until = now + sec_to_usec(cfg->pingpong_backoff_sec);
		return;
	}
	if (progress || !obstacle) {
		r->stuck_count = 0;
		return;
	}
	/* No page moved and the kernel named what is in the way: wait. */
	if (r->stuck_count < UINT32_MAX)
		r->stuck_count++;
	shift = r->stuck_count - 1;
	if (shift > RPM_POLICY_MAX_BACKOFF_SHIFT)
		shift = RPM_POLICY_MAX_BACKOFF_SHIFT;
	r->backoff_until = now + ((usec_t_)cfg->pingpong_backoff_sec * 1000000u << shift);
	r->last_action = "stuck";
}

bool policy_park_stuck(int err, uint64_t moved, uint64_t left)
{
	if (err == -EPERM || err == -ENOSPC)
		return true;
	/*
	 * Nothing moved and nothing seen in use: pages the free counts do
	 * not show keep it (reserved memory in a region whose managed pages
	 * are all free).  Asked again, the kernel says the same: database
	 * at 8 GiB asked to park such a region every pass, 18 times in 90 s.
	 */
	return err == -EBUSY && (moved < left || !moved);
}

/*
 * The journal pins the metadata buffers of every transaction committed
 * since its last checkpoint, and a deletion commits within the commit
 * interval (5 s): a checkpoint right after the first refusal can come
 * before the transactions that pin the buffers of the next regions.  At
 * 8 GiB, fileserver's first checkpoint ran 2 s after its deletions; the
 * regions refused 3 to 5 s later, with about 190 pinned pages each, were
 * held or backed off until the next checkpoint a minute-long limit
 * allowed, 102 s after the deletions, with MemFree at the kernel's marks
 * meanwhile.  Two tries per region bound the checkpoints when something
 * else pins its pages.
 */
enum rpm_checkpoint_step policy_checkpoint_step(const struct rpm_region *r, usec_t_ now,
						usec_t_ last_checkpoint, usec_t_ *until)
{
	if (r->checkpoint_tries >= RPM_CHECKPOINT_TRIES)
		return RPM_CHECKPOINT_NO;
	if (last_checkpoint && now < last_checkpoint + RPM_CHECKPOINT_INTERVAL_USEC) {
		*until = last_checkpoint + RPM_CHECKPOINT_INTERVAL_USEC;
		return RPM_CHECKPOINT_WAIT;
	}
	return RPM_CHECKPOINT_NOW;
}

void policy_note_scan(struct rpm_region *r)
{
	if (region_has_unmovable(r)) {
		if (r->pinned_scans < UINT32_MAX)
			r->pinned_scans++;
	} else {
		r->pinned_scans = 0;
	}
}

void policy_note_parked(struct rpm_policy_state *st, struct rpm_region *r,
			usec_t_ now)
{
	r->hold_since = 0;
	r->checkpoint_tries = 0;
	st->regions_parked++;
	r->ours = true;
	r->last_vacated = now;	/* newest parked is unparked first */
	r->last_action = "park";
}

static void backoff_region(struct rpm_region *r, usec_t_ base, usec_t_ now)
{
	unsigned shift = r->refill_count ? r->refill_count - 1 : 0;

	if (shift > RPM_POLICY_MAX_BACKOFF_SHIFT)
		shift = RPM_POLICY_MAX_BACKOFF_SHIFT;
	r->backoff_until = now + (base << shift);
}

void policy_note_released(struct rpm_policy_state *st, struct rpm_region *r,
			  usec_t_ now, int reason)
{
	bool pressure = reason == REGIONPM_RELEASE_REASON_SHRINKER ||
			reason == REGIONPM_RELEASE_REASON_OOM;

	st->regions_released++;
	r->ours = false;
	r->last_action = "released";
	/*
	 * The kernel needed it back (pressure: that parking was a mistake), or
	 * someone took physical memory there (virtio-mem unplugging, a gigantic
	 * huge page: not pressure), or is taking its memory offline (which
	 * ends our hold first; an offline that failed on an unmovable page is
	 * usually retried): either way, emptying and parking it again at once
	 * would only be taken back again.
	 */
	if (pressure)
		st->pressure_pending = true;
	if (pressure || reason == REGIONPM_RELEASE_REASON_RANGE_CLAIMED ||
	    reason == REGIONPM_RELEASE_REASON_HOTPLUG) {
		r->refill_count++;
		r->last_refilled = now;
		backoff_region(r, st->pingpong_backoff, now);
	}
}

void policy_note_given(struct rpm_policy_state *st, const struct rpm_region *r)
{
	uint64_t gain = release_gain(r);

	st->giveback_pages += gain;
	st->giveback_free += gain;
}

void policy_note_refill(const struct rpm_policy_config *cfg,
			struct rpm_policy_state *st, struct rpm_region *r,
			usec_t_ now)
{
	usec_t_ window = sec_to_usec(cfg->pingpong_window_sec);

	(void)st;
	r->last_refilled = now;
	if (!r->last_vacated || now < r->last_vacated)
		return;
	if (window && now - r->last_vacated < window) {
		r->refill_count++;
		backoff_region(r, sec_to_usec(cfg->pingpong_backoff_sec), now);
	} else if (r->refill_count) {
		/* It stayed empty long enough: forgive one repeat. */
		r->refill_count--;
	}
}
