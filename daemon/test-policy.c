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
};

/* Every region full of anon pages, fresh detail, nothing parked, no pressure. */
static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	policy_config_defaults(&w->cfg);
	w->cfg.bias = false;	/* most tests do not want the extra action */
	policy_state_init(&w->st);
	w->sys = (struct rpm_system) {
		.now = T0,
		.mem_total_pages = NR * RP,
		.mem_available_pages = NR * RP / 2,
		.mem_free_pages = NR * RP / 2,
		.page_size = 4096,
	};
	for (uint32_t i = 0; i < NR; i++) {
		struct rpm_region *r = &w->r[i];

		r->id = i;
		r->start_pfn = i * RP;
		r->spanned_pages = r->managed_pages = RP;
		r->free_pages = 0;
		r->detail = (struct rpm_region_detail) {
			.valid = true, .when = T0, .anon = RP,
		};
	}
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

static size_t decide(struct world *w)
{
	w->n = policy_decide(&w->cfg, &w->st, &w->sys, w->r, NR, w->out,
			     sizeof(w->out) / sizeof(w->out[0]));
	return w->n;
}

static size_t count(const struct world *w, enum rpm_action_kind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < w->n; i++)
		n += w->out[i].kind == kind;
	return n;
}

/* The first action of a kind, or fail. */
static const struct rpm_action *first(const struct world *w,
				      enum rpm_action_kind kind)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->out[i].kind == kind)
			return &w->out[i];
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
	set_used(&w, 5, 0, 0);
	set_used(&w, 7, 0, 0);
	w.sys.mem_available_pages = 6 * RP;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_PARK), 2);
	assert_int_equal(first(&w, RPM_ACT_PARK)->region, 7);
	assert_true(has(&w, RPM_ACT_PARK, 5));

	/* Park=no: empty regions stay as they are. */
	world_init(&w);
	w.cfg.park = false;
	set_used(&w, 7, 0, 0);
	w.sys.mem_available_pages = 6 * RP;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_PARK), 0);
}

static void test_park_respects_headroom(void **state)
{
	struct world w;
	uint64_t headroom = NR * RP / 10;	/* HeadroomPercent=10 */

	(void)state;
	world_init(&w);
	set_used(&w, 6, 0, 0);
	set_used(&w, 7, 0, 0);
	/* Room for exactly one region above the headroom. */
	w.sys.mem_available_pages = headroom + RP + RP / 2;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_PARK), 1);
	assert_int_equal(first(&w, RPM_ACT_PARK)->region, 7);

	/* Exactly at the limit is allowed, one page less is not. */
	world_init(&w);
	set_used(&w, 7, 0, 0);
	w.sys.mem_available_pages = headroom + RP;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_PARK), 1);
	world_init(&w);
	set_used(&w, 7, 0, 0);
	w.sys.mem_available_pages = headroom + RP - 1;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_PARK), 0);

	/* A larger headroom forbids it. */
	world_init(&w);
	set_used(&w, 7, 0, 0);
	w.cfg.headroom_percent = 60;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_PARK), 0);
}

/* Parked memory still counts in the headroom's base: MemTotal shrinks
 * with every park, the headroom must not. */
