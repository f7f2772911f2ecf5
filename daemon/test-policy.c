// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the policy engine (daemon/policy.c): plain structs in,
 * actions out.  A machine of 8 regions of 128 MiB (32768 pages each).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <linux/regionpm.h>

#include "policy.h"

#define NR	8
#define RP	32768ULL		/* pages per region */
#define SEC	1000000ULL
#define T0	(1000 * SEC)

struct world {
	struct rpm_policy_config cfg;
	struct rpm_policy_state st;
	struct rpm_system sys;
	struct rpm_region r[NR];
	struct rpm_action out[32];
	size_t n;
	bool mem_explicit;	/* the test sets MemFree and MemAvailable itself */
	uint64_t reclaimable;	/* MemAvailable - MemFree otherwise */
	bool unpark_fails;	/* the manager's unparks fail (or it is a dry run) */
};

/*
 * Region 0 full of anon pages, region 1 pinned by 1000 slab pages, 2 to 7
 * empty;
 * fresh detail, nothing parked, no pressure.  Unless a test sets
 * mem_explicit, decide() derives MemFree from the regions and MemAvailable
 * from MemFree plus w->reclaimable, so the world stays consistent.
 */
static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	policy_config_defaults(&w->cfg);
	w->cfg.bias = false;	/* most tests do not want the extra action */
	policy_state_init(&w->st);
	w->sys = (struct rpm_system) {
		.now = T0,
		.mem_total_pages = NR * RP,
		.page_size = 4096,
	};
	for (uint32_t i = 0; i < NR; i++) {
		struct rpm_region *r = &w->r[i];

		r->id = i;
		r->start_pfn = i * RP;
		r->spanned_pages = r->managed_pages = RP;
		r->free_pages = i == 0 ? 0 : RP;
		r->detail = (struct rpm_region_detail) {
			.valid = true, .when = T0, .anon = i == 0 ? RP : 0,
			.free = r->free_pages,
		};
	}
	/* Region 1 holds a little slab: pinned, but room for what moves. */
	w->r[1].free_pages = RP - 1000;
	w->r[1].detail.free = RP - 1000;
	w->r[1].detail.slab = 1000;
	/* Region 0's pages are reclaimable enough to cover the headroom. */
	w->reclaimable = RP;
}

/* Region i holds used movable pages of which file_clean are clean cache. */
static void set_used(struct world *w, uint32_t i, uint64_t used,
		     uint64_t file_clean)
{
	struct rpm_region *r = &w->r[i];

	r->free_pages = r->managed_pages - used;
	r->detail = (struct rpm_region_detail) {
		.valid = true, .when = w->sys.now, .free = r->free_pages,
		.anon = used - file_clean, .file_clean = file_clean,
	};
}

static void set_parked(struct world *w, uint32_t i, bool ours, usec_t_ when)
{
	struct rpm_region *r = &w->r[i];

	r->state = RPM_REGION_PARKED;
	r->ours = ours;
	r->parked_pages = RP;
	r->managed_pages = 0;
	r->free_pages = 0;
	r->last_vacated = when;
	w->sys.mem_total_pages -= RP;
}

/* The test set MemAvailable itself: all of it free, none reclaimable. */
static void explicit_mem(struct world *w)
{
	w->mem_explicit = true;
	w->sys.mem_free_pages = w->sys.mem_available_pages;
}

static size_t decide(struct world *w)
{
	if (!w->mem_explicit) {
		uint64_t free = 0;

		for (uint32_t i = 0; i < NR; i++)
			if (w->r[i].state == RPM_REGION_ACTIVE)
				free += w->r[i].free_pages;
		w->sys.mem_free_pages = free;
		w->sys.mem_available_pages = free + w->reclaimable;
	}
	w->n = policy_decide(&w->cfg, &w->st, &w->sys, w->r, NR, w->out,
			     sizeof(w->out) / sizeof(w->out[0]));
	/* The manager confirms each give-back that succeeded. */
	for (size_t i = 0; i < w->n && !w->unpark_fails; i++)
		if (w->out[i].kind == RPM_ACT_UNPARK)
			policy_note_given(&w->st, &w->r[w->out[i].region]);
	return w->n;
}

static size_t count(const struct world *w, enum rpm_action_kind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < w->n; i++)
		n += w->out[i].kind == kind;
	return n;
}

static void idle(struct world *w, uint32_t i, uint64_t idle_file, usec_t_ age)
{
	w->r[i].idle_valid = true;
	w->r[i].idle_when = w->sys.now - age;
	w->r[i].idle_file_pages = idle_file;
}

/* The first action of a kind, or fail. */
static const struct rpm_action *first(const struct world *w,
				      enum rpm_action_kind kind)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->out[i].kind == kind)
			return &w->out[i];
	for (size_t i = 0; i < w->n; i++)
		print_message("# action %d region %u mode %d budget %llu%s: %s\n",
			      w->out[i].kind, w->out[i].region, w->out[i].mode,
			      (unsigned long long)w->out[i].budget,
			      w->out[i].compact_first ? " (compact first)" : "",
			      w->out[i].reason);
	fail_msg("no action of kind %d among %zu", kind, w->n);
	return NULL;
}

static bool has(const struct world *w, enum rpm_action_kind kind, uint32_t id)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->out[i].kind == kind && w->out[i].region == id)
			return true;
	return false;
}

/* Parks of empty regions (not compacting ones). */
static size_t count_parks(const struct world *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->n; i++)
		n += w->out[i].kind == RPM_ACT_PARK && !w->out[i].compact_first;
	return n;
}

/* A compaction: COMPACT, or a PARK that compacts first. */
static bool is_work(const struct rpm_action *a)
{
	return a->kind == RPM_ACT_COMPACT || (a->kind == RPM_ACT_PARK && a->compact_first);
}

static size_t count_work(const struct world *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->n; i++)
		n += is_work(&w->out[i]);
	return n;
}

static bool works(const struct world *w, uint32_t id)
{
	for (size_t i = 0; i < w->n; i++)
		if (is_work(&w->out[i]) && w->out[i].region == id)
			return true;
	return false;
}

/* The first compaction, or fail. */
static const struct rpm_action *work(const struct world *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (is_work(&w->out[i]))
			return &w->out[i];
	return first(w, RPM_ACT_COMPACT);
}

/* ---- basics ------------------------------------------------------------ */

static void test_helpers(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 3, 100, 0);
	assert_int_equal(region_used_pages(&w.r[3]), 100);
	w.r[3].free_pages = RP + 5;	/* racy counters must not wrap */
	assert_int_equal(region_used_pages(&w.r[3]), 0);
	assert_false(region_has_unmovable(&w.r[3]));
	/* per-CPU list pages show as kernel_other; compaction drains them */
	w.r[3].detail.kernel_other = 512;
	assert_false(region_has_unmovable(&w.r[3]));
	w.r[3].detail.kernel_other = 0;
	w.r[3].detail.slab = 1;
	assert_true(region_has_unmovable(&w.r[3]));
	w.r[3].detail.slab = 0;
	w.r[3].detail.page_table = 1;
	assert_true(region_has_unmovable(&w.r[3]));
	w.r[3].detail.page_table = 0;
	w.r[3].detail.reserved = 1;
	assert_true(region_has_unmovable(&w.r[3]));
	w.r[3].detail.valid = false;	/* unknown is not unmovable: scan first */
	assert_false(region_has_unmovable(&w.r[3]));
}

static void test_bias_once(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	w.cfg.bias = true;
	decide(&w);
	assert_true(w.n >= 1);
	assert_int_equal(w.out[0].kind, RPM_ACT_ENABLE_BIAS);
	assert_true(w.st.bias_enabled);
	w.sys.now += SEC;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_ENABLE_BIAS), 0);

	world_init(&w);		/* Bias=no: never */
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_ENABLE_BIAS), 0);
}

static void test_no_room_for_actions(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 0, 0);
	assert_int_equal(policy_decide(&w.cfg, &w.st, &w.sys, w.r, NR, w.out, 0), 0);
	assert_int_equal(policy_decide(&w.cfg, &w.st, &w.sys, w.r, 0, w.out, 4), 0);
}

/* ---- parking and headroom ---------------------------------------------- */

static void test_parks_empty_highest_first(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	for (uint32_t i = 2; i < 5; i++)
		set_used(&w, i, RP, 0);
	decide(&w);
	/* 5, 6 and 7 are outside the keep set: parked, highest first. */
	assert_int_equal(count_parks(&w), 3);
	assert_int_equal(w.out[0].region, 7);
	assert_int_equal(w.out[1].region, 6);
	assert_int_equal(w.out[2].region, 5);
	assert_int_equal(w.r[7].role, RPM_ROLE_SPARE);
	assert_int_equal(w.r[1].role, RPM_ROLE_PINNED);
	assert_int_equal(w.r[2].role, RPM_ROLE_KEEP);

	/* Park=no: empty regions stay as they are. */
	world_init(&w);
	w.cfg.park = false;
	decide(&w);
	assert_int_equal(count_parks(&w), 0);
}

static void test_park_respects_headroom(void **state)
{
	struct world w;
	/* HeadroomPercent=10 plus HysteresisPercent=3: parking needs 13 %. */
	uint64_t limit = NR * RP * 13 / 100;

	(void)state;
	world_init(&w);
	for (uint32_t i = 2; i < 6; i++)
		set_used(&w, i, RP, 0);
	w.reclaimable = 2 * RP;		/* the headroom needs no free region */
	/* Room for exactly one region above the limit. */
	w.sys.mem_available_pages = limit + RP + RP / 2;
	w.mem_explicit = true;
	w.sys.mem_free_pages = 2 * RP;
	decide(&w);
	assert_int_equal(count_parks(&w), 1);
	assert_int_equal(first(&w, RPM_ACT_PARK)->region, 7);

	/* Exactly at the limit is allowed, one page less is not. */
	w.sys.mem_available_pages = limit + RP;
	decide(&w);
	assert_int_equal(count_parks(&w), 1);
	w.sys.mem_available_pages = limit + RP - 1;
	decide(&w);
	assert_int_equal(count_parks(&w), 0);

	/* A larger headroom forbids it. */
	w.cfg.headroom_percent = 60;
	w.sys.mem_available_pages = 4 * RP;
	decide(&w);
	assert_int_equal(count_parks(&w), 0);
}

/*
 * HeadroomPercent=auto counts the first 2 GiB in full, the next 14 GiB by
 * half and the rest by a fifth; a number counts all of it.
 */
static void test_headroom_base_sliding(void **state)
{
	struct rpm_policy_config cfg;
	const uint64_t gib = 262144;	/* 4 KiB pages */

	(void)state;
	policy_config_defaults(&cfg);
	assert_int_equal(cfg.headroom_percent, 10);	/* the default is flat */
	assert_int_equal(policy_headroom_base(&cfg, 8 * gib, 4096), 8 * gib);
	cfg.headroom_percent = RPM_HEADROOM_AUTO;
	assert_int_equal(policy_headroom_base(&cfg, gib, 4096), gib);
	assert_int_equal(policy_headroom_base(&cfg, 2 * gib, 4096), 2 * gib);
	assert_int_equal(policy_headroom_base(&cfg, 2 * gib + 2, 4096), 2 * gib + 1);
	assert_int_equal(policy_headroom_base(&cfg, 8 * gib, 4096), 5 * gib);
	assert_int_equal(policy_headroom_base(&cfg, 16 * gib, 4096), 9 * gib);
	assert_int_equal(policy_headroom_base(&cfg, 66 * gib, 4096), 19 * gib);
	/* Bytes decide, not pages: 8 GiB of 64 KiB pages, and no page size. */
	assert_int_equal(policy_headroom_base(&cfg, 8 * gib / 16, 65536), 5 * gib / 16);
	assert_int_equal(policy_headroom_base(&cfg, 8 * gib, 0), 5 * gib);
	/* No overflow at the top of the range. */
	assert_true(policy_headroom_base(&cfg, UINT64_MAX / 4096, 4096) < UINT64_MAX / 4096 / 4);
	/* The headroom in pages: 10 % of the base, parked memory counted. */
	assert_int_equal(policy_headroom_pages(&cfg, 8 * gib, 4096, NULL, 0), 5 * gib / 10);

	/* The park limit adds HysteresisPercent= (3 %) of the same base. */
	assert_int_equal(policy_park_limit_pages(&cfg, 8 * gib, 4096, NULL, 0),
			 5 * gib / 10 + 5 * gib * 3 / 100);

	cfg.headroom_percent = 10;
	assert_int_equal(policy_headroom_base(&cfg, 8 * gib, 4096), 8 * gib);
	assert_int_equal(policy_headroom_pages(&cfg, 8 * gib, 4096, NULL, 0),
		       8 * gib / 10);
	assert_int_equal(policy_park_limit_pages(&cfg, 8 * gib, 4096, NULL, 0),
			 8 * gib * 13 / 100);
	cfg.hysteresis_percent = 0;
	assert_int_equal(policy_park_limit_pages(&cfg, 8 * gib, 4096, NULL, 0), 8 * gib / 10);
}

/*
 * The same world as a machine of 8 GiB (pages of 32 KiB): the whole of
 * its memory is anonymous, so the headroom must be free pages.  A flat
 * 10 % + 3 % of 8 GiB keeps more than a region free and parks one of the
 * two empty regions; auto keeps 13 % of 5 GiB and parks both.  Below
 * 2 GiB auto and the flat 10 % are the same.
 */
static void test_park_headroom_auto_large(void **state)
{
	struct world w;

	(void)state;
	for (int flat = 0; flat < 2; flat++) {
		world_init(&w);
		w.sys.page_size = 32768;
		w.cfg.headroom_percent = flat ? 10 : RPM_HEADROOM_AUTO;
		for (uint32_t i = 2; i < 6; i++)
			set_used(&w, i, RP, 0);
		w.reclaimable = 0;
		decide(&w);
		assert_int_equal(count_parks(&w), flat ? 1 : 2);
	}
	for (int flat = 0; flat < 2; flat++) {
		world_init(&w);		/* 1 GiB: the scale does not apply */
		w.cfg.headroom_percent = flat ? 10 : RPM_HEADROOM_AUTO;
		for (uint32_t i = 2; i < 6; i++)
			set_used(&w, i, RP, 0);
		w.reclaimable = 0;
		decide(&w);
		assert_int_equal(count_parks(&w), 1);
	}
}

/*
 * Hysteresis: a region parked just above the park limit is not given
 * back when MemAvailable then wobbles below that limit, only below the
 * headroom itself.
 */
