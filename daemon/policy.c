// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The regionpmd policy engine: pure decisions, no I/O, no globals, no malloc.
 *
 * One pass, in this order:
 *   1. ENABLE_BIAS once, if configured.
 *   2. Pressure (PSI above a limit, a PSI trigger, a parked region taken
 *      back by the kernel) or MemAvailable below the headroom: pause all
 *      work for PressureBackoffSec= and UNPARK (ours first, most recently
 *      parked first) until the headroom is restored, at least one region
 *      when PSI says memory is contended.  Nothing else happens in such a
 *      pass: we never park or compact into pressure.
 *   3. PARK every empty active region, highest first, while MemAvailable
 *      minus the region stays above the headroom.
 *   4. Vacate: walk the candidates cheapest first (cost in pages rounded to
 *      a power of two, so that similar costs tie), highest region first
 *      among equals.  A candidate without fresh detail gets a SCAN, one
 *      whose page cache might be idle gets a SAMPLE_IDLE, the others a
 *      COMPACT paid from a token bucket.
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

/*
 * The headroom is a share of all memory, parked regions included: parking
 * lowers MemTotal, and a share of the shrinking MemTotal let each park
 * shrink the headroom for the next one (an idle 2 GiB guest ended up
 * with 13 of 16 regions parked and ~150 MiB available).
 */
static uint64_t headroom_pages(const struct rpm_policy_config *cfg,
			       const struct rpm_system *sys,
			       const struct rpm_region *regions, size_t n)
{
	uint64_t total = sys->mem_total_pages;

	for (size_t i = 0; i < n; i++)
		if (regions[i].state == RPM_REGION_PARKED)
			total += regions[i].parked_pages;
	return total / 100 * cfg->headroom_percent +
	       total % 100 * cfg->headroom_percent / 100;
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

struct pass {
	const struct rpm_policy_config *cfg;
	struct rpm_policy_state *st;
	const struct rpm_system *sys;
	struct rpm_region *regions;
	size_t n_regions;
	struct rpm_action *out;
	size_t max_actions, n;
	uint64_t headroom;
	uint64_t avail;		/* MemAvailable as it will be after our actions */
	uint64_t absorb;	/* pages the rest of memory can still take in */
	unsigned prep;		/* SCAN and SAMPLE_IDLE actions so far */
};

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

/* ---- unparking -------------------------------------------------------- */

/*
 * Order of giving memory back: our own regions before those parked by
 * someone else (a tool may have a reason we do not know), the most recently
 * parked first (LIFO undoes the last, least proven decision), then the
 * highest id.  Returns true if a is to be unparked before b.
 */
static bool unpark_before(const struct rpm_region *a, const struct rpm_region *b)
{
	if (a->ours != b->ours)
		return a->ours;
	if (a->last_vacated != b->last_vacated)
		return a->last_vacated > b->last_vacated;
	return a->id > b->id;
}

static void unpark(struct pass *p, uint64_t need, bool at_least_one)
{
	const struct rpm_region *prev = NULL;
	uint64_t got = 0;

	/* Selection without sorting: each round takes the next in order. */
	while (got < need || (at_least_one && !prev)) {
		struct rpm_region *best = NULL;

		for (size_t i = 0; i < p->n_regions; i++) {
			struct rpm_region *r = &p->regions[i];

			if (r->state != RPM_REGION_PARKED)
				continue;
			if (prev && !unpark_before(prev, r))
				continue;
			if (!best || unpark_before(r, best))
				best = r;
		}
		if (!best)
			return;
		if (!emit(p, RPM_ACT_UNPARK, best->id, 0, 0,
			  need ? "memory below headroom" : "memory pressure"))
			return;
		/* Do not vacate it again before the pressure is long gone. */
		best->backoff_until = p->sys->now +
			sec_to_usec(p->cfg->pingpong_backoff_sec);
		got += best->parked_pages ? best->parked_pages : best->spanned_pages;
		prev = best;
	}
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

		if (r->state != RPM_REGION_ACTIVE || !r->managed_pages ||
		    r->free_pages < r->managed_pages)
			continue;
		if (!r->pages_migrated && !r->pages_dropped)
			continue;
		if (r->last_vacated && r->last_vacated > r->last_refilled)
			continue;	/* already recorded */
		r->last_vacated = p->sys->now;
		p->st->regions_vacated++;
	}
}

