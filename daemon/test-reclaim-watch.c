// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the reclaim watch: the rate arithmetic, and the timer on a
 * fixture root whose proc/vmstat the test rewrites: it calls back only
 * while armed and only when reclaim went faster than the limit.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "reclaim-watch.h"

#define SEC 1000000ULL

static char root[256];
static uint64_t free_pages = 1000;	/* nr_free_pages in the fixture */

static void write_vmstat(uint64_t steal_kswapd, uint64_t steal_direct, uint64_t refault)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/proc/vmstat", root);
	f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "nr_free_pages %llu\nworkingset_refault_file %llu\n"
		   "pgsteal_kswapd %llu\npgsteal_direct %llu\n",
		(unsigned long long)free_pages,
		(unsigned long long)refault, (unsigned long long)steal_kswapd,
		(unsigned long long)steal_direct);
	fclose(f);
}

static int setup(void **state)
{
	char p[512];

	(void)state;
	snprintf(root, sizeof(root), "/tmp/test-reclaim-watch.XXXXXX");
	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/proc", root);
	mkdir(p, 0755);
	write_vmstat(0, 0, 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_rate(void **state)
{
	struct reclaim_rate r = { 0 };

	(void)state;
	/* The first reading only starts. */
	assert_int_equal(reclaim_rate_feed(&r, 10 * SEC, 1000, 0, 1024, 0, NULL), 0);
	/* 2 s, 2000 steals: 1000/s, below 1024/s. */
	assert_int_equal(reclaim_rate_feed(&r, 12 * SEC, 3000, 0, 1024, 0, NULL), 0);
	/* 2 s, 5000 steals: above. */
	assert_int_equal(reclaim_rate_feed(&r, 14 * SEC, 8000, 0, 1024, 0, NULL), 5000);
	/* Refaults count the same; the larger of the two is reported. */
	assert_int_equal(reclaim_rate_feed(&r, 16 * SEC, 8100, 9000, 1024, 0, NULL), 9000);
	/* The clock did not advance: restart, no rate. */
	assert_int_equal(reclaim_rate_feed(&r, 16 * SEC, 90000, 9000, 1024, 0, NULL), 0);
	/* Counters went backwards: restart. */
	assert_int_equal(reclaim_rate_feed(&r, 18 * SEC, 10, 9000, 1024, 0, NULL), 0);
	assert_int_equal(reclaim_rate_feed(&r, 20 * SEC, 100000, 9000, 1024, 0, NULL), 99990);
	/* Limit 0: never. */
	assert_int_equal(reclaim_rate_feed(&r, 22 * SEC, 900000, 9000, 0, 0, NULL), 0);
}

/* The step the policy uses: the raw growth, whatever the limit. */
static void test_step(void **state)
{
	struct reclaim_rate r = { 0 };
	struct reclaim_step d;

	(void)state;
	assert_false(reclaim_rate_step(&r, 5 * SEC, 100, 50, &d));
	assert_int_equal(d.steal + d.refault + d.usec, 0);
	assert_true(reclaim_rate_step(&r, 7 * SEC, 300, 60, &d));
	assert_int_equal(d.steal, 200);
	assert_int_equal(d.refault, 10);
	assert_int_equal(d.usec, 2 * SEC);
	assert_int_equal(reclaim_step_over(&d, 99), 200);	/* 100/s > 99/s */
	assert_int_equal(reclaim_step_over(&d, 100), 0);	/* not faster */
	assert_int_equal(reclaim_step_over(&d, 0), 0);
	/* counters back: restart, and the next step starts from there */
	assert_false(reclaim_rate_step(&r, 8 * SEC, 10, 60, &d));
	assert_true(reclaim_rate_step(&r, 9 * SEC, 20, 61, &d));
	assert_int_equal(d.steal, 10);
}

static void on_reclaim(struct reclaim_watch *w, uint64_t pages, void *userdata)
{
	(void)w;
	*(uint64_t *)userdata += pages;
}

static void test_timer(void **state)
{
	struct reclaim_watch *w = NULL;
	sd_event *e = NULL;
	uint64_t seen = 0;

	(void)state;
	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(reclaim_watch_new(e, root, 100000, on_reclaim, &seen, &w), 0);
	/* Not armed: reclaim goes unseen. */
	assert_false(reclaim_watch_armed(w));
	write_vmstat(100000, 0, 0);
	for (int i = 0; i < 3; i++)
		sd_event_run(e, 150000);
	assert_int_equal(seen, 0);
	/* Armed, quiet: nothing. */
	reclaim_watch_arm(w, true, 1024);
	assert_true(reclaim_watch_armed(w));
	for (int i = 0; i < 3; i++)
		sd_event_run(e, 150000);
	assert_int_equal(seen, 0);
	/* 50,000 pages stolen within a period: far above 1024/s. */
	write_vmstat(140000, 10000, 0);
	for (int i = 0; i < 4 && !seen; i++)
		sd_event_run(e, 150000);
	assert_int_equal(seen, 50000);
	/* Disarmed again: nothing more. */
	reclaim_watch_arm(w, false, 1024);
	assert_false(reclaim_watch_armed(w));
	write_vmstat(1000000, 10000, 0);
	for (int i = 0; i < 3; i++)
		sd_event_run(e, 150000);
	assert_int_equal(seen, 50000);
	/* A root without vmstat: no call, no crash. */
	reclaim_watch_free(w);
	w = NULL;
	assert_int_equal(reclaim_watch_new(e, "/nonexistent", 100000, on_reclaim, &seen, &w), 0);
	reclaim_watch_arm(w, true, 1024);
	for (int i = 0; i < 3; i++)
		sd_event_run(e, 150000);
	assert_int_equal(seen, 50000);
	reclaim_watch_free(w);
	sd_event_unref(e);
}

struct calls {
	unsigned n, zero;
};

static void on_call(struct reclaim_watch *w, uint64_t pages, void *userdata)
{
	struct calls *c = userdata;

	(void)w;
	c->n++;
	c->zero += !pages;
}

/* Let the 100-ms watch timer run about @n times. */
static void run_periods(sd_event *e, int n)
{
	for (int i = 0; i < n; i++)
		sd_event_run(e, 150000);
}

/*
 * The free-memory mark: one call (0 pages) once MemFree reaches it, none
 * below it, none again until a new mark is set, none while disarmed.
 */
static void test_free_mark(void **state)
{
	struct reclaim_watch *w = NULL;
	struct calls c = { 0 };
	sd_event *e = NULL;

	(void)state;
	free_pages = 1000;
	write_vmstat(0, 0, 0);
	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(reclaim_watch_new(e, root, 100000, on_call, &c, &w), 0);
	reclaim_watch_wake_at_free(w, 5000);
	/* Disarmed: the mark alone reads nothing. */
	free_pages = 9000;
	write_vmstat(0, 0, 0);
	run_periods(e, 3);
	assert_int_equal(c.n, 0);
	/* Armed, below the mark: nothing. */
	free_pages = 4999;
	write_vmstat(0, 0, 0);
	reclaim_watch_arm(w, true, 1024);
	run_periods(e, 3);
	assert_int_equal(c.n, 0);
	/* At the mark: one call, with 0 pages; then no more. */
	free_pages = 5000;
	write_vmstat(0, 0, 0);
	run_periods(e, 5);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.zero, 1);
	/* A new mark above: nothing until MemFree gets there. */
	reclaim_watch_wake_at_free(w, 20000);
	run_periods(e, 3);
	assert_int_equal(c.n, 1);
	/* Reclaim still reports its pages (not 0) while a mark is set. */
	write_vmstat(100000, 0, 0);
	for (int i = 0; i < 4 && c.n == 1; i++)
		sd_event_run(e, 150000);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.zero, 1);
	/* Mark 0: never. */
	reclaim_watch_wake_at_free(w, 0);
	free_pages = 1000000;
	write_vmstat(100000, 0, 0);
	run_periods(e, 3);
	assert_int_equal(c.n, 2);
	reclaim_watch_free(w);
	sd_event_unref(e);
	free_pages = 1000;
}