static void test_headroom_counts_parked(void **state)
{
	struct world w;
	uint64_t headroom = NR * RP / 10;	/* of all memory, parked included */

	(void)state;
	world_init(&w);
	/* Regions 5 and 6 parked by us: MemTotal lost 2 regions. */
	for (uint32_t i = 5; i < 7; i++) {
		set_parked(&w, i, true, T0 - SEC);
	}
	set_used(&w, 7, 0, 0);
	/* Enough above a headroom of the shrunken MemTotal, not above the
	 * headroom of all memory: no park. */
	w.sys.mem_available_pages = (NR - 2) * RP / 10 + RP + RP / 40;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_PARK), 0);
	w.sys.mem_available_pages = headroom + RP;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_PARK), 1);
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
	assert_int_equal(count(&w, RPM_ACT_PARK), 0);
	assert_int_equal(count(&w, RPM_ACT_COMPACT), 0);
	assert_int_equal(w.st.paused_until, T0 + w.cfg.pressure_backoff_sec * SEC);

	/* Full stalls alone, and a PSI trigger alone, count as pressure too. */
	world_init(&w);
	set_used(&w, 7, 0, 0);
	w.sys.psi_full_avg10 = w.cfg.psi_full_avg10_max + 1;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_PARK), 0);
	world_init(&w);
	set_used(&w, 7, 0, 0);
	w.sys.psi_event = true;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_PARK), 0);

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
	w.sys.psi_some_avg10 = w.cfg.psi_some_avg10_max + 1;
	decide(&w);
	/* Memory is there, PSI says contended: give back one, ours, newest. */
	assert_int_equal(w.n, 1);
	assert_int_equal(w.out[0].kind, RPM_ACT_UNPARK);
	assert_int_equal(w.out[0].region, 5);
	/* It is not vacated again right away. */
	assert_true(w.r[5].backoff_until > w.sys.now);
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
	decide(&w);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.out[0].region, 5);
	assert_true(w.st.paused_until > w.sys.now);
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
	assert_int_equal(count(&w, RPM_ACT_COMPACT), 1);
	a = first(&w, RPM_ACT_COMPACT);
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
	assert_int_equal(count(&w, RPM_ACT_COMPACT), 3);
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
	set_used(&w, 5, 120, 0);	/* same power-of-two bucket as 3: higher wins */
	w.cfg.budget_pages_per_sec = 1000;
	w.cfg.budget_pages_per_region = 200;
	decide(&w);
	assert_true(count(&w, RPM_ACT_COMPACT) >= 2);
	assert_int_equal(w.out[0].region, 5);
	assert_int_equal(w.out[1].region, 3);
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
	assert_false(has(&w, RPM_ACT_COMPACT, 7));
	assert_false(has(&w, RPM_ACT_COMPACT, 6));
	assert_false(has(&w, RPM_ACT_SCAN, 7));
	assert_true(has(&w, RPM_ACT_SCAN, 5));
	assert_false(has(&w, RPM_ACT_COMPACT, 5));
	assert_true(has(&w, RPM_ACT_SCAN, 4));
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->region, 3);
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
	/* 10000 pages above the headroom: 7 does not fit, 6 does. */
	w.sys.mem_available_pages = headroom + 10000;
	decide(&w);
	assert_false(has(&w, RPM_ACT_COMPACT, 7));
	assert_true(has(&w, RPM_ACT_COMPACT, 6));

	/* Clean idle cache is dropped, not absorbed: then 7 fits. */
	world_init(&w);
	set_used(&w, 7, 20000, 15000);
	w.r[7].idle_valid = true;
	w.r[7].idle_when = w.sys.now;
	w.r[7].idle_file_pages = 15000;
	w.sys.mem_available_pages = headroom + 10000;
	decide(&w);
	assert_true(has(&w, RPM_ACT_COMPACT, 7));
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->mode, RPM_COMPACT_BOTH);

	/* Two that fit alone but not together: only the first. */
	world_init(&w);
	set_used(&w, 7, 6000, 0);
	set_used(&w, 6, 6000, 0);
	w.sys.mem_available_pages = headroom + 10000;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_COMPACT), 1);
	assert_true(has(&w, RPM_ACT_COMPACT, 7));
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
	assert_false(has(&w, RPM_ACT_COMPACT, 7));
	assert_true(has(&w, RPM_ACT_COMPACT, 6));
}

/* ---- drop or migrate ------------------------------------------------------ */

static void idle(struct world *w, uint32_t i, uint64_t idle_file, usec_t_ age)
{
	w->r[i].idle_valid = true;
	w->r[i].idle_when = w->sys.now - age;
	w->r[i].idle_file_pages = idle_file;
}