static void test_hysteresis(void **state)
{
	struct world w;
	uint64_t headroom = NR * RP / 10, limit = NR * RP * 13 / 100;

	(void)state;
	world_init(&w);
	for (uint32_t i = 2; i < 7; i++)
		set_used(&w, i, RP, 0);
	set_parked(&w, 7, true, T0 - SEC);
	w.mem_explicit = true;
	w.sys.mem_free_pages = RP / 2;
	for (uint64_t avail = limit + RP; avail >= headroom; avail -= RP / 64) {
		w.sys.mem_available_pages = avail;
		decide(&w);
		assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
		w.sys.now += SEC;
	}
	w.sys.mem_available_pages = headroom - 1;
	decide(&w);
	assert_true(has(&w, RPM_ACT_UNPARK, 7));
}

/* Parked memory still counts in the headroom's base: MemTotal shrinks
 * with every park, the headroom must not. */
static void test_headroom_counts_parked(void **state)
{
	struct world w;
	uint64_t limit = NR * RP * 13 / 100;	/* of all memory, parked included */

	(void)state;
	world_init(&w);
	for (uint32_t i = 2; i < 5; i++)
		set_used(&w, i, RP, 0);
	/* Regions 5 and 6 parked by us: MemTotal lost 2 regions. */
	for (uint32_t i = 5; i < 7; i++)
		set_parked(&w, i, true, T0 - SEC);
	w.reclaimable = 2 * RP;
	w.mem_explicit = true;
	w.sys.mem_free_pages = RP;
	/* Enough above a limit of the shrunken MemTotal, not above the
	 * limit of all memory: no park. */
	w.sys.mem_available_pages = (NR - 2) * RP * 13 / 100 + RP + RP / 40;
	decide(&w);
	assert_int_equal(count_parks(&w), 0);
	w.sys.mem_available_pages = limit + RP;
	decide(&w);
	assert_int_equal(count_parks(&w), 1);
}

static void test_never_parks_under_pressure(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 0, 0);
	set_used(&w, 6, 1000, 0);
	w.sys.psi_some_avg10 = w.cfg.psi_some_avg10_max + 1;
	decide(&w);
	assert_int_equal(count_parks(&w), 0);
	assert_int_equal(count_work(&w), 0);
	assert_int_equal(w.st.paused_until, T0 + w.cfg.pressure_backoff_sec * SEC);
	/* Nothing to give back: no reason to look again sooner. */
	assert_false(w.st.plan.short_of_memory);

	/* Full stalls alone, and a PSI trigger alone, count as pressure too. */
	world_init(&w);
	set_used(&w, 7, 0, 0);
	w.sys.psi_full_avg10 = w.cfg.psi_full_avg10_max + 1;
	decide(&w);
	assert_int_equal(count_parks(&w), 0);
	world_init(&w);
	set_used(&w, 7, 0, 0);
	w.sys.psi_event = true;
	decide(&w);
	assert_int_equal(count_parks(&w), 0);

	/* Pressure gone, back-off not over yet: still nothing. */
	w.sys.psi_event = false;
	w.sys.now += (w.cfg.pressure_backoff_sec - 1) * SEC;
	decide(&w);
	assert_int_equal(w.n, 0);
	/* Back-off over: park. */
	w.sys.now += 2 * SEC;
	decide(&w);
	assert_true(has(&w, RPM_ACT_PARK, 7));
}

static void test_unparks_on_pressure(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_parked(&w, 4, true, T0 - 30 * SEC);
	set_parked(&w, 5, true, T0 - 10 * SEC);	/* most recently parked */
	set_parked(&w, 7, false, T0 - 5 * SEC);	/* someone else's */
	set_used(&w, 6, 0, 0);			/* would be parkable */
	w.sys.mem_available_pages = 4 * RP;
	explicit_mem(&w);
	w.sys.psi_some_avg10 = w.cfg.psi_some_avg10_max + 1;
	decide(&w);
	/* Memory is there, PSI says contended: give back one, ours, newest. */
	assert_int_equal(w.n, 1);
	assert_int_equal(w.out[0].kind, RPM_ACT_UNPARK);
	assert_int_equal(w.out[0].region, 5);
	/* It is not vacated again right away. */
	assert_true(w.r[5].backoff_until > w.sys.now);
	/* Without a kernel that gives memory back (stock backend): all of it. */
	{
		struct world s;

		world_init(&s);
		set_parked(&s, 4, true, T0 - 30 * SEC);
		set_parked(&s, 5, true, T0 - 10 * SEC);
		set_parked(&s, 6, true, T0 - 20 * SEC);
		s.sys.mem_available_pages = 4 * RP;
		explicit_mem(&s);
		s.sys.psi_some_avg10 = s.cfg.psi_some_avg10_max + 1;
		s.sys.no_kernel_release = true;
		decide(&s);
		assert_int_equal(count(&s, RPM_ACT_UNPARK), 3);
	}
	/* The next pass comes soon, in case the pressure outruns this one. */
	assert_true(w.st.plan.short_of_memory);
	/* ... and stops coming soon once the pressure is gone. */
	w.sys.psi_some_avg10 = 0;
	w.sys.now += SEC / 5;
	decide(&w);
	assert_false(w.st.plan.short_of_memory);
}

static void test_unparks_below_headroom_order(void **state)
{
	struct world w;
	uint64_t headroom;

	(void)state;
	world_init(&w);
	w.cfg.headroom_percent = 50;
	set_parked(&w, 4, true, T0 - 30 * SEC);
	set_parked(&w, 5, true, T0 - 10 * SEC);
	set_parked(&w, 7, false, T0 - 5 * SEC);
	headroom = NR * RP / 2;	/* of all memory, parked included */
	w.sys.mem_available_pages = headroom - 2 * RP - RP / 2;
	explicit_mem(&w);
	decide(&w);
	assert_int_equal(w.n, 3);
	assert_int_equal(w.out[0].kind, RPM_ACT_UNPARK);
	assert_int_equal(w.out[0].region, 5);
	assert_int_equal(w.out[1].region, 4);
	assert_int_equal(w.out[2].region, 7);

	/* Short by half a region: one is enough, nothing else happens. */
	world_init(&w);
	w.cfg.headroom_percent = 50;
	set_parked(&w, 4, true, T0 - 30 * SEC);
	set_parked(&w, 5, true, T0 - 10 * SEC);
	set_used(&w, 6, 0, 0);
	w.sys.mem_available_pages = NR * RP / 2 - RP / 2;
	explicit_mem(&w);
	decide(&w);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.out[0].region, 5);
	assert_true(w.st.paused_until > w.sys.now);

	/*
	 * Parked together at idle (never vacated: no LIFO order): the lowest
	 * come back first, where the kernel's frontier puts unmovable pages.
	 */
	world_init(&w);
	w.cfg.headroom_percent = 50;
	set_parked(&w, 7, true, 0);
	set_parked(&w, 3, true, 0);
	set_parked(&w, 5, true, 0);
	w.sys.mem_available_pages = NR * RP / 2 - RP - RP / 2;
	explicit_mem(&w);
	decide(&w);
	assert_int_equal(w.n, 2);
	assert_int_equal(w.out[0].region, 3);
	assert_int_equal(w.out[1].region, 5);
}

/* ---- choosing what to vacate -------------------------------------------- */

static void test_prefers_highest_region(void **state)
{
	struct world w;
	const struct rpm_action *a;

	(void)state;
	world_init(&w);
	for (uint32_t i = 2; i < NR; i++)
		set_used(&w, i, 1000, 0);
	w.cfg.budget_pages_per_sec = 1000;	/* pays for one call */
	decide(&w);
	assert_int_equal(count_work(&w), 1);
	a = work(&w);
	assert_int_equal(a->region, 7);
	assert_int_equal(a->mode, RPM_COMPACT_MIGRATE);
	assert_int_equal(a->budget, 1000);

	/* With more budget, the next ones in descending order. */
	world_init(&w);
	for (uint32_t i = 2; i < NR; i++)
		set_used(&w, i, 1000, 0);
	w.cfg.budget_pages_per_sec = 3000;
	w.cfg.budget_pages_per_region = 1000;
	decide(&w);
	assert_int_equal(count_work(&w), 3);
	assert_int_equal(w.out[0].region, 7);
	assert_int_equal(w.out[1].region, 6);
	assert_int_equal(w.out[2].region, 5);
}

static void test_prefers_lowest_cost(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 20000, 0);
	set_used(&w, 3, 100, 0);
	set_used(&w, 5, 120, 0);
	set_used(&w, 4, 100, 0);	/* same cost as 3: the higher goes first */
	w.cfg.budget_pages_per_sec = 1000;
	w.cfg.budget_pages_per_region = 200;
	decide(&w);
	assert_true(count_work(&w) >= 3);
	{
		uint32_t order[3], k = 0;

		for (size_t i = 0; i < w.n && k < 3; i++)
			if (is_work(&w.out[i]))
				order[k++] = w.out[i].region;
		assert_int_equal(order[0], 4);
		assert_int_equal(order[1], 3);
		assert_int_equal(order[2], 5);
	}
}

/*
 * The keep set holds every page in use: a lone, partly used region is
 * kept rather than moved into an empty one (that would empty nothing);
 * two that fit into the free room of a pinned region both go.
 */
static void test_keep_set_moves_nothing_needlessly(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	for (uint32_t i = 1; i < NR; i++)
		set_used(&w, i, RP, 0);
	set_used(&w, 6, RP / 2, 0);	/* all full but one half-used region */
	decide(&w);
	assert_int_equal(count_work(&w), 0);
	assert_int_equal(w.r[6].role, RPM_ROLE_KEEP);
	assert_true(w.st.plan.converged);
	/*
	 * Converged, it leaves a mark for the reclaim watch: once that much
	 * is free, the plan does with one region less.  Not past a region's
	 * worth of freeing, and the pass at the mark has work to do.
	 */
	{
		uint64_t mark = w.st.plan.wake_free_pages;
		uint64_t freed = mark - w.sys.mem_free_pages;

		assert_true(mark > w.sys.mem_free_pages);
		assert_true(freed <= RP);
		set_used(&w, 5, RP - freed, 0);
		w.sys.now += SEC;
		decide(&w);
		assert_int_equal(w.sys.mem_free_pages, mark);
		assert_true(count_work(&w) > 0);
		assert_int_equal(w.st.plan.wake_free_pages, 0);	/* not converged */
	}

	world_init(&w);
	set_used(&w, 6, 12000, 0);
	set_used(&w, 7, 8000, 0);
	decide(&w);
	assert_int_equal(work(&w)->region, 7);	/* the cheaper first */
	assert_true(works(&w, 6));
	assert_int_equal(w.r[6].role, RPM_ROLE_TARGET);
	assert_int_equal(w.r[7].role, RPM_ROLE_TARGET);
	/* Region 1 (pinned) has room for both: both go. */
	assert_true(w.st.plan.keep == 2);
}

/*
 * Regions 0 and 2 to 7 full, region 1 pinned by 1000 slab pages, region 6
 * holding @six pages; the kernel's marks known: @reserve pages kept free,
 * @room free above them.
 */
static void marks_world(struct world *w, uint64_t six, uint64_t reserve, uint64_t room)
{
	world_init(w);
	w->sys.can_hold = true;
	w->sys.hold_timeout = 60 * SEC;
	for (uint32_t i = 2; i < NR; i++)
		set_used(w, i, RP, 0);
	set_used(w, 6, six, 0);
	w->sys.marks_valid = true;
	w->sys.kernel_reserve_pages = reserve;
	w->sys.free_above_marks = room;
}

/*
 * The keep set keeps the kernel's reserve free: with reclaimable cache
 * covering the headroom, the plan once kept only its slack (2,048 pages)
 * free, below the kernel's watermarks, and kswapd evicted cache for
 * every page moved in.
 */
static void test_keep_set_keeps_kernel_marks(void **state)
{
	struct world w;

	(void)state;
	/* Without the marks region 6 goes into region 1's free pages... */
	marks_world(&w, 28000, 7000, 60000);
	w.sys.marks_valid = false;
	decide(&w);
	assert_int_equal(w.r[6].role, RPM_ROLE_TARGET);
	assert_true(works(&w, 6));
	/* ... but that leaves 2,768 pages free, under a reserve of 7,000. */
	marks_world(&w, 28000, 7000, 60000);
	decide(&w);
	assert_int_equal(w.r[6].role, RPM_ROLE_KEEP);
	assert_int_equal(count_work(&w), 0);
	assert_true(w.st.plan.need_pages >= 6 * RP + 1000 + 28000 + 7000 + RP / 16);
	/* With room for the reserve and the slack it goes. */
	marks_world(&w, 20000, 7000, 60000);
	decide(&w);
	assert_int_equal(w.r[6].role, RPM_ROLE_TARGET);
	assert_true(works(&w, 6));
}

/*
 * What moves must fit into the free pages above the kernel's marks, not
 * into what MemAvailable counts (cache that kswapd would evict for it);
 * a target whose moves do not fit is not held either.
 */
static void test_moves_fit_above_marks(void **state)
{
	struct world w;

	(void)state;
	/* Held, region 6 takes its 12,768 free pages from the 25,000. */
	marks_world(&w, 20000, 1000, 25000);
	decide(&w);
	assert_int_equal(w.r[6].role, RPM_ROLE_TARGET);
	assert_false(works(&w, 6));
	assert_false(has(&w, RPM_ACT_HOLD, 6));
	assert_true(w.st.plan.converged);
	/* 40,000: room for the 20,000 pages after the hold. */
	marks_world(&w, 20000, 1000, 40000);
	decide(&w);
	assert_true(works(&w, 6));
	assert_true(has(&w, RPM_ACT_HOLD, 6));
	/* Without holds the region's own free pages go when it is parked. */
	marks_world(&w, 20000, 1000, 30000);
	w.sys.can_hold = false;
	decide(&w);
	assert_false(works(&w, 6));
	marks_world(&w, 20000, 1000, 33000);
	w.sys.can_hold = false;
	decide(&w);
	assert_true(works(&w, 6));
	/* Two targets of 10,000 pages: the room pays for one, the other waits. */
	marks_world(&w, 10000, 1000, 70000);
	set_used(&w, 7, 10000, 0);
	w.sys.can_hold = false;
	decide(&w);
	assert_true(works(&w, 6) && works(&w, 7));
	marks_world(&w, 10000, 1000, 40000);
	set_used(&w, 7, 10000, 0);
	w.sys.can_hold = false;
	decide(&w);
	assert_true(works(&w, 7));
	assert_false(works(&w, 6));
	/* Held: only as many as the room can empty (highest first). */
	marks_world(&w, 10000, 1000, 50000);
	set_used(&w, 7, 10000, 0);
	decide(&w);
	assert_true(has(&w, RPM_ACT_HOLD, 7));
	assert_false(has(&w, RPM_ACT_HOLD, 6));
	assert_true(works(&w, 7));
	assert_false(works(&w, 6));
	/*
	 * Region 7 held since the last pass, its 10,000 pages still to
	 * move: they use the room too, region 6 is not held beside it.
	 */
	marks_world(&w, 10000, 1000, 40000);
	set_used(&w, 7, 10000, 0);
	w.r[7].state = RPM_REGION_HELD;
	w.r[7].ours = true;
	w.r[7].hold_since = w.sys.now - SEC;
	decide(&w);
	assert_true(works(&w, 7));
	assert_false(has(&w, RPM_ACT_HOLD, 6));
}