static void park_empty(struct pass *p)
{
	/* Highest first: the bias keeps high regions empty the longest. */
	for (size_t k = p->n_regions; k-- > 0;) {
		struct rpm_region *r = &p->regions[k];

		if (r->state != RPM_REGION_ACTIVE || !r->managed_pages ||
		    r->free_pages < r->managed_pages)
			continue;
		if (p->sys->now < r->backoff_until)
			continue;
		/* Parking takes all of the region's free pages away. */
		if (p->avail < r->managed_pages ||
		    p->avail - r->managed_pages < p->headroom)
			continue;
		if (!emit(p, RPM_ACT_PARK, r->id, 0, 0, "region is empty"))
			return;
		p->avail -= r->managed_pages;
	}
}

/* ---- vacating --------------------------------------------------------- */

struct plan {
	bool need_scan;
	bool need_sample;
	enum rpm_compact_mode mode;
	uint64_t used;		/* pages in use */
	uint64_t migrate;	/* of which would be migrated */
	uint64_t cost;		/* sort key: estimated work, pages */
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

/*
 * DROP when all clean page cache of the region is idle and nothing else is
 * in it, BOTH when idle cache sits with anon/shmem/dirty pages, MIGRATE when
 * the cache is hot (or its idleness unknown): hot cache would only be read
 * back in from disk, which costs more than moving it.
 */
static void plan_mode(const struct rpm_policy_config *cfg,
		      const struct rpm_region *r, usec_t_ now, struct plan *pl)
{
	const struct rpm_region_detail *d = &r->detail;
	uint64_t droppable = d->file_clean;

	pl->mode = RPM_COMPACT_MIGRATE;
	pl->migrate = pl->used;
	if (!cfg->drop_cache || !droppable)
		return;
	if (!idle_fresh(cfg, r, now)) {
		/* Judge it as if the cache were idle: sampling will tell. */
		pl->need_sample = true;
	} else if (r->idle_file_pages < droppable) {
		return;
	}
	pl->migrate = pl->used > droppable ? pl->used - droppable : 0;
	pl->mode = pl->migrate ? RPM_COMPACT_BOTH : RPM_COMPACT_DROP;
}

/* Energy of the migrations against what parking saves within PaybackSec=. */
static bool worth_it(const struct rpm_policy_config *cfg, uint64_t migrate)
{
	double cost_uj = (double)migrate * cfg->migrate_cost_uj_per_page;
	double saving_uj = cfg->region_saving_mw * 1000.0 * cfg->payback_sec;

	return cost_uj <= saving_uj;
}

static unsigned ilog2_u64(uint64_t v)
{
	return v ? 63 - __builtin_clzll(v) : 0;
}

/*
 * Whether r is a vacate candidate now, with what plan.  Everything that can
 * rule a region out is checked here, so that the walk over the candidates
 * only visits regions that lead to an action.
 */
static bool candidate(const struct pass *p, const struct rpm_region *r,
		      struct plan *pl)
{
	const struct rpm_policy_config *cfg = p->cfg;
	usec_t_ now = p->sys->now;