static void test_drop_vs_migrate(void **state)
{
	struct world w;

	(void)state;
	/* All clean cache, all idle: drop. */
	world_init(&w);
	set_used(&w, 7, 4000, 4000);
	idle(&w, 7, 4000, 0);
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->mode, RPM_COMPACT_DROP);
	assert_int_equal(count(&w, RPM_ACT_SAMPLE_IDLE), 0);

	/* Idle cache with anon: drop the cache, migrate the anon. */
	world_init(&w);
	set_used(&w, 7, 4000, 3000);
	idle(&w, 7, 3000, 0);
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->mode, RPM_COMPACT_BOTH);

	/* Hot cache (only part of it idle): migrate it. */
	world_init(&w);
	set_used(&w, 7, 4000, 4000);
	idle(&w, 7, 1000, 0);
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->mode, RPM_COMPACT_MIGRATE);

	/* Dirty pages are never dropped. */
	world_init(&w);
	set_used(&w, 7, 4000, 0);
	w.r[7].detail.anon = 0;
	w.r[7].detail.file_dirty = 4000;
	idle(&w, 7, 4000, 0);
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->mode, RPM_COMPACT_MIGRATE);

	/* Idleness unknown: sample first, do not compact yet. */
	world_init(&w);
	set_used(&w, 7, 4000, 4000);
	decide(&w);
	assert_true(has(&w, RPM_ACT_SAMPLE_IDLE, 7));
	assert_false(has(&w, RPM_ACT_COMPACT, 7));

	/* Idleness too old: sample again. */
	world_init(&w);
	set_used(&w, 7, 4000, 4000);
	idle(&w, 7, 4000, (w.cfg.min_idle_age_sec + 1) * SEC);
	decide(&w);
	assert_true(has(&w, RPM_ACT_SAMPLE_IDLE, 7));
	assert_false(has(&w, RPM_ACT_COMPACT, 7));

	/* DropCache=no: migrate, and no sampling needed. */
	world_init(&w);
	w.cfg.drop_cache = false;
	set_used(&w, 7, 4000, 4000);
	idle(&w, 7, 4000, 0);
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_SAMPLE_IDLE), 0);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->mode, RPM_COMPACT_MIGRATE);
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
	assert_int_equal(count(&w, RPM_ACT_COMPACT), 0);

	/* The same with a long enough payback: yes. 0.01 mW * 12000 s = 120 mJ. */
	w.cfg.payback_sec = 12000;
	w.sys.now += SEC;
	decide(&w);
	assert_true(has(&w, RPM_ACT_COMPACT, 7));

	/* Just over the break-even: no. */
	world_init(&w);
	set_used(&w, 7, 4001, 0);
	w.cfg.region_saving_mw = 0.01;
	w.cfg.payback_sec = 12000;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_COMPACT), 0);

	/* Dropping idle cache costs no migration energy: allowed. */
	world_init(&w);
	set_used(&w, 7, 4000, 4000);
	idle(&w, 7, 4000, 0);
	w.cfg.region_saving_mw = 0.0;
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->mode, RPM_COMPACT_DROP);
}

/* ---- budget ----------------------------------------------------------------- */

static void test_token_bucket(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 20000, 0);
	w.cfg.budget_pages_per_sec = 1000;
	/* First pass: one second's worth. */
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->budget, 1000);
	/* Same instant: the bucket is empty. */
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_COMPACT), 0);
	/* 0.1 s later: 100 tokens, below the smallest call worth making. */
	w.sys.now += SEC / 10;
	decide(&w);
	assert_int_equal(count(&w, RPM_ACT_COMPACT), 0);
	/* 0.5 s more: 600 pages. */
	w.sys.now += SEC / 2;
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->budget, 600);

	/* After an hour the bucket holds at most BURST seconds... */
	world_init(&w);
	set_used(&w, 7, 20000, 0);
	w.cfg.budget_pages_per_sec = 1000;
	w.cfg.budget_pages_per_region = 100000;
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->budget, 1000);
	policy_note_compact(&w.st, &w.r[7], w.sys.now, 1000, 0, 0, 0);
	w.sys.now += 3600 * SEC;
	set_used(&w, 7, 19000, 0);	/* fresh detail */
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->budget,
			 1000 * RPM_POLICY_BURST_SEC);
	/* ... and a call never more than a region, which the kernel refuses. */
	w.sys.now += 3600 * SEC;
	w.cfg.budget_pages_per_sec = 1000000;
	set_used(&w, 7, 9000, 0);
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->budget, RP);
}