/*
 * Free memory above the kernel's marks for @spare pages besides region
 * @i's own free pages: idle cache that does not fit is dropped rather
 * than moved (Park=no: only whether the moves fit counts).
 */
static void short_of_room(struct world *w, uint32_t i, uint64_t spare)
{
	w->cfg.park = false;
	w->sys.marks_valid = true;
	w->sys.free_above_marks = w->r[i].free_pages + spare;
}

/* Hot pages in a target are moved, not left behind: no DROP mode. */
static void test_hot_pages_move(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 3000, 3000);	/* all clean cache, hot */
	idle(&w, 7, 0, 0);
	decide(&w);
	assert_true(works(&w, 7));
	assert_int_equal(work(&w)->mode, RPM_COMPACT_MIGRATE);
	/* Idle, room for all of it: the cache is kept, it all moves. */
	world_init(&w);
	set_used(&w, 7, 3000, 3000);
	idle(&w, 7, 2000, 0);
	decide(&w);
	assert_int_equal(work(&w)->mode, RPM_COMPACT_MIGRATE);
	/* Idle, short of room: the kernel drops what is cold and moves the rest. */
	world_init(&w);
	set_used(&w, 7, 3000, 3000);
	idle(&w, 7, 2000, 0);
	short_of_room(&w, 7, 2000);
	decide(&w);
	assert_true(works(&w, 7));
	assert_int_equal(work(&w)->mode, RPM_COMPACT_BOTH);
}

/* More in use than the active regions can take: parked ones come back. */
static void test_shortfall_unparks(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	for (uint32_t i = 2; i < 6; i++)
		set_used(&w, i, RP, 0);
	set_parked(&w, 6, true, T0 - 20 * SEC);
	set_parked(&w, 7, true, T0 - 10 * SEC);
	set_used(&w, 0, RP, 0);
	set_used(&w, 1, RP - 100, 0);	/* all but full */
	w.r[1].detail.slab = 1000;
	w.reclaimable = 0;
	w.mem_explicit = true;
	w.sys.mem_free_pages = 100;
	w.sys.mem_available_pages = NR * RP / 10 + 1;	/* just above the headroom */
	decide(&w);
	assert_true(has(&w, RPM_ACT_UNPARK, 7));
	assert_true(w.st.plan.shortfall > 0);
}

/*
 * With reclaimable cache covering the headroom, parking and emptying ask
 * for the kernel's marks plus the slack to stay free, and unparking only
 * for half the marks: free memory at the marks is where the kernel keeps
 * it, and a drift of a few hundred pages gave a region back every 100 s
 * (and once had a full region emptied into it).
 */
static void band_world(struct world *w, uint64_t free)
{
	world_init(w);
	for (uint32_t i = 2; i < 6; i++)
		set_used(w, i, RP, 0);
	set_used(w, 1, RP - free, 0);
	w->r[1].detail.slab = 1000;		/* pinned: it stays */
	set_parked(w, 6, true, T0 - 200 * SEC);
	set_parked(w, 7, true, T0 - 100 * SEC);
	w->mem_explicit = true;
	w->sys.mem_free_pages = free;
	w->sys.mem_available_pages = free + 3 * RP;	/* cache covers the headroom */
	w->sys.marks_valid = true;
	w->sys.kernel_reserve_pages = 8448;
	w->sys.free_above_marks = free > 8448 ? free - 8448 : 0;
}

static void test_unpark_band(void **state)
{
	struct world w;

	(void)state;
	/* 186 pages short of the marks plus the slack: no unpark. */
	band_world(&w, 8448 + RP / 16 - 186);
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
	assert_int_equal(w.st.plan.shortfall, 0);
	/* At the marks (fragment's hot phase), and below them: still none. */
	band_world(&w, 8448 + 373);
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
	band_world(&w, 8448 - 669);
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
	assert_int_equal(w.st.plan.shortfall, 0);
	/* ... and nothing is emptied or parked there either. */
	assert_int_equal(count_work(&w), 0);
	assert_int_equal(count(&w, RPM_ACT_PARK), 0);
	/* Below half the marks the kernel is short: a region comes back. */
	band_world(&w, 8448 / 2 - 1);
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 1);
	assert_true(w.st.plan.shortfall > 0);
}

static void test_skips_unmovable_and_scans(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 1000, 0);
	w.r[7].detail.slab = 3;			/* slab: can never be emptied */
	set_used(&w, 6, 1000, 0);
	w.r[6].detail.page_table = 1;
	set_used(&w, 5, 1000, 0);
	w.r[5].detail.valid = false;		/* unknown: scan first */
	set_used(&w, 4, 1000, 0);
	w.r[4].detail.when = T0 - (RPM_POLICY_DETAIL_MAX_AGE_SEC + 1) * SEC;	/* stale */
	set_used(&w, 3, 1000, 0);
	w.cfg.budget_pages_per_sec = 1000;
	decide(&w);
	assert_false(works(&w, 7));
	assert_false(works(&w, 6));
	assert_false(has(&w, RPM_ACT_SCAN, 7));
	assert_true(has(&w, RPM_ACT_SCAN, 5));
	assert_false(works(&w, 5));
	assert_true(has(&w, RPM_ACT_SCAN, 4));
	assert_int_equal(work(&w)->region, 3);
	/* Regions 0-2 are full; they are not worth a scan every pass, but
	 * their detail is fresh so none is asked for. */
	assert_int_equal(count(&w, RPM_ACT_SCAN), 2);
}

static void test_skips_what_memory_cannot_absorb(void **state)
{
	struct world w;
	uint64_t headroom = NR * RP / 10;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 20000, 0);
	set_used(&w, 6, 5000, 0);
	set_used(&w, 5, 5000, 0);
	w.reclaimable = 3 * RP;
	w.mem_explicit = true;
	w.sys.mem_free_pages = 3 * RP;
	/* Too close to the headroom to park anything: Park=no, so what is
	 * tested is only whether the moves fit (with parking on, nothing is
	 * emptied that could not be parked). */
	w.cfg.park = false;
	/* 12000 pages above the headroom: 5 fits, then 6 does not. */
	w.sys.mem_available_pages = headroom + 8000;
	decide(&w);
	assert_false(works(&w, 7));
	assert_int_equal(count_work(&w), 1);
	assert_true(works(&w, 6));

	/* Clean idle cache is dropped, not absorbed: then both fit. */
	set_used(&w, 5, 5000, 5000);
	idle(&w, 5, 5000, 0);
	decide(&w);
	assert_true(works(&w, 5));
	assert_true(works(&w, 6));
}

static void test_max_pages_to_vacate(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 5000, 0);
	set_used(&w, 6, 3000, 0);
	w.cfg.max_pages_to_vacate = 4000;
	decide(&w);
	assert_false(works(&w, 7));
	assert_true(works(&w, 6));
}

/* ---- drop or migrate ------------------------------------------------------ */


static void test_drop_vs_migrate(void **state)
{
	struct world w;

	(void)state;
	/* All clean cache, all idle, room for it: kept, moved. */
	world_init(&w);
	set_used(&w, 7, 4000, 4000);
	idle(&w, 7, 4000, 0);
	decide(&w);
	assert_int_equal(work(&w)->mode, RPM_COMPACT_MIGRATE);
	assert_int_equal(count(&w, RPM_ACT_SAMPLE_IDLE), 0);

	/* The same short of room: drop what is cold, move the rest. */
	world_init(&w);
	set_used(&w, 7, 4000, 4000);
	idle(&w, 7, 4000, 0);
	short_of_room(&w, 7, 2000);
	decide(&w);
	assert_int_equal(work(&w)->mode, RPM_COMPACT_BOTH);

	/* Idle cache with anon, short of room: drop the cache, migrate the anon. */
	world_init(&w);
	set_used(&w, 7, 4000, 3000);
	idle(&w, 7, 3000, 0);
	short_of_room(&w, 7, 2000);
	decide(&w);
	assert_int_equal(work(&w)->mode, RPM_COMPACT_BOTH);

	/*
	 * Room for one target's pages but not for both: idle cache is
	 * dropped, and both are emptied.
	 */
	world_init(&w);
	set_used(&w, 7, 3000, 3000);
	idle(&w, 7, 3000, 0);
	set_used(&w, 6, 3000, 3000);
	idle(&w, 6, 3000, 0);
	short_of_room(&w, 7, w.r[6].free_pages + 4000);
	decide(&w);
	assert_true(works(&w, 7) && works(&w, 6));
	assert_int_equal(work(&w)->mode, RPM_COMPACT_BOTH);

	/* Dirty pages are never dropped. */
	world_init(&w);
	set_used(&w, 7, 4000, 0);
	w.r[7].detail.anon = 0;
	w.r[7].detail.file_dirty = 4000;
	idle(&w, 7, 4000, 0);
	decide(&w);
	assert_int_equal(work(&w)->mode, RPM_COMPACT_MIGRATE);

	/* Idleness unknown: migrate at once (nothing waits for the sampler),
	 * and sample the rest of the targets with the spare preparation slots. */
	world_init(&w);
	set_used(&w, 7, 4000, 4000);
	set_used(&w, 6, 4000, 4000);
	w.cfg.budget_pages_per_sec = 5000;
	decide(&w);
	assert_true(works(&w, 7));
	assert_int_equal(work(&w)->mode, RPM_COMPACT_MIGRATE);
	assert_true(has(&w, RPM_ACT_SAMPLE_IDLE, 6));

	/* Not asked again while its sample runs, nor with the samplers busy. */
	world_init(&w);
	set_used(&w, 6, 4000, 4000);
	w.r[6].idle_sampling = true;
	w.cfg.budget_pages_per_sec = 0;
	decide(&w);
	assert_false(has(&w, RPM_ACT_SAMPLE_IDLE, 6));
	world_init(&w);
	set_used(&w, 6, 4000, 4000);
	w.sys.idle_samplers_busy = true;
	decide(&w);
	assert_false(has(&w, RPM_ACT_SAMPLE_IDLE, 6));
	world_init(&w);
	set_used(&w, 6, 4000, 4000);
	decide(&w);
	assert_true(has(&w, RPM_ACT_SAMPLE_IDLE, 6));

	/* Idleness too old: not trusted. */
	world_init(&w);
	set_used(&w, 7, 4000, 4000);
	idle(&w, 7, 4000, (w.cfg.min_idle_age_sec + 1) * SEC);
	decide(&w);
	assert_int_equal(work(&w)->mode, RPM_COMPACT_MIGRATE);

	/* DropCache=no: migrate, and no sampling needed. */
	world_init(&w);
	w.cfg.drop_cache = false;
	set_used(&w, 7, 4000, 4000);
	idle(&w, 7, 4000, 0);
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_SAMPLE_IDLE), 0);
	assert_int_equal(work(&w)->mode, RPM_COMPACT_MIGRATE);
}

/* ---- cost model ------------------------------------------------------------ */

static void test_cost_model_refusal(void **state)
{
	struct world w;

	(void)state;
	/* 4000 pages * 30 uJ = 0.12 J; saving 0.01 mW * 10 s = 0.1 mJ: no. */
	world_init(&w);
	set_used(&w, 7, 4000, 0);
	w.cfg.region_saving_mw = 0.01;
	w.cfg.payback_sec = 10;
	decide(&w);
	assert_int_equal(count_work(&w), 0);

	/* The same with a long enough payback: yes. 0.01 mW * 12000 s = 120 mJ. */
	w.cfg.payback_sec = 12000;
	w.sys.now += SEC;
	decide(&w);
	assert_true(works(&w, 7));

	/* Just over the break-even: no. */
	world_init(&w);
	set_used(&w, 7, 4001, 0);
	w.cfg.region_saving_mw = 0.01;
	w.cfg.payback_sec = 12000;
	decide(&w);
	assert_int_equal(count_work(&w), 0);

	/* Dropping idle cache costs no migration energy: allowed. */
	world_init(&w);
	set_used(&w, 7, 4000, 4000);
	idle(&w, 7, 4000, 0);
	w.cfg.region_saving_mw = 0.0;
	decide(&w);
	assert_int_equal(work(&w)->mode, RPM_COMPACT_BOTH);
}

/* ---- budget ----------------------------------------------------------------- */

static void test_token_bucket(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 18000, 0);
	w.cfg.budget_pages_per_sec = 1000;
	/* First pass: one second's worth. */
	decide(&w);
	assert_int_equal(work(&w)->budget, 1000);
	/* Same instant: the bucket is empty. */
	decide(&w);
	assert_int_equal(count_work(&w), 0);
	/* 0.1 s later: 100 tokens, below the smallest call worth making. */
	w.sys.now += SEC / 10;
	decide(&w);
	assert_int_equal(count_work(&w), 0);
	/* 0.5 s more: 600 pages. */
	w.sys.now += SEC / 2;
	decide(&w);
	assert_int_equal(work(&w)->budget, 600);

	/* After an hour the bucket holds at most BURST seconds... */
	world_init(&w);
	set_used(&w, 7, 18000, 0);
	w.cfg.budget_pages_per_sec = 1000;
	w.cfg.budget_pages_per_region = 100000;
	decide(&w);
	assert_int_equal(work(&w)->budget, 1000);
	policy_note_compact(&w.st, &w.r[7], w.sys.now, 1000, 0, 0, 0);
	w.sys.now += 3600 * SEC;
	set_used(&w, 7, 18000, 0);	/* fresh detail */
	decide(&w);
	assert_int_equal(work(&w)->budget,
			 1000 * RPM_POLICY_BURST_SEC);
	/* ... and a call never more than a region, which the kernel refuses. */
	w.sys.now += 3600 * SEC;
	w.cfg.budget_pages_per_sec = 1000000;
	set_used(&w, 7, 9000, 0);
	decide(&w);
	assert_int_equal(work(&w)->budget, RP);
}