/* The mark below: one call when MemFree falls under it, then none. */
static void test_low_mark(void **state)
{
	struct reclaim_watch *w = NULL;
	struct calls c = { 0 };
	sd_event *e = NULL;

	(void)state;
	free_pages = 9000;
	write_vmstat(0, 0, 0);
	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(reclaim_watch_new(e, root, 100000, on_call, &c, &w), 0);
	reclaim_watch_wake_below_free(w, 5000);
	reclaim_watch_arm(w, true, 1024);
	/* Above it, at it: nothing. */
	run_periods(e, 3);
	free_pages = 5000;
	write_vmstat(0, 0, 0);
	run_periods(e, 3);
	assert_int_equal(c.n, 0);
	/* Below it: one call, with 0 pages, said to be the mark below. */
	free_pages = 4999;
	write_vmstat(0, 0, 0);
	run_periods(e, 5);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.zero, 1);
	assert_true(reclaim_watch_fell_below(w));
	/* Still below, no new mark: no more calls. */
	free_pages = 100;
	write_vmstat(0, 0, 0);
	run_periods(e, 3);
	assert_int_equal(c.n, 1);
	/* The mark above says so too. */
	reclaim_watch_wake_at_free(w, 50);
	run_periods(e, 3);
	assert_int_equal(c.n, 2);
	assert_false(reclaim_watch_fell_below(w));
	/* Mark 0: never. */
	reclaim_watch_wake_below_free(w, 0);
	run_periods(e, 3);
	assert_int_equal(c.n, 2);
	reclaim_watch_free(w);
	sd_event_unref(e);
	free_pages = 1000;
}