static void test_refund_and_adaptation(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 20000, 0);
	w.cfg.budget_pages_per_sec = 8192;
	w.cfg.budget_pages_per_region = 8192;
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->budget, 8192);
	/* Many failures (pinned pages): that region's calls get smaller, and
	 * the unused part of the budget comes back. */
	policy_note_compact(&w.st, &w.r[7], w.sys.now, 1000, 0, 3000, 0);
	assert_true(w.st.budget_tokens >= 8192 - 4000 - 1);
	assert_int_equal(w.st.total_migrated, 1000);
	assert_int_equal(w.r[7].pages_migrated, 1000);
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->budget, 4096);
	/* An error halves it again. */
	policy_note_compact(&w.st, &w.r[7], w.sys.now, 0, 0, 0, -EBUSY);
	w.sys.now += SEC;
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->budget, 2048);
	/* A clean run doubles it, up to BudgetPagesPerRegion. */
	policy_note_compact(&w.st, &w.r[7], w.sys.now, 2000, 48, 0, 0);
	assert_int_equal(w.st.total_dropped, 48);
	w.sys.now += SEC;
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->budget, 4096);
	for (int i = 0; i < 5; i++) {
		policy_note_compact(&w.st, &w.r[7], w.sys.now, 4096, 0, 0, 0);
		w.sys.now += 2 * SEC;
		decide(&w);
	}
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->budget, 8192);
	/* Never below the smallest useful call. */
	for (int i = 0; i < 10; i++)
		policy_note_compact(&w.st, &w.r[7], w.sys.now, 0, 0, 100, 0);
	w.sys.now += 2 * SEC;
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->budget, RPM_POLICY_MIN_CHUNK);
}

/* A compaction that moved nothing and hit an obstacle backs the region
 * off, doubling each time; progress clears it. */
static void test_obstacle_backs_off(void **state)
{
	struct world w;
	usec_t_ base;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 20000, 0);
	base = (usec_t_)w.cfg.pingpong_backoff_sec * SEC;
	decide(&w);
	assert_non_null(first(&w, RPM_ACT_COMPACT));
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->region, 7);
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
}

static void test_psi_rising_slows_down(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 7, 20000, 0);
	w.cfg.budget_pages_per_sec = 1000;
	w.sys.psi_some_avg10 = w.cfg.psi_some_avg10_max / 2 + 1;
	decide(&w);
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->budget, 500);
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
	assert_int_equal(first(&w, RPM_ACT_COMPACT)->region, 7);
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
	assert_false(has(&w, RPM_ACT_COMPACT, 7));
	assert_true(has(&w, RPM_ACT_COMPACT, 6));

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
	assert_true(has(&w, RPM_ACT_COMPACT, 7));

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
}

static void test_release_by_kernel(void **state)
{
	struct world w;

	(void)state;
	world_init(&w);
	set_used(&w, 6, 0, 0);
	set_parked(&w, 7, true, T0 - SEC);
	w.sys.mem_available_pages = 6 * RP;
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
	assert_int_equal(count(&w, RPM_ACT_PARK), 0);
	assert_true(w.st.paused_until > w.sys.now);

	/* Our own unpark is neither. */
	world_init(&w);
	set_parked(&w, 7, true, T0 - SEC);
	policy_note_released(&w.st, &w.r[7], w.sys.now, REGIONPM_RELEASE_REASON_UNPARK);
	assert_int_equal(w.r[7].refill_count, 0);
	assert_false(w.st.pressure_pending);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_helpers),
		cmocka_unit_test(test_bias_once),
		cmocka_unit_test(test_no_room_for_actions),
		cmocka_unit_test(test_parks_empty_highest_first),
		cmocka_unit_test(test_park_respects_headroom),
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
		cmocka_unit_test(test_token_bucket),
		cmocka_unit_test(test_refund_and_adaptation),
		cmocka_unit_test(test_psi_rising_slows_down),
		cmocka_unit_test(test_pingpong_backoff),
		cmocka_unit_test(test_release_by_kernel),
		cmocka_unit_test(test_vacated_seen_late),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_obstacle_backs_off),
		cmocka_unit_test(test_headroom_counts_parked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