static void test_refund_and_adaptation(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 18000, 0);
	w.cfg.budget_pages_per_sec = 8192;
	w.cfg.budget_pages_per_region = 8192;
	decide(&w);
	assert_int_equal(work(&w)->budget, 8192);
	/* Many failures (pinned pages): that region's calls get smaller, and
	 * the unused part of the budget comes back. */
	policy_note_compact(&w.st, &w.r[7], w.sys.now, 1000, 0, 3000, 0);
	assert_true(w.st.budget_tokens >= 8192 - 4000 - 1);
	assert_int_equal(w.st.total_migrated, 1000);
	assert_int_equal(w.r[7].pages_migrated, 1000);
	decide(&w);
	assert_int_equal(work(&w)->budget, 4096);
	/* An error halves it again. */
	policy_note_compact(&w.st, &w.r[7], w.sys.now, 0, 0, 0, -EBUSY);
	w.sys.now += SEC;
	decide(&w);
	assert_int_equal(work(&w)->budget, 2048);
	/* A clean run doubles it, up to BudgetPagesPerRegion. */
	policy_note_compact(&w.st, &w.r[7], w.sys.now, 2000, 48, 0, 0);
	assert_int_equal(w.st.total_dropped, 48);
	w.sys.now += SEC;
	decide(&w);
	assert_int_equal(work(&w)->budget, 4096);
	for (int i = 0; i < 5; i++) {
		policy_note_compact(&w.st, &w.r[7], w.sys.now, 4096, 0, 0, 0);
		w.sys.now += 2 * SEC;
		decide(&w);
	}
	assert_int_equal(work(&w)->budget, 8192);
	/* Never below the smallest useful call. */
	for (int i = 0; i < 10; i++)
		policy_note_compact(&w.st, &w.r[7], w.sys.now, 0, 0, 100, 0);
	w.sys.now += 2 * SEC;
	decide(&w);
	assert_int_equal(work(&w)->budget, RPM_POLICY_MIN_CHUNK);
}

/* A compaction that moved nothing and hit an obstacle backs the region
 * off, doubling each time; progress clears it. */
/* A refused park backs the region off when what is left outweighs what moved. */
static void test_park_stuck(void **state)
{
	(void)state;
	assert_true(policy_park_stuck(-EPERM, 8000, 0));
	assert_true(policy_park_stuck(-ENOSPC, 0, 0));
	/* A few dozen pages of returning cache moved, hundreds stay. */
	assert_true(policy_park_stuck(-EBUSY, 60, 762));
	assert_true(policy_park_stuck(-EBUSY, 0, 20));
	/* Nearly done: 8,000 moved, 100 arrived meanwhile. */
	assert_false(policy_park_stuck(-EBUSY, 8000, 100));
	/* "Empty", nothing moved, still refused: something unseen keeps it. */
	assert_true(policy_park_stuck(-EBUSY, 0, 0));
	/* Everything moved, a few pages arrived and left again: try again. */
	assert_false(policy_park_stuck(-EBUSY, 500, 0));
	/* Other errors (interrupted, no memory) are not the region's fault. */
	assert_false(policy_park_stuck(-EINTR, 0, 5000));
	assert_false(policy_park_stuck(-ENOMEM, 0, 5000));
}

/*
 * Pinned metadata buffers: checkpoint at once, or wait for the next
 * checkpoint allowed (not the doubling back-off); two tries per region,
 * counted until it parks.
 */
static void test_checkpoint_step(void **state)
{
	const usec_t_ s = 1000000;
	struct rpm_region r = { .id = 7 };
	struct rpm_policy_state st = { 0 };
	usec_t_ until = 0;

	(void)state;
	assert_int_equal(policy_checkpoint_step(&r, 100 * s, 0, &until), RPM_CHECKPOINT_NOW);
	r.checkpoint_tries = 1;
	/* fileserver: the next regions refused 3 s after the first checkpoint */
	assert_int_equal(policy_checkpoint_step(&r, 103 * s, 100 * s, &until), RPM_CHECKPOINT_WAIT);
	assert_int_equal(until, 100 * s + RPM_CHECKPOINT_INTERVAL_USEC);
	assert_int_equal(policy_checkpoint_step(&r, until, 100 * s, &until), RPM_CHECKPOINT_NOW);
	/* Something else pins it: after two checkpoints, back off as stuck. */
	r.checkpoint_tries = RPM_CHECKPOINT_TRIES;
	assert_int_equal(policy_checkpoint_step(&r, 500 * s, 100 * s, &until), RPM_CHECKPOINT_NO);
	/* Parked: the next time it is refused, checkpoints may help again. */
	policy_note_parked(&st, &r, 600 * s);
	assert_int_equal(r.checkpoint_tries, 0);
	assert_int_equal(policy_checkpoint_step(&r, 700 * s, 100 * s, &until), RPM_CHECKPOINT_NOW);
}

static void test_obstacle_backs_off(void **state)
{
	struct world w;
	usec_t_ base;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 18000, 0);
	base = (usec_t_)w.cfg.pingpong_backoff_sec * SEC;
	decide(&w);
	assert_non_null(work(&w));
	assert_int_equal(work(&w)->region, 7);
	policy_note_obstacle(&w.cfg, &w.r[7], w.sys.now, 6 /* PINNED */, 0);
	assert_int_equal(w.r[7].backoff_until, w.sys.now + base);
	w.sys.now += SEC;
	decide(&w);
	for (size_t i = 0; i < w.n; i++)
		if (w.out[i].kind == RPM_ACT_COMPACT)
			assert_int_not_equal(w.out[i].region, 7);
	policy_note_obstacle(&w.cfg, &w.r[7], w.sys.now, 6, 0);
	assert_int_equal(w.r[7].backoff_until, w.sys.now + 2 * base);
	/* no obstacle named, or pages moved: not stuck */
	policy_note_obstacle(&w.cfg, &w.r[7], w.sys.now, 6, 100);
	assert_int_equal(w.r[7].stuck_count, 0);
	policy_note_obstacle(&w.cfg, &w.r[7], w.sys.now, 0, 0);
	assert_int_equal(w.r[7].stuck_count, 0);
	/*
	 * The kernel stopped at its watermarks after some pages moved:
	 * nothing is in the way, the keep set lacks room; the next pass may
	 * go on, no back-off.
	 */
	w.r[7].backoff_until = 0;
	policy_note_obstacle(&w.cfg, &w.r[7], w.sys.now, REGIONPM_OBSTACLE_NO_ROOM, 512);
	assert_int_equal(w.r[7].stuck_count, 0);
	assert_int_equal(w.r[7].backoff_until, 0);
	w.sys.now += SEC;
	decide(&w);
	assert_true(works(&w, 7));
	/*
	 * Stopped before a page moved: the pass saw room the kernel did not.
	 * One base back-off, not doubled, nothing counted as stuck.
	 */
	policy_note_obstacle(&w.cfg, &w.r[7], w.sys.now, REGIONPM_OBSTACLE_NO_ROOM, 0);
	assert_int_equal(w.r[7].stuck_count, 0);
	assert_int_equal(w.r[7].backoff_until, w.sys.now + base);
	w.sys.now += SEC;
	decide(&w);
	assert_false(works(&w, 7));
	policy_note_obstacle(&w.cfg, &w.r[7], w.sys.now, REGIONPM_OBSTACLE_NO_ROOM, 0);
	assert_int_equal(w.r[7].backoff_until, w.sys.now + base);
	w.sys.now += base;
	decide(&w);
	assert_true(works(&w, 7));
}

static void test_psi_rising_slows_down(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 18000, 0);
	w.cfg.budget_pages_per_sec = 1000;
	w.sys.psi_some_avg10 = w.cfg.psi_some_avg10_max / 2 + 1;
	decide(&w);
	assert_int_equal(work(&w)->budget, 500);
}

/* ---- ping-pong ---------------------------------------------------------------- */

static void test_pingpong_backoff(void **state)
{
	struct world w;
	usec_t_ base;

	(void)state;
	world_init(&w);
	base = w.cfg.pingpong_backoff_sec * SEC;
	set_used(&w, 7, 1000, 0);
	set_used(&w, 6, 1000, 0);
	decide(&w);
	assert_int_equal(work(&w)->region, 7);
	/* The compaction emptied it. */
	w.r[7].free_pages = w.r[7].managed_pages;
	policy_note_compact(&w.st, &w.r[7], w.sys.now, 1000, 0, 0, 0);
	assert_int_equal(w.r[7].last_vacated, w.sys.now);
	assert_int_equal(w.st.regions_vacated, 1);

	/* Refilled 5 s later: ping-pong, back off. */
	w.sys.now += 5 * SEC;
	set_used(&w, 7, 1000, 0);
	policy_note_refill(&w.cfg, &w.st, &w.r[7], w.sys.now);
	assert_int_equal(w.r[7].refill_count, 1);
	assert_int_equal(w.r[7].backoff_until, w.sys.now + base);
	w.sys.now += SEC;
	decide(&w);
	assert_false(works(&w, 7));
	assert_true(works(&w, 6));

	/* Again: the back-off doubles. */
	w.r[7].last_vacated = w.sys.now;
	w.sys.now += SEC;
	policy_note_refill(&w.cfg, &w.st, &w.r[7], w.sys.now);
	assert_int_equal(w.r[7].refill_count, 2);
	assert_int_equal(w.r[7].backoff_until, w.sys.now + 2 * base);
	/* ... and is capped. */
	for (int i = 0; i < 40; i++) {
		w.r[7].last_vacated = w.sys.now;
		policy_note_refill(&w.cfg, &w.st, &w.r[7], w.sys.now);
	}
	assert_int_equal(w.r[7].backoff_until,
			 w.sys.now + (base << RPM_POLICY_MAX_BACKOFF_SHIFT));

	/* After the back-off it is a candidate again. */
	w.sys.now = w.r[7].backoff_until;
	set_used(&w, 7, 1000, 0);
	set_used(&w, 6, 1000, 0);
	decide(&w);
	assert_true(works(&w, 7));

	/* Refilled long after the window: no back-off, one repeat forgiven. */
	world_init(&w);
	w.r[7].last_vacated = w.sys.now;
	w.r[7].refill_count = 3;
	w.sys.now += (w.cfg.pingpong_window_sec + 1) * SEC;
	policy_note_refill(&w.cfg, &w.st, &w.r[7], w.sys.now);
	assert_int_equal(w.r[7].refill_count, 2);
	assert_int_equal(w.r[7].backoff_until, 0);
	assert_int_equal(w.r[7].last_refilled, w.sys.now);

	/* A region we never vacated: nothing to count. */
	world_init(&w);
	policy_note_refill(&w.cfg, &w.st, &w.r[3], w.sys.now);
	assert_int_equal(w.r[3].refill_count, 0);
	assert_int_equal(w.r[3].backoff_until, 0);

	/*
	 * A parked region given back to be used waits one back-off; its
	 * first allocation is what it was given back for, no refill: the
	 * back-off is not doubled.
	 */
	world_init(&w);
	set_parked(&w, 7, true, w.sys.now - 10 * SEC);
	w.sys.psi_event = true;
	decide(&w);
	assert_true(has(&w, RPM_ACT_UNPARK, 7));
	assert_int_equal(w.r[7].backoff_until, w.sys.now + base);
	assert_int_equal(w.r[7].last_vacated, 0);
	w.r[7].state = RPM_REGION_ACTIVE;
	w.r[7].managed_pages = RP;
	w.r[7].parked_pages = 0;
	set_used(&w, 7, 10, 0);
	policy_note_refill(&w.cfg, &w.st, &w.r[7], w.sys.now + 4 * SEC);
	assert_int_equal(w.r[7].refill_count, 0);
	assert_int_equal(w.r[7].backoff_until, w.sys.now + base);
}

static void test_release_by_kernel(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 6, 0, 0);
	set_parked(&w, 7, true, T0 - SEC);
	w.sys.mem_available_pages = 6 * RP;
	explicit_mem(&w);
	policy_note_parked(&w.st, &w.r[7], T0 - SEC);
	assert_int_equal(w.st.regions_parked, 1);
	assert_true(w.r[7].ours);

	/* The shrinker took it back: that was pressure, and a ping-pong. */
	w.r[7].state = RPM_REGION_ACTIVE;
	w.r[7].managed_pages = RP;
	w.r[7].free_pages = RP;
	policy_note_released(&w.st, &w.r[7], w.sys.now, REGIONPM_RELEASE_REASON_SHRINKER);
	assert_false(w.r[7].ours);
	assert_int_equal(w.st.regions_released, 1);
	assert_int_equal(w.r[7].refill_count, 1);
	assert_true(w.r[7].backoff_until > w.sys.now);
	decide(&w);
	assert_int_equal(count_parks(&w), 0);
	assert_true(w.st.paused_until > w.sys.now);

	/* Our own unpark is neither. */
	world_init(&w);
	set_parked(&w, 7, true, T0 - SEC);
	policy_note_released(&w.st, &w.r[7], w.sys.now, REGIONPM_RELEASE_REASON_UNPARK);
	assert_int_equal(w.r[7].refill_count, 0);
	assert_false(w.st.pressure_pending);

	/*
	 * Claimed by alloc_contig_range() (virtio-mem), or its memory going
	 * offline (which ends a hold first): a back-off, no pressure.
	 */
	for (int i = 0; i < 2; i++) {
		world_init(&w);
		set_parked(&w, 7, true, T0 - SEC);
		policy_note_released(&w.st, &w.r[7], w.sys.now,
				     i ? REGIONPM_RELEASE_REASON_HOTPLUG :
					 REGIONPM_RELEASE_REASON_RANGE_CLAIMED);
		assert_false(w.r[7].ours);
		assert_int_equal(w.r[7].refill_count, 1);
		assert_true(w.r[7].backoff_until > w.sys.now);
		assert_false(w.st.pressure_pending);
	}
}

/*
 * A region backing off is left alone until the back-off ends; no event
 * marks that time, so the converged plan names it for the next pass,
 * which then takes the region.
 */