/* The period arithmetic: back to the base on reclaim or a fast fall, else doubled. */
static void test_next_period(void **state)
{
	(void)state;
	/* Quiet: doubles, up to the maximum. */
	assert_int_equal(reclaim_watch_next_period(2, 2, 16, false, 1000, 1000, 0), 4);
	assert_int_equal(reclaim_watch_next_period(8, 2, 16, false, 1000, 1000, 0), 16);
	assert_int_equal(reclaim_watch_next_period(16, 2, 16, false, 1000, 1000, 0), 16);
	assert_int_equal(reclaim_watch_next_period(12, 2, 16, false, 1000, 1000, 0), 16);
	/* No maximum above the base: stays at the base. */
	assert_int_equal(reclaim_watch_next_period(2, 2, 0, false, 1000, 1000, 0), 2);
	/* Any reclaim: back to the base. */
	assert_int_equal(reclaim_watch_next_period(16, 2, 16, true, 1000, 1000, 0), 2);
	/* Free memory fell by a quarter of its distance to the mark or less: quiet. */
	assert_int_equal(reclaim_watch_next_period(4, 2, 16, false, 1000, 900, 600), 8);
	/* By more: at that pace twice the period reaches the mark. */
	assert_int_equal(reclaim_watch_next_period(4, 2, 16, false, 1000, 899, 600), 2);
	/* Without a mark the distance is all free memory. */
	assert_int_equal(reclaim_watch_next_period(4, 2, 16, false, 1000, 750, 0), 8);
	assert_int_equal(reclaim_watch_next_period(4, 2, 16, false, 1000, 749, 0), 2);
	/* Already below the mark: the base. */
	assert_int_equal(reclaim_watch_next_period(4, 2, 16, false, 500, 499, 600), 2);
	/* Free memory that grew is quiet. */
	assert_int_equal(reclaim_watch_next_period(4, 2, 16, false, 500, 5000, 600), 8);
}

/*
 * With a maximum, a quiet system is read less and less often; hurry, a
 * fast fall of free memory and reclaim bring the period back; a burst
 * over a long period is seen as it would have been over a short one.
 */
static void test_backoff(void **state)
{
	struct reclaim_watch *w = NULL;
	struct calls c = { 0 };
	sd_event *e = NULL;

	(void)state;
	free_pages = 100000;
	write_vmstat(0, 0, 0);
	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(reclaim_watch_new(e, root, 50000, on_call, &c, &w), 0);
	reclaim_watch_set_max_period(w, 400000);
	reclaim_watch_wake_below_free(w, 20000);
	reclaim_watch_arm(w, true, 1000);
	assert_int_equal(reclaim_watch_period(w), 50000);
	/* Quiet: 50, 100, 200, 400 ms: within 1.2 s it reaches the maximum. */
	for (int i = 0; i < 12; i++)
		sd_event_run(e, 100000);
	assert_int_equal(reclaim_watch_period(w), 400000);
	assert_int_equal(c.n, 0);
	/* Hurried (an event): the base again. */
	reclaim_watch_hurry(w);
	assert_int_equal(reclaim_watch_period(w), 50000);
	for (int i = 0; i < 12; i++)
		sd_event_run(e, 100000);
	assert_int_equal(reclaim_watch_period(w), 400000);
	/* Free memory falls by half its distance to the mark: the base. */
	free_pages = 60000;
	write_vmstat(0, 0, 0);
	for (int i = 0; i < 6 && reclaim_watch_period(w) != 50000; i++)
		sd_event_run(e, 100000);
	assert_int_equal(reclaim_watch_period(w), 50000);
	assert_int_equal(c.n, 0);
	for (int i = 0; i < 12; i++)
		sd_event_run(e, 100000);
	assert_int_equal(reclaim_watch_period(w), 400000);
	/*
	 * 300 pages stolen in one 400-ms period: 750/s, under the limit of
	 * 1000/s, but more than 50 ms at that limit allows: reported, and
	 * the period is back at the base.
	 */
	write_vmstat(300, 0, 0);
	for (int i = 0; i < 6 && !c.n; i++)
		sd_event_run(e, 100000);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.zero, 0);
	assert_int_equal(reclaim_watch_period(w), 50000);
	/* Without a maximum (the default) the period stays at the base. */
	reclaim_watch_set_max_period(w, 0);
	reclaim_watch_hurry(w);
	for (int i = 0; i < 12; i++)
		sd_event_run(e, 100000);
	assert_int_equal(reclaim_watch_period(w), 50000);
	reclaim_watch_free(w);
	sd_event_unref(e);
	free_pages = 1000;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_step),
		cmocka_unit_test_setup_teardown(test_timer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_mark, setup, teardown),
		cmocka_unit_test_setup_teardown(test_low_mark, setup, teardown),
		cmocka_unit_test(test_next_period),
		cmocka_unit_test_setup_teardown(test_backoff, setup, teardown),
	};

	rpm_log_max_level = LOG_WARNING;	/* keep the TAP output clean */
	return cmocka_run_group_tests_name("reclaim-watch", tests, NULL, NULL);
}