	memset(pl, 0, sizeof(*pl));
	if (r->state != RPM_REGION_ACTIVE || !r->managed_pages)
		return false;
	pl->used = region_used_pages(r);
	if (!pl->used || now < r->backoff_until)
		return false;
	if (cfg->max_pages_to_vacate && pl->used > cfg->max_pages_to_vacate)
		return false;
	if (!detail_fresh(r, now)) {
		pl->need_scan = true;
		pl->migrate = pl->cost = pl->used;
		return true;
	}
	if (region_has_unmovable(r))
		return false;
	plan_mode(cfg, r, now, pl);
	/* The pages that move must fit outside the region, above the headroom. */
	if (pl->migrate > p->absorb)
		return false;
	if (!worth_it(cfg, pl->migrate))
		return false;
	/* Dropping is cheap but not free (refaults): count it at 1/8. */
	pl->cost = pl->migrate + (pl->used - pl->migrate) / 8;
	return true;
}

/* Sort key: cheapest power-of-two cost bucket first, then highest id. */
static bool vacate_before(const struct rpm_region *a, const struct plan *pa,
			  const struct rpm_region *b, const struct plan *pb)
{
	unsigned ca = ilog2_u64(pa->cost + 1), cb = ilog2_u64(pb->cost + 1);

	if (ca != cb)
		return ca < cb;
	return a->id > b->id;
}

/* Returns false when the token bucket cannot pay for any call now. */
static bool compact(struct pass *p, struct rpm_region *r, const struct plan *pl)
{
	struct rpm_policy_state *st = p->st;
	uint64_t cap = p->cfg->budget_pages_per_region;
	struct rpm_region_budget *b;
	uint64_t budget, tokens;

	if (r->spanned_pages && cap > r->spanned_pages)
		cap = r->spanned_pages;	/* the kernel refuses more */
	if (!cap)
		return true;
	b = budget_get(st, r->id, cap, p->sys->now);
	if (b->budget > cap || !b->budget)
		b->budget = cap;
	tokens = st->budget_tokens > 0 ? (uint64_t)st->budget_tokens : 0;
	budget = b->budget < tokens ? b->budget : tokens;
	/* Too few tokens for a call worth making: wait for the bucket. */
	if (budget < RPM_POLICY_MIN_CHUNK && budget < pl->used)
		return false;
	if (!emit(p, RPM_ACT_COMPACT, r->id, pl->mode, budget,
		  pl->mode == RPM_COMPACT_DROP ? "drop idle page cache" :
		  pl->mode == RPM_COMPACT_BOTH ? "drop idle cache, migrate the rest" :
		  "migrate"))
		return true;
	st->budget_tokens -= (double)budget;
	b->pending = budget;
	b->when = p->sys->now;
	p->absorb -= pl->migrate;
	return true;
}

static void vacate(struct pass *p)
{
	const struct rpm_region *prev = NULL;
	struct plan prev_plan = { 0 };
	bool broke = false;	/* no tokens for another compact call */

	/* Stop as soon as no visit can lead to an action any more. */
	while (!(broke && p->prep >= RPM_POLICY_MAX_PREP)) {
		struct rpm_region *best = NULL;
		struct plan best_plan, pl;

		for (size_t i = 0; i < p->n_regions; i++) {
			struct rpm_region *r = &p->regions[i];

			if (!candidate(p, r, &pl))
				continue;
			if (prev && !vacate_before(prev, &prev_plan, r, &pl))
				continue;
			if (!best || vacate_before(r, &pl, best, &best_plan)) {
				best = r;
				best_plan = pl;
			}
		}
		if (!best || p->n >= p->max_actions)
			return;
		if (best_plan.need_scan || best_plan.need_sample) {
			if (p->prep < RPM_POLICY_MAX_PREP &&
			    emit(p, best_plan.need_scan ? RPM_ACT_SCAN :
				 RPM_ACT_SAMPLE_IDLE, best->id, 0, 0,
				 best_plan.need_scan ? "no fresh page breakdown" :
				 "page cache idleness unknown"))
				p->prep++;
		} else if (!broke) {
			broke = !compact(p, best, &best_plan);
		}
		prev = best;
		prev_plan = best_plan;
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

size_t policy_decide(const struct rpm_policy_config *cfg,
		     struct rpm_policy_state *st,
		     const struct rpm_system *sys,
		     struct rpm_region *regions, size_t n_regions,
		     struct rpm_action *out, size_t max_actions)
{
	struct pass p = {
		.cfg = cfg, .st = st, .sys = sys,
		.regions = regions, .n_regions = n_regions,
		.out = out, .max_actions = max_actions,
		.headroom = headroom_pages(cfg, sys, regions, n_regions),
		.avail = sys->mem_available_pages,
	};
	bool psi = sys->psi_event || psi_over_limit(cfg, sys);
	/* The kernel took a parked region back: it unparks what it needs. */
	bool pressure = psi || st->pressure_pending;

	st->pingpong_window = sec_to_usec(cfg->pingpong_window_sec);
	st->pingpong_backoff = sec_to_usec(cfg->pingpong_backoff_sec);
	st->pressure_pending = false;
	refill_tokens(cfg, st, sys);

	if (cfg->bias && !st->bias_enabled &&
	    emit(&p, RPM_ACT_ENABLE_BIAS, 0, 0, 0, "bias configured"))
		st->bias_enabled = true;

	if (pressure || p.avail < p.headroom) {
		st->paused_until = sys->now + sec_to_usec(cfg->pressure_backoff_sec);
		unpark(&p, p.avail < p.headroom ? p.headroom - p.avail : 0, psi);
		return p.n;
	}
	if (sys->now < st->paused_until)
		return p.n;

	observe_vacated(&p);
	if (cfg->park)
		park_empty(&p);
	p.absorb = p.avail > p.headroom ? p.avail - p.headroom : 0;
	vacate(&p);
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
		b->pending = 0;
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

void policy_note_parked(struct rpm_policy_state *st, struct rpm_region *r,
			usec_t_ now)
{
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
	st->regions_released++;
	r->ours = false;
	r->last_action = "released";
	if (reason == REGIONPM_RELEASE_REASON_SHRINKER ||
	    reason == REGIONPM_RELEASE_REASON_OOM) {
		/* The kernel needed it back: that parking was a mistake. */
		st->pressure_pending = true;
		r->refill_count++;
		r->last_refilled = now;
		backoff_region(r, st->pingpong_backoff, now);
	}
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