static void test_converged_recheck_at_backoff(void **state)
{
	struct world w;
	usec_t_ until;

	(void)state;
	world_init(&w);
	for (uint32_t i = 2; i < NR - 1; i++)
		set_used(&w, i, RP, 0);
	set_used(&w, 7, 1000, 0);
	until = w.sys.now + 30 * SEC;
	w.r[7].backoff_until = until;
	decide(&w);
	assert_int_equal(count_work(&w), 0);
	assert_true(w.st.plan.converged);
	assert_int_equal(w.st.plan.recheck_at, until);

	/* The pass at that time empties it into region 1's free room. */
	w.sys.now = until;
	set_used(&w, 7, 1000, 0);	/* a fresh breakdown */
	decide(&w);
	assert_true(works(&w, 7));
	assert_false(w.st.plan.converged);
	assert_int_equal(w.st.plan.recheck_at, 0);

	/* Nothing backing off: no time to look again but IdleIntervalSec=. */
	world_init(&w);
	for (uint32_t i = 2; i < NR; i++)
		set_used(&w, i, RP, 0);
	decide(&w);
	assert_true(w.st.plan.converged);
	assert_int_equal(w.st.plan.recheck_at, 0);
	/* A back-off in the past or of a pinned region does not count. */
	w.r[6].backoff_until = w.sys.now - SEC;
	w.r[1].backoff_until = w.sys.now + 10 * SEC;	/* slab: pinned anyway */
	w.sys.now += SEC;
	decide(&w);
	assert_true(w.st.plan.converged);
	assert_int_equal(w.st.plan.recheck_at, 0);
}

/* The manager may report a compaction before refreshing the free count. */
static void test_vacated_seen_late(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 1000, 0);
	decide(&w);
	policy_note_compact(&w.st, &w.r[7], w.sys.now, 1000, 0, 0, 0);
	assert_int_equal(w.r[7].last_vacated, 0);	/* free count not updated yet */
	w.r[7].free_pages = w.r[7].managed_pages;
	w.sys.now += SEC;
	decide(&w);
	assert_int_equal(w.r[7].last_vacated, w.sys.now);
	assert_int_equal(w.st.regions_vacated, 1);
	w.sys.now += SEC;
	decide(&w);			/* counted once */
	assert_int_equal(w.st.regions_vacated, 1);
	/* So the refill right after is a ping-pong. */
	policy_note_refill(&w.cfg, &w.st, &w.r[7], w.sys.now);
	assert_int_equal(w.r[7].refill_count, 1);
	/* A region that was always empty was not vacated by us. */
	set_used(&w, 5, 0, 0);
	decide(&w);
	assert_int_equal(w.r[5].last_vacated, 0);
}

/* The same inputs give the same decisions. */
static void test_deterministic(void **state)
{
	struct world a, b;

	(void)state;
	world_init(&a);
	for (uint32_t i = 1; i < NR; i++)
		set_used(&a, i, 500 * i, 100 * i);
	set_used(&a, 2, 0, 0);
	b = a;
	decide(&a);
	decide(&b);
	assert_int_equal(a.n, b.n);
	assert_true(a.n > 0);
	assert_int_equal(memcmp(a.out, b.out, a.n * sizeof(a.out[0])), 0);
}

/* Reclaim that evicts cache while we hold memory back brings a region back. */
static void test_reclaim_unparks(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_parked(&w, 7, true, T0 - 30 * SEC);
	set_parked(&w, 6, true, T0 - 10 * SEC);
	w.sys.vmstat_valid = true;
	w.sys.refault_file = 1000;
	w.sys.pgsteal = 5000;
	w.sys.file_pages = 10000;
	decide(&w);			/* first sample: no rate yet */
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
	/* 10 s later, 100 refaults/s: below 1024/s, nothing. */
	w.sys.now += 10 * SEC;
	w.sys.refault_file += 1000;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
	/* 2000 refaults/s: the newest parked region comes back, work pauses. */
	w.sys.now += 10 * SEC;
	w.sys.refault_file += 20000;
	decide(&w);
	assert_int_equal(w.n, 1);
	assert_true(has(&w, RPM_ACT_UNPARK, 6));
	assert_true(w.st.paused_until > w.sys.now);
	/* kswapd stealing fast counts the same. */
	w.sys.now += 100 * SEC;
	w.sys.pgsteal += 200000;
	decide(&w);
	assert_true(has(&w, RPM_ACT_UNPARK, 6));
	/* Counters that went backwards (a new boot of the numbers) reset. */
	w.sys.now += 100 * SEC;
	w.sys.pgsteal = 0;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
	/* ReclaimUnparkPagesPerSec=0: never for this reason. */
	w.cfg.reclaim_unpark_pages_per_sec = 0;
	w.sys.now += 10 * SEC;
	w.sys.pgsteal += 10000000;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
}

/*
 * While the page cache grows (a fill, a copy), free memory is becoming
 * cache: nothing is parked, emptied or held until it has stopped growing
 * for PressureBackoffSec=.
 */
static void test_cache_growth_defers_parking(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 18000, 0);
	w.sys.vmstat_valid = true;
	w.sys.file_pages = 1000;
	decide(&w);			/* first reading: no growth known yet */
	assert_true(count_parks(&w) > 0);
	/* A region's worth in 2 s: growing. */
	world_init(&w);
	set_used(&w, 7, 18000, 0);
	w.sys.vmstat_valid = true;
	w.sys.file_pages = 1000;
	w.st.grow_base_when = T0 - 2 * SEC;
	w.st.grow_base = 1000;
	w.sys.file_pages += RP / 2;
	decide(&w);
	assert_int_equal(count_parks(&w), 0);
	assert_int_equal(count_work(&w), 0);
	assert_false(w.st.plan.converged);
	/* It stops growing: still nothing until the back-off has passed ... */
	w.sys.now += 10 * SEC;
	decide(&w);
	assert_int_equal(count_parks(&w), 0);
	/* ... then the spares go and region 7 is emptied. */
	w.sys.now += w.cfg.pressure_backoff_sec * SEC;
	decide(&w);
	assert_true(count_parks(&w) > 0);
	assert_true(works(&w, 7));
	/* Slow growth (an eighth of a region per 10 s) does not count. */
	world_init(&w);
	w.sys.vmstat_valid = true;
	w.sys.file_pages = 1000;
	for (int i = 0; i < 5; i++) {
		decide(&w);
		w.sys.now += 11 * SEC;
		w.sys.file_pages += RP / 8;
	}
	assert_true(count_parks(&w) > 0);
	/*
	 * Passes further apart than the window (a converged daemon sleeps):
	 * two regions in 12 s is growth all the same; a region in 60 s (a
	 * quarter per 15 s) is not.
	 */
	for (int fast = 1; fast >= 0; fast--) {
		world_init(&w);
		w.sys.vmstat_valid = true;
		w.sys.file_pages = 1000;
		decide(&w);
		w.sys.now += (fast ? 12 : 60) * SEC;
		w.sys.file_pages += fast ? 2 * RP : RP;
		decide(&w);
		if (fast) {
			assert_int_equal(count_parks(&w), 0);
			assert_int_equal(w.st.grow_rate, 2 * RP / 12);
		} else {
			assert_true(count_parks(&w) > 0);
			assert_int_equal(w.st.grow_rate, 0);
		}
	}
	/* A region we hold is given back when growth starts. */
	world_init(&w);
	w.r[6].state = RPM_REGION_HELD;
	w.r[6].ours = true;
	w.sys.vmstat_valid = true;
	w.st.grow_base_when = T0 - SEC;
	w.st.grow_base = 0;
	w.sys.file_pages = RP;
	decide(&w);
	assert_true(has(&w, RPM_ACT_UNPARK, 6));
	assert_int_equal(count_parks(&w), 0);
}

/*
 * The back-off after memory fell below the headroom ends when process
 * memory then falls a region or more (the workload freed it); it stays
 * when nothing was freed, or when reclaim took what went.
 */
static void test_headroom_pause_ends_on_free(void **state)
{
	struct world w;

	(void)state;
	for (int c = 0; c < 3; c++) {
		world_init(&w);
		for (uint32_t i = 2; i < 6; i++)
			set_used(&w, i, RP, 0);
		set_parked(&w, 7, true, T0 - 600 * SEC);
		w.sys.vmstat_valid = true;
		w.sys.anon_pages = 5 * RP;
		w.sys.pgsteal = 100;
		w.mem_explicit = true;
		w.sys.mem_free_pages = RP / 2;
		w.sys.mem_available_pages = NR * RP / 10 - 1;	/* below the headroom */
		decide(&w);
		assert_true(has(&w, RPM_ACT_UNPARK, 7));
		/* Given back; a second later the workload is smaller or not. */
		w.r[7].state = RPM_REGION_ACTIVE;
		w.r[7].managed_pages = RP;
		w.r[7].parked_pages = 0;
		w.r[7].free_pages = RP;
		w.r[7].detail.free = RP;
		w.sys.mem_total_pages += RP;
		w.sys.now += SEC;
		if (c != 1) {
			set_used(&w, 4, 0, 0);
			set_used(&w, 5, 0, 0);
			w.sys.anon_pages -= 2 * RP;
		}
		if (c == 2)
			w.sys.pgsteal += 2 * RP;	/* reclaim took it */
		w.mem_explicit = false;
		w.reclaimable = 2 * RP;
		decide(&w);
		if (c == 0)
			assert_true(count_parks(&w) > 0);
		else
			assert_int_equal(count_parks(&w), 0);
	}
}

/*
 * A region whose managed pages are all free but which holds reserved
 * pages (the breakdown says so) is not a spare: the kernel cannot park it.
 */
static void test_reserved_region_not_spare(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	w.r[7].managed_pages = RP / 2;
	w.r[7].free_pages = RP / 2;
	w.r[7].detail.free = RP / 2;
	w.r[7].detail.reserved = RP / 2;
	decide(&w);
	assert_false(has(&w, RPM_ACT_PARK, 7));
	assert_true(count_parks(&w) > 0);	/* the other spares are */
	/* Without a breakdown it is tried (the kernel's refusal backs it off). */
	w.r[7].detail.valid = false;
	decide(&w);
	assert_true(has(&w, RPM_ACT_PARK, 7));
}

/*
 * Process memory that falls a region or more below the top of a growth
 * ends the growth's hold on parking at once: the workload freed it.  A
 * smaller fall does not, nor one that reclaim took (pgsteal), nor page
 * cache going with deleted files.
 */
static void test_shrink_ends_growth_hold(void **state)
{
	struct world w;

	(void)state;
	for (int c = 0; c < 4; c++) {
		world_init(&w);
		set_used(&w, 7, 18000, 0);
		w.sys.vmstat_valid = true;
		w.sys.pgsteal = 5000;
		/* Half a region in a second (processes): growing, nothing parked. */
		w.st.grow_base_when = T0 - SEC;
		w.st.grow_base = 2 * RP;
		if (c < 3)
			w.sys.anon_pages = 2 * RP + RP / 2;
		else
			w.sys.file_pages = 2 * RP + RP / 2;	/* a file copy */
		decide(&w);
		assert_int_equal(count_parks(&w), 0);
		assert_int_equal(w.st.grow_top, c < 3 ? 2 * RP + RP / 2 : 0);
		w.sys.now += SEC;
		if (c == 0) {
			/* A region and a quarter freed by processes. */
			w.sys.anon_pages -= RP + RP / 4;
		} else if (c == 1) {
			/* Three quarters of a region: still growing. */
			w.sys.anon_pages -= 3 * RP / 4;
		} else if (c == 2) {
			/* A region and a quarter, most of it taken by reclaim. */
			w.sys.anon_pages -= RP + RP / 4;
			w.sys.pgsteal += RP;
		} else {
			/* Its files deleted, cache and all: the hold stays. */
			w.sys.file_pages -= RP + RP / 4;
		}
		decide(&w);
		if (c == 0) {
			assert_int_equal(w.st.grow_rate, 0);
			assert_true(count_parks(&w) > 0);
			assert_true(works(&w, 7));
		} else {
			assert_true(w.st.grow_rate > 0);
			assert_int_equal(count_parks(&w), 0);
		}
	}
}

/*
 * The growth rule's fixed floor is two regions but at most the headroom;
 * in this world of 8 regions the headroom (10 %) is below two regions, so
 * the tests of the two-region floor raise it, as on a machine of 20
 * regions or more.
 */
static void two_regions_below_headroom(struct world *w)
{
	w->cfg.headroom_percent = 25;
}

/*
 * The page cache grows into the last free memory: a region comes back
 * before reclaim evicts anything, the lowest parked one; with room to
 * grow into, nothing comes back.
 */
static void test_growth_unparks_ahead(void **state)
{
	struct world w;

	(void)state;
	for (int low = 1; low >= 0; low--) {
		world_init(&w);
		two_regions_below_headroom(&w);
		set_parked(&w, 5, true, 0);
		set_parked(&w, 6, true, 0);
		set_parked(&w, 7, true, 0);
		/* Regions 2-4 full of cache (low: under a region free) or 2 only. */
		set_used(&w, 2, RP, RP);
		if (low) {
			set_used(&w, 3, RP, RP);
			set_used(&w, 4, RP, RP);
		}
		w.reclaimable += 3 * RP;	/* MemAvailable stays well above the headroom */
		w.sys.vmstat_valid = true;
		w.st.grow_base_when = T0 - 2 * SEC;
		w.st.grow_base = 1000;
		w.sys.file_pages = 1000 + RP / 2;
		decide(&w);
		if (low) {
			assert_int_equal(count(&w, RPM_ACT_UNPARK), 1);
			assert_true(has(&w, RPM_ACT_UNPARK, 5));
			assert_true(w.st.plan.short_of_memory);
		} else {
			assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
		}
		assert_int_equal(count_parks(&w), 0);
	}
}

/*
 * Anonymous memory that grows into the last free memory (a database
 * sizing its buffers) brings a region back as page cache does; and the
 * plan leaves the manager a mark below: two regions of MemFree, while
 * memory is parked and MemFree is above it, none otherwise.
 */
static void test_anon_growth_and_low_mark(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	two_regions_below_headroom(&w);
	set_parked(&w, 5, true, 0);
	set_parked(&w, 6, true, 0);
	set_used(&w, 2, RP, 0);
	w.sys.vmstat_valid = true;
	decide(&w);
	assert_true(w.sys.mem_free_pages >= 2 * RP);
	assert_int_equal(w.st.low_free_pages, 2 * RP);

	/* Anonymous memory grew by half a region in 2 s, under a region free. */
	world_init(&w);
	two_regions_below_headroom(&w);
	set_parked(&w, 5, true, 0);
	set_parked(&w, 6, true, 0);
	set_used(&w, 2, RP, 0);
	set_used(&w, 3, RP, 0);
	set_used(&w, 4, RP, 0);
	w.reclaimable += 3 * RP;	/* MemAvailable stays well above the headroom */
	w.sys.vmstat_valid = true;
	w.st.grow_base_when = T0 - 2 * SEC;
	w.st.grow_base = 1000;
	w.sys.file_pages = 1000;
	w.sys.anon_pages = RP / 2;
	decide(&w);
	assert_true(w.sys.mem_free_pages < 2 * RP);
	assert_int_equal(w.st.low_free_pages, 0);	/* already below */
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 1);
	assert_true(has(&w, RPM_ACT_UNPARK, 5));
	assert_int_equal(count_parks(&w), 0);

	/* Nothing parked: no mark. */
	world_init(&w);
	set_used(&w, 2, RP, 0);
	w.sys.vmstat_valid = true;
	decide(&w);
	assert_int_equal(w.st.low_free_pages, 0);
}

/*
 * Where two regions are more than the headroom (here 8 regions, headroom
 * 10 %: 26,214 pages), a slow growth keeps the headroom free, not two
 * regions: free memory above it is what the park rule leaves after a
 * park, and a region given back there is parked again by the next pass
 * (vmhost at 2 GiB).  Below it, a region comes back as before.
 */
static void test_growth_floor_within_headroom(void **state)
{
	const uint64_t headroom = NR * RP / 10;
	struct world w;

	(void)state;
	for (int below = 0; below <= 1; below++) {
		world_init(&w);
		set_parked(&w, 5, true, 0);
		set_parked(&w, 6, true, 0);
		set_parked(&w, 7, true, 0);
		set_used(&w, 2, RP, 0);
		set_used(&w, 3, RP, 0);
		set_used(&w, 4, RP, 0);
		if (below) {
			/* Region 1 (1,000 slab pages) fills to 20,000 free. */
			w.r[1].free_pages = w.r[1].detail.free = 20000;
			w.r[1].detail.anon = RP - 1000 - 20000;
		}
		w.sys.vmstat_valid = true;
		/* A third of a region in 8 s: 1,365 pages/s, 8 s of it 10,922. */
		w.st.grow_base_when = T0 - 8 * SEC;
		w.st.grow_base = 1000;
		w.sys.anon_pages = 1000 + RP / 3;
		decide(&w);
		assert_true(w.st.grow_rate > 0);
		assert_true(w.sys.mem_available_pages > headroom);
		if (!below) {
			/* 31,768 free: between the headroom and two regions. */
			assert_true(w.sys.mem_free_pages > headroom);
			assert_true(w.sys.mem_free_pages < 2 * RP);
			assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
			assert_int_equal(w.st.low_free_pages, headroom);
		} else {
			assert_int_equal(count(&w, RPM_ACT_UNPARK), 1);
			assert_true(has(&w, RPM_ACT_UNPARK, 5));
			assert_int_equal(w.st.low_free_pages, 0);	/* already below */
		}
		assert_int_equal(count_parks(&w), 0);
	}
}

/*
 * Memory in use that grows fast (a database fill at 8 GiB: 16,000 pages a
 * second) would eat two free regions before the next pass: the floor is
 * what it grows in RPM_POLICY_GROW_LEAD_SEC, at most half of memory and
 * at most what it grew since it began, and that much comes back at once;
 * the manager's low mark follows it.  The rate is forgotten when the
 * growth ends.
 */
static void test_fast_growth_unparks_its_lead(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	two_regions_below_headroom(&w);
	set_parked(&w, 5, true, 0);
	set_parked(&w, 6, true, 0);
	set_parked(&w, 7, true, 0);
	set_used(&w, 2, RP, RP);
	set_used(&w, 3, RP, RP);
	set_used(&w, 4, RP, RP);
	w.reclaimable += 3 * RP;	/* MemAvailable stays well above the headroom */
	w.sys.vmstat_valid = true;
	/* Three quarters of a region in one second: 24,576 pages/s. */
	w.st.grow_base_when = T0 - SEC;
	w.st.grow_base = 1000;
	w.sys.file_pages = 1000 + 3 * RP / 4;
	decide(&w);
	assert_int_equal(w.st.grow_rate, 3 * RP / 4);
	assert_int_equal(w.st.grow_start, 1000);
	/*
	 * 8 s of it would be 6 regions (capped at half of memory, 2.5 of 5
	 * active), but it grew by 3/4 of a region so far: under the fixed
	 * floor of two regions, so one region comes back, as for a slow one.
	 */
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 1);
	assert_int_equal(count_parks(&w), 0);
	/*
	 * It goes on at that rate: two seconds later it grew by 2.25
	 * regions, that is the lead (73,728 pages), and with a region more
	 * (MemFree 31,768) three regions come back at once.
	 */
	w.sys.now += 2 * SEC;
	w.sys.file_pages += 3 * RP / 2;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 3);
	assert_true(has(&w, RPM_ACT_UNPARK, 5));
	assert_true(has(&w, RPM_ACT_UNPARK, 6));
	assert_true(has(&w, RPM_ACT_UNPARK, 7));
	assert_int_equal(count_parks(&w), 0);

	/* With room: no unpark, but the mark is the lead, not two regions. */
	world_init(&w);
	two_regions_below_headroom(&w);
	set_parked(&w, 6, true, 0);
	set_parked(&w, 7, true, 0);
	w.reclaimable += 2 * RP;
	w.sys.vmstat_valid = true;
	w.st.grow_base_when = T0 - 4 * SEC;
	w.st.grow_base = 1000;
	w.sys.file_pages = 1000 + RP;		/* 8,192 pages/s */
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
	/* 8 s of it are 2 regions, but it grew by one: the fixed floor. */
	assert_int_equal(w.st.low_free_pages, 2 * RP);
	w.sys.now += 2 * SEC;
	w.sys.file_pages += 5 * RP / 8;		/* 10,240 pages/s */
	decide(&w);
	assert_int_equal(w.st.grow_rate, 5 * RP / 16);	/* 10,240 pages/s */
	assert_int_equal(w.st.low_free_pages, 2 * RP);	/* grew by 1.625 regions */
	/*
	 * A slower burst in the same growth does not lower the rate; the lead
	 * is what it grew since it began: 2.125 regions, under 8 s of the
	 * fastest rate (2.5).
	 */
	w.sys.now += 8 * SEC;
	w.sys.file_pages += RP / 2;		/* 2,048 pages/s over 8 s */
	decide(&w);
	assert_int_equal(w.st.grow_rate, 5 * RP / 16);
	assert_int_equal(w.st.low_free_pages, 17 * RP / 8);
	/* The growth ends: back to two regions. */
	w.sys.now += (w.cfg.pressure_backoff_sec + 1) * SEC;
	decide(&w);
	assert_int_equal(w.st.grow_rate, 0);
	assert_int_equal(w.st.low_free_pages, 2 * RP);
}

/*
 * A burst the manager's reclaim watch saw between two passes a minute
 * apart brings memory back although the minute's average is low.
 */
static void test_reclaim_watch_burst(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_parked(&w, 7, true, T0 - 30 * SEC);
	w.sys.vmstat_valid = true;
	w.sys.pgsteal = 1000;
	decide(&w);
	/* 60 s later, 20,000 pages stolen: 333/s on average, below 1024/s. */
	w.sys.now += 60 * SEC;
	w.sys.pgsteal += 20000;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
	/* The same, but the watch saw them go within 2 s. */
	w.sys.now += 60 * SEC;
	w.sys.pgsteal += 20000;
	w.sys.reclaim_watch_pages = 20000;
	decide(&w);
	assert_true(has(&w, RPM_ACT_UNPARK, 7));
	/* Not ours to give: the watch changes nothing. */
	world_init(&w);
	set_parked(&w, 7, false, T0 - 30 * SEC);
	w.sys.vmstat_valid = true;
	decide(&w);
	w.sys.now += SEC;
	w.sys.reclaim_watch_pages = 20000;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
}

/* Region 7 parked by us, vmstat read, the first pass (no rate yet) done. */
static void parked_and_sampled(struct world *w)
{
	world_init(w);
	set_parked(w, 7, true, T0 - 30 * SEC);
	w->sys.vmstat_valid = true;
	w->sys.pgsteal = 1000;
	decide(w);
}

/*
 * kswapd stealing room for pages we just moved is the cost of our own
 * consolidation: no region comes back for it.  Steals beyond what we
 * moved, steals once the credit has expired, and refaults still count.
 */
static void test_reclaim_after_our_moves(void **state)
{
	struct world w;

	(void)state;
	parked_and_sampled(&w);
	/* We moved 20,000 pages; kswapd stole 18,000 in the next 2 s. */
	w.st.total_migrated += 20000;
	w.sys.now += 2 * SEC;
	w.sys.pgsteal += 18000;
	w.sys.reclaim_watch_pages = 18000;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
	/* The 2,000 left of the credit cover 2,000 more, not 20,000. */
	w.sys.now += 2 * SEC;
	w.sys.pgsteal += 20000;
	w.sys.reclaim_watch_pages = 20000;
	decide(&w);
	assert_true(has(&w, RPM_ACT_UNPARK, 7));

	/* Refaults are demand whatever we moved. */
	parked_and_sampled(&w);
	w.st.total_migrated += 50000;
	w.sys.now += 2 * SEC;
	w.sys.refault_file += 10000;
	decide(&w);
	assert_true(has(&w, RPM_ACT_UNPARK, 7));

	/* The credit expires: steals long after the moves count. */
	parked_and_sampled(&w);
	w.st.total_migrated += 50000;
	w.sys.now += SEC;
	decide(&w);			/* the moves are seen here */
	w.sys.now += (RPM_POLICY_MOVE_CREDIT_SEC + 1) * SEC;
	decide(&w);			/* nothing moved since: expired */
	w.sys.now += 2 * SEC;
	w.sys.pgsteal += 20000;
	decide(&w);
	assert_true(has(&w, RPM_ACT_UNPARK, 7));
}

/* The manager's part: regions given back are active and free again. */
static void apply_unparks(struct world *w)
{
	for (size_t i = 0; i < w->n; i++) {
		struct rpm_region *r = &w->r[w->out[i].region];

		if (w->out[i].kind != RPM_ACT_UNPARK || r->state != RPM_REGION_PARKED)
			continue;
		r->state = RPM_REGION_ACTIVE;
		r->managed_pages = r->parked_pages;
		r->parked_pages = 0;
		r->free_pages = r->managed_pages;
		r->detail.free = r->free_pages;
		w->sys.mem_total_pages += r->managed_pages;
	}
}

/*
 * One burst raises several signals within seconds: the kernel's shrinker
 * takes a region back, the reclaim watch counts the evictions, a PSI
 * trigger fires.  Each is answered once; a pass that gives nothing (the
 * kernel's own release was enough) is no give-back, and one whose memory
 * stayed free does not double the next (vmhost at 8 GiB: 2, 4 and 11
 * regions for a growth of three).
 */
static void test_burst_signals_do_not_ramp(void **state)
{
	struct world w;
	usec_t_ last;

	(void)state;
	world_init(&w);
	for (uint32_t i = 3; i < NR; i++)
		set_parked(&w, i, true, T0 - (20 - i) * SEC);
	set_used(&w, 2, RP, 0);
	w.sys.vmstat_valid = true;
	w.sys.pgsteal = 1000;
	decide(&w);			/* first sample: no rate yet */
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
	last = w.st.last_giveback;

	/* The shrinker released a region, nothing else is short: no give-back. */
	w.sys.now += SEC;
	w.st.pressure_pending = true;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
	assert_int_equal(w.st.last_giveback, last);
	assert_int_equal(w.st.giveback_streak, 0);

	/* Then the evictions of that burst, seen with a second release. */
	w.sys.now += SEC;
	w.sys.pgsteal += 2407;
	w.st.pressure_pending = true;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 1);
	apply_unparks(&w);
	/* Counted there: the next pass does not give back for them again. */
	w.sys.now += SEC / 5;
	w.sys.pgsteal += 10;
	w.st.paused_until = 0;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);

	/* A PSI trigger: at least one region, not two (that memory is free). */
	w.sys.now += SEC / 5;
	w.sys.psi_event = true;
	decide(&w);
	w.sys.psi_event = false;
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 1);
	assert_int_equal(w.st.giveback_streak, 0);
	apply_unparks(&w);

	/* More evictions while the last region is still free: one region. */
	w.sys.now += SEC;
	w.sys.pgsteal += 5000;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 1);
	assert_int_equal(w.st.giveback_streak, 0);

	/*
	 * PSI that goes on while what comes back is used at once (here: the
	 * regions never show up free): one region, then two, then four.
	 */
	world_init(&w);
	for (uint32_t i = 1; i < NR; i++)
		set_parked(&w, i, true, T0 - (20 - i) * SEC);
	for (unsigned k = 0; k < 3; k++) {
		w.sys.now += SEC / 5;
		w.sys.psi_event = true;
		decide(&w);
		assert_int_equal(count(&w, RPM_ACT_UNPARK), 1u << k);
	}
	/* Those four stay free: the next one starts over from one region. */
	apply_unparks(&w);
	w.sys.now += SEC / 5;
	w.sys.psi_event = true;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 1);
	assert_int_equal(w.st.giveback_streak, 0);

	/*
	 * Below the headroom with evictions in the same pass: the pause is
	 * the evictions' (it does not end when processes free memory).
	 */
	world_init(&w);
	for (uint32_t i = 3; i < NR; i++)
		set_parked(&w, i, true, T0 - (20 - i) * SEC);
	w.sys.vmstat_valid = true;
	w.sys.pgsteal = 1000;
	w.sys.mem_available_pages = RP / 2;
	explicit_mem(&w);
	decide(&w);			/* first sample: below the headroom */
	assert_true(w.st.pause_for_headroom);
	w.sys.now += SEC;
	w.sys.pgsteal += 5000;
	decide(&w);
	assert_true(count(&w, RPM_ACT_UNPARK) >= 1);
	assert_false(w.st.pause_for_headroom);
}

/*
 * An unpark that fails (or a dry run) gives nothing back: MemFree does not
 * rise, and that must not read as a give-back used at once, which would
 * double the next one.  Once the unparks succeed and are used, the ramp
 * works as before.
 */
static void test_failed_unparks_do_not_ramp(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	for (uint32_t i = 1; i < NR; i++)
		set_parked(&w, i, true, T0 - (20 - i) * SEC);
	w.unpark_fails = true;
	for (unsigned k = 0; k < 3; k++) {
		w.sys.now += SEC / 5;
		w.sys.psi_event = true;
		decide(&w);
		assert_int_equal(count(&w, RPM_ACT_UNPARK), 1);
		assert_int_equal(w.st.giveback_streak, 0);
	}
	/* They succeed now, and what comes back is used at once: 1, 2, 4. */
	w.unpark_fails = false;
	w.sys.now += SEC / 5;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 1);
	for (unsigned k = 1; k < 3; k++) {
		w.sys.now += SEC / 5;
		w.sys.psi_event = true;
		decide(&w);
		assert_int_equal(count(&w, RPM_ACT_UNPARK), 1u << k);
	}
}

/*
 * Two bursts in one growth (the hold after a growth lasts
 * PressureBackoffSec=): the second one's lead is what it grew, not what
 * both grew; within one burst, steps a few seconds apart add up.
 */
static void test_growth_lead_per_burst(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	w.sys.vmstat_valid = true;
	w.sys.file_pages = 1000;
	decide(&w);
	w.sys.now += SEC;
	w.sys.file_pages += RP;			/* a region in a second */
	decide(&w);
	assert_int_equal(w.st.grow_start, 1000);
	w.sys.now += 2 * SEC;
	w.sys.file_pages += RP;			/* it goes on */
	decide(&w);
	assert_int_equal(w.st.grow_start, 1000);
	/* 15 s later, still within the hold: a new burst of half a region. */
	w.sys.now += 15 * SEC;
	decide(&w);
	w.sys.now += SEC;
	w.sys.file_pages += RP / 2;
	decide(&w);
	assert_true(w.sys.now < w.st.grow_until);
	assert_int_equal(w.st.grow_start, 1000 + 2 * RP);
	/* Use that falls (files deleted) lowers where it began. */
	w.sys.now += SEC;
	w.sys.file_pages = 500;
	decide(&w);
	assert_int_equal(w.st.grow_start, 500);
}

/*
 * Demand that comes back a few seconds after each give-back is growth:
 * each give-back gives twice as much as the last, a quiet spell resets.
 */
static void test_growth_ramp(void **state)
{
	struct world w;
	uint32_t i;

	(void)state;
	world_init(&w);
	for (i = 2; i < NR; i++)
		set_parked(&w, i, true, T0 - (20 - i) * SEC);
	w.sys.vmstat_valid = true;
	w.sys.pgsteal = 1000;
	decide(&w);			/* first sample: no rate yet */
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 0);
	/* kswapd steals 5000 pages/s: one region back, 2 s later two, then four. */
	w.sys.now += 2 * SEC;
	w.sys.pgsteal += 10000;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 1);
	assert_true(w.st.plan.short_of_memory);
	w.sys.now += 2 * SEC;
	w.sys.pgsteal += 10000;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 2);
	w.sys.now += 2 * SEC;
	w.sys.pgsteal += 10000;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 4);
	/* Below the headroom counts the same, and the doubling goes on. */
	world_init(&w);
	for (i = 2; i < NR; i++)
		set_parked(&w, i, true, T0 - (20 - i) * SEC);
	w.sys.mem_available_pages = NR * RP / 10 - 100;
	explicit_mem(&w);
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 1);
	w.sys.now += SEC / 5;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 2);
	/* A quiet spell: back to one region. */
	w.sys.now += (RPM_POLICY_GROWTH_WINDOW_SEC + 1) * SEC;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_UNPARK), 1);
	assert_int_equal(w.st.giveback_streak, 0);
	/* Short of memory with nothing to give: no streak builds up. */
	world_init(&w);
	w.sys.mem_available_pages = NR * RP / 10 - 100;
	explicit_mem(&w);
	for (i = 0; i < 5; i++) {
		w.sys.now += SEC;
		decide(&w);
	}
	assert_int_equal(w.st.giveback_streak, 0);
	assert_false(w.st.plan.short_of_memory);
}

/*
 * Cache evicted by reclaim keeps room in the keep set for CacheHistorySec=;
 * cache that went because its files were deleted does not.
 */
static void test_cache_room(void **state)
{
	struct world w;
	uint64_t need0;

	(void)state;
	world_init(&w);
	w.cfg.reclaim_unpark_pages_per_sec = 0;	/* only the room, here */
	w.sys.vmstat_valid = true;
	w.sys.file_pages = 3 * RP;
	decide(&w);
	need0 = w.st.plan.need_pages;
	assert_int_equal(w.st.plan.cache_reserve, 0);
	/* Files deleted: the cache shrinks with no reclaim; no room kept. */
	w.sys.now += SEC;
	w.sys.file_pages = RP;
	decide(&w);
	assert_int_equal(w.st.plan.cache_reserve, 0);
	/* Reclaim evicts 20000 pages of it: that much room is kept. */
	w.sys.now += SEC;
	w.sys.pgsteal += 20000;
	w.sys.file_pages = RP - 20000;
	decide(&w);
	assert_int_equal(w.st.plan.cache_reserve, 20000);
	assert_true(w.st.plan.need_pages >= need0 + 20000 - 2048);
	/* The cache comes back: the room is used, less is kept. */
	w.sys.now += SEC;
	w.sys.file_pages = RP - 5000;
	decide(&w);
	assert_int_equal(w.st.plan.cache_reserve, 5000);
	/* After CacheHistorySec= it is forgotten. */
	w.sys.now += (w.cfg.cache_history_sec + 1) * SEC;
	decide(&w);
	assert_int_equal(w.st.plan.cache_reserve, 0);
}

/* Pinned regions are rescanned ever less often, not every minute forever. */
static void test_pinned_rescan_backoff(void **state)
{
	struct world w;
	usec_t_ age = (RPM_POLICY_DETAIL_MAX_AGE_SEC + 1) * SEC;

	(void)state;
	world_init(&w);
	w.sys.now += age;
	decide(&w);
	assert_true(has(&w, RPM_ACT_SCAN, 1));
	/* The scan found slab again. */
	w.r[1].detail.when = w.sys.now;
	policy_note_scan(&w.r[1]);
	assert_int_equal(w.r[1].pinned_scans, 1);
	w.sys.now += age;
	decide(&w);
	assert_false(has(&w, RPM_ACT_SCAN, 1));	/* 120 s now */
	w.sys.now += age;
	decide(&w);
	assert_true(has(&w, RPM_ACT_SCAN, 1));
	for (int i = 0; i < 20; i++)
		policy_note_scan(&w.r[1]);
	w.r[1].detail.when = w.sys.now;
	w.sys.now += (RPM_POLICY_DETAIL_MAX_AGE_SEC << RPM_POLICY_MAX_RESCAN_SHIFT) * SEC;
	decide(&w);
	assert_false(has(&w, RPM_ACT_SCAN, 1));
	w.sys.now += SEC;
	decide(&w);
	assert_true(has(&w, RPM_ACT_SCAN, 1));	/* capped at about an hour */
	/* Slab gone: back to normal. */
	w.r[1].detail.slab = 0;
	policy_note_scan(&w.r[1]);
	assert_int_equal(w.r[1].pinned_scans, 0);
}

/* With holds, targets are held before they are worked on; kept ones let go. */
static void test_holds(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 6, 12000, 0);
	set_used(&w, 7, 8000, 0);
	w.sys.can_hold = true;
	w.sys.hold_timeout = 60 * SEC;
	decide(&w);
	assert_true(has(&w, RPM_ACT_HOLD, 6));
	assert_true(has(&w, RPM_ACT_HOLD, 7));
	/* The manager held them. */
	for (uint32_t i = 6; i < 8; i++) {
		w.r[i].state = RPM_REGION_HELD;
		w.r[i].ours = true;
		w.r[i].hold_since = w.sys.now;
	}
	w.sys.now += SEC;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_HOLD), 0);
	assert_true(works(&w, 7) || works(&w, 6));
	/* A third of the timeout later: renewed. */
	w.sys.now += 20 * SEC;
	decide(&w);
	assert_true(has(&w, RPM_ACT_HOLD, 6));
	/*
	 * Region 7 nearly emptied, its park refused (backing off): the hold
	 * stays and is renewed, so the other target's moves cannot fill it;
	 * a region that turns out to hold slab loses its hold.
	 */
	w.r[7].free_pages = RP - 1;
	w.r[7].detail.free = RP - 1;
	w.r[7].detail.anon = 0;
	w.r[7].detail.when = w.sys.now;
	w.r[7].backoff_until = w.sys.now + 30 * SEC;
	w.r[7].hold_since = w.sys.now - 21 * SEC;
	decide(&w);
	assert_false(has(&w, RPM_ACT_UNPARK, 7));
	assert_true(has(&w, RPM_ACT_HOLD, 7));
	w.r[7].hold_since = w.sys.now;
	w.r[7].detail.slab = 1;
	decide(&w);
	assert_true(has(&w, RPM_ACT_UNPARK, 7));
	w.r[7].detail.slab = 0;
	/* Memory short: holds go first, before parked regions. */
	set_parked(&w, 5, true, T0);
	w.mem_explicit = true;
	w.sys.mem_free_pages = w.sys.mem_available_pages = NR * RP / 20;
	decide(&w);
	assert_int_equal(w.out[0].kind, RPM_ACT_UNPARK);
	assert_true(w.out[0].region == 6 || w.out[0].region == 7);
}

/*
 * A target whose breakdown is still to be read is held in the same pass as
 * the others, before any target is emptied: the moves out of the cheaper
 * targets cannot land in its free pages and move a second time.
 */
static void test_holds_unscanned_targets(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 500, 0);		/* cheapest: emptied first */
	set_used(&w, 6, 12000, 0);
	w.r[6].detail.valid = false;		/* not scanned yet */
	set_used(&w, 5, 12000, 0);
	w.r[5].detail.valid = false;		/* ... and with reserved pages */
	w.r[5].managed_pages -= 3000;
	w.r[5].free_pages -= 3000;
	w.sys.can_hold = true;
	w.sys.hold_timeout = 60 * SEC;
	decide(&w);
	assert_true(has(&w, RPM_ACT_SCAN, 6));
	assert_true(has(&w, RPM_ACT_HOLD, 6));
	assert_true(has(&w, RPM_ACT_SCAN, 5));
	assert_false(has(&w, RPM_ACT_HOLD, 5));
	assert_true(works(&w, 7));
	assert_false(works(&w, 6));
	for (size_t i = 0; i < w.n; i++) {
		if (w.out[i].region == 7 && (w.out[i].kind == RPM_ACT_COMPACT ||
					     w.out[i].kind == RPM_ACT_PARK))
			break;
		if (w.out[i].kind == RPM_ACT_HOLD && w.out[i].region == 6)
			goto held_first;
	}
	fail_msg("region 6 must be held before region 7 is emptied");
held_first:
	/* Its scan finds slab: the hold ends at the next pass. */
	w.r[6].state = RPM_REGION_HELD;
	w.r[6].ours = true;
	w.r[6].hold_since = w.sys.now;
	w.r[6].detail.valid = true;
	w.r[6].detail.when = w.sys.now;
	w.r[6].detail.slab = 10;
	w.sys.now += SEC;
	decide(&w);
	assert_true(has(&w, RPM_ACT_UNPARK, 6));
}

/*
 * A region that waits for its back-off to end (given back for growth) and
 * is mostly empty is held while the targets' pages move, so that they do
 * not land in it and move again when it is emptied after its back-off;
 * held, its free pages are no room for the plan.  Once the back-off ends
 * it is a target like the others, its hold kept.
 */
static void test_holds_backing_off_regions(void **state)
{
	struct world w;
	bool held_first = false;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 6000, 0);		/* cheap to empty, but backing off */
	w.r[7].backoff_until = w.sys.now + 3 * SEC;
	set_used(&w, 6, 9000, 0);		/* the target */
	w.sys.can_hold = true;
	w.sys.hold_timeout = 60 * SEC;
	decide(&w);
	assert_true(has(&w, RPM_ACT_HOLD, 7));
	assert_false(works(&w, 7));
	assert_true(works(&w, 6));
	for (size_t i = 0; i < w.n; i++) {
		if (w.out[i].region == 6 && (w.out[i].kind == RPM_ACT_COMPACT ||
					     w.out[i].kind == RPM_ACT_PARK))
			break;
		if (w.out[i].kind == RPM_ACT_HOLD && w.out[i].region == 7)
			held_first = true;
	}
	assert_true(held_first);
	/* Nothing to move: no hold for it. */
	world_init(&w);
	set_used(&w, 7, 6000, 0);
	w.r[7].backoff_until = w.sys.now + 3 * SEC;
	w.sys.can_hold = true;
	w.sys.hold_timeout = 60 * SEC;
	for (uint32_t i = 2; i < 7; i++)
		set_used(&w, i, RP - 100, 0);	/* full: no target */
	decide(&w);
	assert_false(has(&w, RPM_ACT_HOLD, 7));
	/* Held, and its back-off over: emptied, the hold kept. */
	world_init(&w);
	set_used(&w, 7, 6000, 0);
	w.r[7].state = RPM_REGION_HELD;
	w.r[7].ours = true;
	w.r[7].hold_since = w.sys.now;
	w.sys.can_hold = true;
	w.sys.hold_timeout = 60 * SEC;
	decide(&w);
	assert_false(has(&w, RPM_ACT_UNPARK, 7));
	assert_true(works(&w, 7));
}

/* One target is planned to its end (calls, then a compacting park) before the next. */
static void test_one_target_at_a_time(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 6, 14000, 0);
	set_used(&w, 7, 12000, 0);
	w.cfg.budget_pages_per_sec = 100000;
	w.cfg.budget_pages_per_region = 8192;
	w.st.last_pass = T0 - 10 * SEC;	/* a full bucket */
	w.reclaimable = 3 * RP;		/* room for both */
	w.cfg.headroom_percent = 4;	/* and a zone floor that leaves room for both */
	decide(&w);
	/* 7 (cheaper): 8192, then the park takes the last 3808 + margin. */
	{
		const struct rpm_action *a = w.out;
		size_t k = 0;

		while (k < w.n && a[k].kind == RPM_ACT_PARK && !a[k].compact_first)
			k++;		/* spare regions parked first */
		assert_int_equal(a[k].kind, RPM_ACT_COMPACT);
		assert_int_equal(a[k].region, 7);
		assert_int_equal(a[k + 1].kind, RPM_ACT_PARK);
		assert_true(a[k + 1].compact_first);
		assert_int_equal(a[k + 1].region, 7);
		assert_int_equal(a[k + 2].region, 6);
		assert_int_equal(a[k + 2].kind, RPM_ACT_COMPACT);
	}
	/* A bucket that runs dry stops after the region it was working on. */
	world_init(&w);
	set_used(&w, 6, 14000, 0);
	set_used(&w, 7, 12000, 0);
	w.cfg.budget_pages_per_sec = 10000;
	w.cfg.budget_pages_per_region = 8192;
	decide(&w);
	assert_true(works(&w, 7));
	assert_false(works(&w, 6));
}

/* Regions 0-3 on node 0, 4-7 on node 1, all ZONE_NORMAL. */
static void two_nodes(struct world *w)
{
	for (uint32_t i = 0; i < NR; i++) {
		w->r[i].node = i < 4 ? 0 : 1;
		snprintf(w->r[i].zones, sizeof(w->r[i].zones), "Normal");
	}
}

/* Regions 0-3 in DMA32, 4-7 in ZONE_MOVABLE (movablecore=50%). */
static void movable_half(struct world *w)
{
	for (uint32_t i = 0; i < NR; i++)
		snprintf(w->r[i].zones, sizeof(w->r[i].zones), "%s", i < 4 ? "DMA32" : "Movable");
}

/* Parking leaves every zone some free pages, not only memory as a whole. */
static void test_zone_floor(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	two_nodes(&w);
	set_used(&w, 4, RP, 0);		/* node 1: 4 full, 5-7 empty */
	w.reclaimable = 4 * RP;
	decide(&w);
	/* Node 0's spares 2 and 3 go; of node 1's three, one stays free. */
	assert_true(has(&w, RPM_ACT_PARK, 2) && has(&w, RPM_ACT_PARK, 3));
	assert_int_equal(count_parks(&w), 4);
	assert_false(has(&w, RPM_ACT_PARK, 5));

	/*
	 * A target whose park the zone's floor would refuse once it is empty
	 * is not emptied: an emptied region left open fills again.
	 */
	world_init(&w);
	two_nodes(&w);
	set_used(&w, 4, RP, 0);
	set_used(&w, 5, 20000, 0);	/* node 1: 4 full, 5 part, 6-7 empty */
	w.reclaimable = 4 * RP;
	decide(&w);
	assert_true(has(&w, RPM_ACT_PARK, 6) && has(&w, RPM_ACT_PARK, 7));
	assert_false(works(&w, 5));
	assert_false(has(&w, RPM_ACT_HOLD, 5));

	/*
	 * ZONE_MOVABLE counts with the zones below it, as the kernel's cap
	 * does: all its spares go while DMA32 has room (before, one stayed).
	 */
	world_init(&w);
	movable_half(&w);
	set_used(&w, 4, RP, 0);		/* Movable: 4 full, 5-7 empty */
	w.reclaimable = 4 * RP;
	decide(&w);
	assert_true(has(&w, RPM_ACT_PARK, 2) && has(&w, RPM_ACT_PARK, 3));
	assert_true(has(&w, RPM_ACT_PARK, 5) && has(&w, RPM_ACT_PARK, 6) &&
		    has(&w, RPM_ACT_PARK, 7));
	assert_int_equal(count_parks(&w), 5);

	/*
	 * Moved pages the zone has no room for spill into the node's lower
	 * zones (a full ZONE_MOVABLE into DMA32): the target still goes.
	 */
	world_init(&w);
	movable_half(&w);
	set_used(&w, 4, RP, 0);
	set_used(&w, 5, RP - 1000, 0);
	set_used(&w, 6, 20000, 0);	/* Movable: 1,000 + 12,768 free besides 7 */
	w.reclaimable = 4 * RP;
	decide(&w);
	assert_true(has(&w, RPM_ACT_PARK, 7));
	assert_true(works(&w, 6));

	/* All in one zone: nothing holds the last spare back but the headroom. */
	world_init(&w);
	set_used(&w, 4, RP, 0);
	w.reclaimable = 4 * RP;
	decide(&w);
	assert_int_equal(count_parks(&w), 5);
}

/*
 * The kernel parks or holds at most max_parked_pct of a kernel zone, and
 * of ZONE_MOVABLE with the zones below it.  The plan keeps, in each zone
 * over the cap, the regions dearest to empty, and counts them as kept
 * capacity: a region elsewhere it would have kept is emptied instead, and
 * no region is emptied that the kernel would not let it park.
 */
static void capped_world(struct world *w, unsigned pct)
{
	world_init(w);
	movable_half(w);		/* 0-3 DMA32, 4-7 Movable */
	set_used(w, 0, 512, 0);
	set_used(w, 1, 700, 0);		/* no slab: nothing pinned */
	set_used(w, 2, 600, 0);
	set_used(w, 4, RP - 1000, 0);
	set_used(w, 5, 20000, 0);
	set_used(w, 6, 10000, 0);	/* 3 and 7 empty */
	w->reclaimable = 4 * RP;
	w->sys.max_parked_pct = pct;
}

static void test_max_parked_pct(void **state)
{
	struct world w;

	(void)state;
	/*
	 * No cap known: DMA32 keeps only the region its own pages need (they
	 * cannot move into ZONE_MOVABLE), its dearest (1).
	 */
	capped_world(&w, 0);
	decide(&w);
	assert_int_equal(w.st.plan.capped, 0);
	assert_int_equal(w.st.plan.low_kept, 1);
	assert_int_equal(w.r[1].role, RPM_ROLE_KEEP);
	assert_int_equal(w.r[0].role, RPM_ROLE_TARGET);
	assert_int_equal(w.r[2].role, RPM_ROLE_TARGET);
	/* The capacity that frees lets the plan empty 6, which it kept before. */
	assert_int_equal(w.r[6].role, RPM_ROLE_TARGET);

	/*
	 * 75 %: DMA32 keeps one region, its dearest (1); the node keeps two
	 * of eight, 1 and the fullest (4).  That capacity lets 6 go, which
	 * the plan kept before: one region more empty in the end.
	 */
	capped_world(&w, 75);
	decide(&w);
	assert_int_equal(w.st.plan.capped, 2);
	assert_int_equal(w.r[1].role, RPM_ROLE_KEEP);
	assert_int_equal(w.r[4].role, RPM_ROLE_KEEP);
	assert_int_equal(w.r[5].role, RPM_ROLE_KEEP);
	assert_int_equal(w.r[6].role, RPM_ROLE_TARGET);
	assert_int_equal(w.r[0].role, RPM_ROLE_TARGET);
	assert_int_equal(w.r[2].role, RPM_ROLE_TARGET);
	assert_false(works(&w, 1));
	assert_false(has(&w, RPM_ACT_HOLD, 1));

	/*
	 * 50 %: four of eight may go (two of DMA32): 0, 3, 6 and 7.  Region 5
	 * (20,000 pages) is not emptied for a park the kernel would refuse.
	 */
	capped_world(&w, 50);
	decide(&w);
	assert_int_equal(w.r[4].role, RPM_ROLE_KEEP);
	assert_int_equal(w.r[5].role, RPM_ROLE_KEEP);
	assert_false(works(&w, 5));
	{
		unsigned out = 0, dma32_out = 0;

		for (uint32_t i = 0; i < NR; i++) {
			bool goes = w.r[i].role == RPM_ROLE_TARGET || w.r[i].role == RPM_ROLE_SPARE;

			out += goes;
			dma32_out += goes && i < 4;
		}
		assert_true(out <= 4);
		assert_true(dma32_out <= 2);
	}

	/* A region parked already counts against its zone's cap. */
	capped_world(&w, 75);
	set_parked(&w, 3, true, T0 - 100 * SEC);
	decide(&w);
	{
		unsigned dma32_out = 1;	/* 3 */

		for (uint32_t i = 0; i < 3; i++)
			dma32_out += w.r[i].role == RPM_ROLE_TARGET || w.r[i].role == RPM_ROLE_SPARE;
		assert_true(dma32_out <= 3);
	}
	assert_int_equal(w.r[1].role, RPM_ROLE_KEEP);
}

/*
 * The pages of the zones below ZONE_MOVABLE move only within them: the
 * keep set holds them there, and a target there is emptied only into free
 * memory above those zones' marks.  daemon-movable at 2 GiB: the plan
 * took a DMA32 region (9,164 pages of cache) for the cheapest target, the
 * kernel refused every pass ("no free memory above the watermarks"), and
 * a ZONE_MOVABLE region that could go stayed.
 */
static void low_zone_world(struct world *w, uint64_t one_used)
{
	world_init(w);
	movable_half(w);		/* 0-3 DMA32, 4-7 Movable */
	set_used(w, 1, one_used, 0);
	w->r[1].detail.slab = 1000;	/* pinned, room for what moves */
	set_used(w, 2, 9000, 0);	/* the cheapest target, in DMA32 */
	set_used(w, 3, RP, 0);
	set_used(w, 4, RP, 0);
	set_used(w, 5, RP, 0);
	set_used(w, 6, 20000, 0);
	set_used(w, 7, 1000, 0);
	w->r[7].detail.slab = 10;	/* pinned, 31,768 free */
}

/* The same with the marks known: @all free pages above them, @low below ZONE_MOVABLE. */
static void low_zone_room(struct world *w, uint64_t one_used, uint64_t all, uint64_t low)
{
	low_zone_world(w, one_used);
	w->sys.marks_valid = true;
	w->sys.free_above_marks = all;
	w->sys.low_free_above_marks = low;
}

static void test_kernel_zone_pages_stay_low(void **state)
{
	struct world w;

	(void)state;
	/*
	 * DMA32 holds 100,536 pages: with the slack, more than three of its
	 * regions.  Region 2 stays; ZONE_MOVABLE's 5 and 6 go instead (their
	 * pages may move into DMA32's free pages).
	 */
	low_zone_world(&w, 26000);
	decide(&w);
	assert_int_equal(w.r[2].role, RPM_ROLE_KEEP);
	assert_int_equal(w.st.plan.low_kept, 3);
	assert_int_equal(w.r[6].role, RPM_ROLE_TARGET);
	assert_int_equal(w.r[5].role, RPM_ROLE_TARGET);
	assert_false(works(&w, 2));
	assert_true(works(&w, 6));

	/* The same regions all in one zone: the cheapest, 2, is emptied. */
	low_zone_world(&w, 26000);
	for (uint32_t i = 0; i < NR; i++)
		snprintf(w.r[i].zones, sizeof(w.r[i].zones), "Normal");
	decide(&w);
	assert_int_equal(w.st.plan.low_kept, 0);
	assert_int_equal(w.r[2].role, RPM_ROLE_TARGET);
	assert_true(works(&w, 2));

	/*
	 * DMA32 can hold its pages in three regions, so the plan may empty
	 * 2; but its free pages above the marks are fewer than 2's pages and
	 * its own free pages (which leave when it is parked): no work on it,
	 * however much ZONE_MOVABLE has free.  With room there, it goes.
	 */
	low_zone_room(&w, 20000, 60000, 5000);
	decide(&w);
	assert_int_equal(w.r[2].role, RPM_ROLE_TARGET);
	assert_false(works(&w, 2));
	assert_false(has(&w, RPM_ACT_HOLD, 2));
	low_zone_room(&w, 20000, 60000, 40000);
	decide(&w);
	assert_true(works(&w, 2));

	/*
	 * ZONE_MOVABLE's pages go wherever there is room: the same shortage
	 * below ZONE_MOVABLE does not stop a target in it.
	 */
	low_zone_room(&w, 20000, 60000, 5000);
	set_used(&w, 2, RP, 0);
	set_used(&w, 5, 9000, 0);
	decide(&w);
	assert_int_equal(w.r[5].role, RPM_ROLE_TARGET);
	assert_true(works(&w, 5));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_helpers),
		cmocka_unit_test(test_bias_once),
		cmocka_unit_test(test_no_room_for_actions),
		cmocka_unit_test(test_parks_empty_highest_first),
		cmocka_unit_test(test_park_respects_headroom),
		cmocka_unit_test(test_headroom_base_sliding),
		cmocka_unit_test(test_park_headroom_auto_large),
		cmocka_unit_test(test_never_parks_under_pressure),
		cmocka_unit_test(test_unparks_on_pressure),
		cmocka_unit_test(test_unparks_below_headroom_order),
		cmocka_unit_test(test_prefers_highest_region),
		cmocka_unit_test(test_prefers_lowest_cost),
		cmocka_unit_test(test_skips_unmovable_and_scans),
		cmocka_unit_test(test_skips_what_memory_cannot_absorb),
		cmocka_unit_test(test_max_pages_to_vacate),
		cmocka_unit_test(test_drop_vs_migrate),
		cmocka_unit_test(test_cost_model_refusal),
		cmocka_unit_test(test_hysteresis),
		cmocka_unit_test(test_keep_set_moves_nothing_needlessly),
		cmocka_unit_test(test_hot_pages_move),
		cmocka_unit_test(test_shortfall_unparks),
		cmocka_unit_test(test_unpark_band),
		cmocka_unit_test(test_reclaim_unparks),
		cmocka_unit_test(test_growth_ramp),
		cmocka_unit_test(test_burst_signals_do_not_ramp),
		cmocka_unit_test(test_failed_unparks_do_not_ramp),
		cmocka_unit_test(test_growth_lead_per_burst),
		cmocka_unit_test(test_reclaim_watch_burst),
		cmocka_unit_test(test_headroom_pause_ends_on_free),
		cmocka_unit_test(test_reserved_region_not_spare),
		cmocka_unit_test(test_shrink_ends_growth_hold),
		cmocka_unit_test(test_growth_unparks_ahead),
		cmocka_unit_test(test_reclaim_after_our_moves),
		cmocka_unit_test(test_cache_growth_defers_parking),
		cmocka_unit_test(test_anon_growth_and_low_mark),
		cmocka_unit_test(test_growth_floor_within_headroom),
		cmocka_unit_test(test_fast_growth_unparks_its_lead),
		cmocka_unit_test(test_cache_room),
		cmocka_unit_test(test_pinned_rescan_backoff),
		cmocka_unit_test(test_converged_recheck_at_backoff),
		cmocka_unit_test(test_holds),
		cmocka_unit_test(test_holds_unscanned_targets),
		cmocka_unit_test(test_holds_backing_off_regions),
		cmocka_unit_test(test_one_target_at_a_time),
		cmocka_unit_test(test_zone_floor),
		cmocka_unit_test(test_max_parked_pct),
		cmocka_unit_test(test_kernel_zone_pages_stay_low),
		cmocka_unit_test(test_keep_set_keeps_kernel_marks),
		cmocka_unit_test(test_moves_fit_above_marks),
		cmocka_unit_test(test_token_bucket),
		cmocka_unit_test(test_refund_and_adaptation),
		cmocka_unit_test(test_psi_rising_slows_down),
		cmocka_unit_test(test_pingpong_backoff),
		cmocka_unit_test(test_release_by_kernel),
		cmocka_unit_test(test_vacated_seen_late),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_obstacle_backs_off),
		cmocka_unit_test(test_park_stuck),
		cmocka_unit_test(test_checkpoint_step),
		cmocka_unit_test(test_headroom_counts_parked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
