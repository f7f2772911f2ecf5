// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of daemon/conf.c with the files in daemon/fixtures/conf/
 * (REGIONPM_FIXTURES overrides the fixture directory).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <cmocka.h>

#include "conf.h"

/* ---- helpers ---------------------------------------------------------- */

#define MAX_MSGS 64

struct logbuf {
	unsigned n;
	char msg[MAX_MSGS][512];
	int level[MAX_MSGS];
};

static void capture(void *userdata, int level, const char *fmt, ...)
{
	struct logbuf *lb = userdata;
	va_list ap;

	if (lb->n >= MAX_MSGS)
		return;
	va_start(ap, fmt);
	vsnprintf(lb->msg[lb->n], sizeof(lb->msg[0]), fmt, ap);
	va_end(ap);
	lb->level[lb->n++] = level;
}

static const char *fixtures(void)
{
	const char *f = getenv("REGIONPM_FIXTURES");

	return f && *f ? f : "daemon/fixtures";
}

static const char *fx(char *buf, const char *rel)
{
	snprintf(buf, PATH_MAX, "%s/conf/%s", fixtures(), rel);
	return buf;
}

/* The message naming file:line, or NULL. */
static const char *find_msg(const struct logbuf *lb, const char *file,
			    unsigned line)
{
	char want[PATH_MAX + 32];

	snprintf(want, sizeof(want), "%s:%u: ", file, line);
	for (unsigned i = 0; i < lb->n; i++)
		if (strstr(lb->msg[i], want))
			return lb->msg[i];
	return NULL;
}

/* A warning for file:line exists and contains what. */
static void expect_msg(const struct logbuf *lb, const char *file,
		       unsigned line, const char *what)
{
	const char *m = find_msg(lb, file, line);

	if (!m)
		fail_msg("no message for %s:%u", file, line);
	if (!strstr(m, what))
		fail_msg("message for %s:%u lacks \"%s\": %s", file, line, what, m);
}

static void assert_get(const struct rpm_config *c, const char *key,
		       const char *want)
{
	char buf[1024];

	assert_int_equal(conf_get(c, key, buf, sizeof(buf)), 0);
	if (strcmp(buf, want))
		fail_msg("%s = \"%s\", expected \"%s\"", key, buf, want);
}

static int load(struct rpm_config *c, const char *main_rel,
		const char *dropin_rel, struct logbuf *lb, unsigned *warnings)
{
	char m[PATH_MAX], d[PATH_MAX];
	const char *dirs[] = { dropin_rel ? fx(d, dropin_rel) : NULL, NULL };

	return conf_load(c, main_rel ? fx(m, main_rel) : NULL, dropin_rel ? dirs : NULL,
			 capture, lb, warnings);
}

/* Default of every key, as conf_get() prints it. */
static const struct {
	const char *key, *value;
} defaults[] = {
	{ "Daemon.IntervalSec", "5" },
	{ "Daemon.IdleIntervalSec", "60" },
	{ "Daemon.MetricsFile", "" },
	{ "Daemon.Backend", "auto" },
	{ "Pressure.SomeAvg10MaxPercent", "10.00" },
	{ "Pressure.FullAvg10MaxPercent", "2.00" },
	{ "Pressure.StallUSec", "100000" },
	{ "Pressure.WindowUSec", "1000000" },
	{ "Policy.HeadroomPercent", "10" },
	{ "Policy.HysteresisPercent", "3" },
	{ "Policy.ReclaimUnparkPagesPerSec", "1024" },
	{ "Policy.CacheHistorySec", "600" },
	{ "Policy.BudgetPagesPerSec", "32768" },
	{ "Policy.BudgetPagesPerRegion", "8192" },
	{ "Policy.MaxPagesToVacate", "0" },
	{ "Policy.MinIdleAgeSec", "30" },
	{ "Policy.PingPongWindowSec", "60" },
	{ "Policy.PingPongBackoffSec", "30" },
	{ "Policy.PressureBackoffSec", "30" },
	{ "Policy.Park", "yes" },
	{ "Policy.Bias", "yes" },
	{ "Policy.DropCache", "yes" },
	{ "Policy.CheckpointJournals", "yes" },
	{ "Policy.PaybackSec", "3600" },
	{ "Power.MigrateCostMicrojoulePerPage", "30" },
	{ "Power.RegionSavingMilliwatt", "25" },
	{ "Idle.SampleSec", "120" },
	{ "Idle.MaxRegions", "4" },
	{ "Protect.Cgroup", "" },
};
#define N_DEFAULTS (sizeof(defaults) / sizeof(defaults[0]))

static void assert_all_defaults(const struct rpm_config *c)
{
	for (size_t i = 0; i < N_DEFAULTS; i++)
		assert_get(c, defaults[i].key, defaults[i].value);
	assert_int_equal(c->n_protected, 0);
}

/* ---- tests ------------------------------------------------------------ */

static void test_defaults(void **state)
{
	struct rpm_config c;
	size_t n = 0;

	(void)state;
	conf_defaults(&c);
	assert_all_defaults(&c);
	/* Struct fields, not only their printed form. */
	assert_int_equal(c.policy.psi_some_avg10_max, 1000);
	assert_int_equal(c.policy.psi_full_avg10_max, 200);
	assert_true(c.policy.park && c.policy.bias && c.policy.drop_cache);
	assert_true(c.policy.migrate_cost_uj_per_page == 30.0);

	/* Every key has a default in the table above, and no key is missing. */
	for (const char *k; (k = conf_key_name(n)); n++) {
		bool found = false;

		for (size_t i = 0; i < N_DEFAULTS; i++)
			found |= !strcmp(defaults[i].key, k);
		if (!found)
			fail_msg("key %s has no default in the test", k);
	}
	assert_int_equal(n, N_DEFAULTS);
	assert_null(conf_key_name(n));
	conf_free(&c);
}

static void test_missing_files(void **state)
{
	struct logbuf lb = { 0 };
	struct rpm_config c;
	unsigned w = 99;

	(void)state;
	conf_defaults(&c);
	assert_int_equal(load(&c, "does-not-exist.conf", "no-such.d", &lb, &w), 0);
	assert_int_equal(w, 0);
	assert_int_equal(lb.n, 0);
	assert_all_defaults(&c);
	/* An empty drop-in directory is fine too. */
	assert_int_equal(load(&c, NULL, "empty.d", &lb, &w), 0);
	assert_int_equal(w, 0);
	assert_all_defaults(&c);
	conf_free(&c);
}

static void test_full(void **state)
{
	struct logbuf lb = { 0 };
	struct rpm_config c;
	unsigned w = 99;

	(void)state;
	conf_defaults(&c);
	assert_int_equal(load(&c, "full.conf", NULL, &lb, &w), 0);
	assert_int_equal(w, 0);
	assert_int_equal(c.interval_sec, 7);
	assert_int_equal(c.policy.psi_some_avg10_max, 1250);
	assert_int_equal(c.policy.psi_full_avg10_max, 325);
	assert_int_equal(c.psi_stall_usec, 150000);
	assert_int_equal(c.psi_window_usec, 2000000);
	assert_int_equal(c.policy.headroom_percent, 15);
	assert_int_equal(c.policy.budget_pages_per_sec, 65536);
	assert_int_equal(c.policy.budget_pages_per_region, 4096);
	assert_int_equal(c.policy.max_pages_to_vacate, 20000);
	assert_int_equal(c.policy.min_idle_age_sec, 45);
	assert_int_equal(c.policy.pingpong_window_sec, 120);
	assert_int_equal(c.policy.pingpong_backoff_sec, 10);
	assert_int_equal(c.policy.pressure_backoff_sec, 60);
	assert_false(c.policy.park);
	assert_false(c.policy.bias);
	assert_false(c.policy.drop_cache);
	assert_int_equal(c.policy.payback_sec, 600);
	assert_true(c.policy.migrate_cost_uj_per_page == 12.5);
	assert_true(c.policy.region_saving_mw == 40.0);
	assert_int_equal(c.idle_sample_sec, 3);
	assert_int_equal(c.idle_max_regions, 8);
	assert_int_equal(c.backend, RPM_BACKEND_STOCK);
	assert_int_equal(c.n_protected, 2);
	assert_string_equal(c.protected_cgroups[0], "/system.slice/postgresql.service");
	assert_string_equal(c.protected_cgroups[1], "/user.slice");
	assert_get(&c, "Protect.Cgroup", "/system.slice/postgresql.service /user.slice");
	assert_get(&c, "Pressure.FullAvg10MaxPercent", "3.25");
	conf_free(&c);
}

/* Every line of bad-values.conf has a bad value: warning, default kept. */
static void test_bad_values(void **state)
{
	static const struct {
		unsigned line;
		const char *key;
	} bad[] = {
		{ 3, "IntervalSec" }, { 5, "SomeAvg10MaxPercent" },
		{ 6, "FullAvg10MaxPercent" }, { 7, "StallUSec" },
		{ 8, "WindowUSec" }, { 10, "HeadroomPercent" },
		{ 11, "BudgetPagesPerSec" }, { 12, "BudgetPagesPerRegion" },
		{ 13, "MaxPagesToVacate" }, { 14, "MinIdleAgeSec" },
		{ 15, "PingPongWindowSec" }, { 16, "PingPongBackoffSec" },
		{ 17, "PressureBackoffSec" }, { 18, "Park" }, { 19, "Bias" },
		{ 20, "DropCache" }, { 21, "PaybackSec" },
		{ 23, "MigrateCostMicrojoulePerPage" },
		{ 24, "RegionSavingMilliwatt" }, { 26, "SampleSec" },
		{ 27, "MaxRegions" }, { 29, "relative/path" },
		{ 30, "/a/../b" }, { 31, "/trailing/" }, { 33, "Backend" },
	};
	struct logbuf lb = { 0 };
	struct rpm_config c;
	char path[PATH_MAX];
	unsigned w = 0;

	(void)state;
	conf_defaults(&c);
	assert_int_equal(load(&c, "bad-values.conf", NULL, &lb, &w), 0);
	fx(path, "bad-values.conf");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *m = find_msg(&lb, path, bad[i].line);

		if (!m)
			fail_msg("no warning for line %u (%s)", bad[i].line, bad[i].key);
		if (!strstr(m, bad[i].key))
			fail_msg("warning for line %u does not name %s: %s",
				 bad[i].line, bad[i].key, m);
		assert_non_null(strstr(m, "ignored"));
	}
	assert_int_equal(w, sizeof(bad) / sizeof(bad[0]));
	assert_int_equal(lb.n, w);
	for (unsigned i = 0; i < lb.n; i++)
		assert_int_equal(lb.level[i], LOG_WARNING);
	assert_all_defaults(&c);
	conf_free(&c);
}

static void test_syntax_errors(void **state)
{
	struct logbuf lb = { 0 };
	struct rpm_config c;
	char path[PATH_MAX];
	unsigned w = 0;

	(void)state;
	conf_defaults(&c);
	assert_int_equal(load(&c, "syntax.conf", NULL, &lb, &w), 0);
	fx(path, "syntax.conf");
	/* "[Policy" opens no section: the keys after it are outside any. */
	expect_msg(&lb, path, 1, "syntax error");
	expect_msg(&lb, path, 2, "outside of any section");
	expect_msg(&lb, path, 3, "syntax error");
	expect_msg(&lb, path, 4, "syntax error");
	expect_msg(&lb, path, 5, "syntax error");
	/* Indentation is stripped, not a continuation line. */
	expect_msg(&lb, path, 6, "BudgetPagesPerSec");
	assert_null(find_msg(&lb, path, 7));
	assert_null(find_msg(&lb, path, 8));
	expect_msg(&lb, path, 9, "syntax error");
	assert_int_equal(w, 7);
	assert_int_equal(c.policy.headroom_percent, 25);
	assert_true(c.policy.bias);		/* "Bias:no" is not Bias=no */
	assert_true(c.policy.park);		/* "Park:no" neither */
	assert_int_equal(c.policy.budget_pages_per_sec, RPM_DEF_BUDGET_PAGES_PER_SEC);
	conf_free(&c);
}

static void test_unknown_keys(void **state)
{
	struct logbuf lb = { 0 };
	struct rpm_config c;
	char path[PATH_MAX];
	unsigned w = 0;

	(void)state;
	conf_defaults(&c);
	assert_int_equal(load(&c, "unknown.conf", NULL, &lb, &w), 0);
	fx(path, "unknown.conf");
	expect_msg(&lb, path, 1, "OrphanKey outside of any section");
	expect_msg(&lb, path, 4, "unknown key Frobnicate in [Daemon], ignored");
	expect_msg(&lb, path, 6, "unknown key IntervalSec in [Nonsense], ignored");
	/* Keys are case sensitive, as in systemd. */
	expect_msg(&lb, path, 8, "unknown key headroompercent in [Policy]");
	assert_int_equal(w, 4);
	assert_int_equal(c.interval_sec, 3);
	assert_int_equal(c.policy.headroom_percent, RPM_DEF_HEADROOM_PERCENT);
	conf_free(&c);
}

static void test_duplicates_last_wins(void **state)
{
	struct logbuf lb = { 0 };
	struct rpm_config c;
	char path[PATH_MAX];
	unsigned w = 0;

	(void)state;
	conf_defaults(&c);
	assert_int_equal(load(&c, "dup.conf", NULL, &lb, &w), 0);
	fx(path, "dup.conf");
	/* The bad third value keeps the second, not the default. */
	assert_int_equal(c.policy.headroom_percent, 30);
	expect_msg(&lb, path, 4, "HeadroomPercent");
	assert_int_equal(c.psi_stall_usec, 200000);
	assert_int_equal(w, 1);
	conf_free(&c);
}

static void test_stall_window(void **state)
{
	struct logbuf lb = { 0 };
	struct rpm_config c;
	unsigned w = 0;

	(void)state;
	conf_defaults(&c);
	assert_int_equal(load(&c, "stall-window.conf", NULL, &lb, &w), 0);
	assert_int_equal(w, 1);
	assert_non_null(strstr(lb.msg[0], "StallUSec=2000000 exceeds WindowUSec=1000000"));
	assert_int_equal(c.psi_window_usec, 1000000);
	assert_true(c.psi_stall_usec <= c.psi_window_usec);
	conf_free(&c);
}

static void test_long_and_indented_lines(void **state)
{
	struct logbuf lb = { 0 };
	struct rpm_config c;
	char path[PATH_MAX];
	unsigned w = 0;

	(void)state;
	conf_defaults(&c);
	assert_int_equal(load(&c, "long-line.conf", NULL, &lb, &w), 0);
	fx(path, "long-line.conf");
	expect_msg(&lb, path, 2, "line longer than 65536 bytes");
	assert_int_equal(w, 1);
	assert_false(c.policy.park);	/* the line after it still counts */
	assert_true(c.policy.bias);

	lb.n = 0;
	assert_int_equal(load(&c, "indented-continuation.conf", NULL, &lb, &w), 0);
	fx(path, "indented-continuation.conf");
	assert_int_equal(c.policy.headroom_percent, 33);
	expect_msg(&lb, path, 3, "syntax error");
	/* systemd has no inline comments: "no ; ..." is not a boolean */
	expect_msg(&lb, path, 4, "invalid boolean");
	assert_true(c.policy.park);
	assert_int_equal(w, 2);
	conf_free(&c);
}

/* systemd.syntax(7): blanks, comments, continuations, time spans. */
static void test_systemd_syntax(void **state)
{
	struct logbuf lb = { 0 };
	struct rpm_config c;
	char path[PATH_MAX];
	unsigned w = 0;

	(void)state;
	conf_defaults(&c);
	assert_int_equal(load(&c, "systemd-syntax.conf", NULL, &lb, &w), 0);
	fx(path, "systemd-syntax.conf");
	assert_int_equal(c.policy.headroom_percent, 27);	/* blanks around = */
	assert_int_equal(c.policy.budget_pages_per_sec, 5000);	/* continuation past a comment */
	assert_int_equal(c.policy.min_idle_age_sec, 90);	/* "1min \" + "30s" */
	expect_msg(&lb, path, 10, "not a whole number of seconds");
	assert_int_equal(c.policy.pingpong_window_sec, RPM_DEF_PINGPONG_WINDOW_SEC);
	assert_int_equal(c.policy.payback_sec, 5400);		/* 1h 30min */
	expect_msg(&lb, path, 13, "IntervalSec=500ms is not a whole number of seconds");
	assert_int_equal(c.interval_sec, 5);
	assert_int_equal(c.psi_window_usec, 2000000);
	assert_int_equal(c.psi_stall_usec, 250000);
	assert_int_equal(c.idle_sample_sec, 10);		/* "10 s" */
	assert_int_equal(c.policy.pressure_backoff_sec, 300);	/* "5 min " */
	expect_msg(&lb, path, 21, "invalid time span");	/* a bare number among units */
	expect_msg(&lb, path, 22, "syntax error");		/* "[Policy]]" */
	expect_msg(&lb, path, 23, "outside of any section");
	assert_true(c.policy.park);
	expect_msg(&lb, path, 25, "invalid time span");	/* backslash at the end of the file */
	assert_int_equal(w, 6);
	conf_free(&c);
}

static void test_timespan(void **state)
{
	static const struct {
		const char *in;
		uint64_t bare, want;
		int r;
	} t[] = {
		{ "30", 1000000, 30000000, 0 }, { "30", 1, 30, 0 }, { "30s", 1, 30000000, 0 },
		{ "5min", 1, 300000000, 0 }, { "1h 30min", 1, 5400000000ULL, 0 },
		{ "2min30s", 1, 150000000, 0 }, { "1.5s", 1, 1500000, 0 },
		{ "100ms", 1, 100000, 0 }, { "250us", 1000000, 250, 0 },
		{ "1d", 1, 86400000000ULL, 0 }, { "1w", 1, 604800000000ULL, 0 },
		{ " 7 sec ", 1, 7000000, 0 }, { "0", 1000000, 0, 0 },
		{ "", 1, 0, -EINVAL }, { "s", 1, 0, -EINVAL }, { "5 parsecs", 1, 0, -EINVAL },
		{ "-5s", 1, 0, -EINVAL }, { "1.s", 1, 0, -EINVAL }, { "0.0000001s", 1, 0, -EINVAL },
		{ "3 7s", 1, 0, -EINVAL }, { "5s 3", 1, 0, -EINVAL }, { "0x10", 1, 0, -EINVAL },
		{ "99999999999999999999s", 1, 0, -ERANGE }, { "999999999999w", 1, 0, -ERANGE },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t v = 12345;
		int r = conf_parse_timespan(t[i].in, t[i].bare, &v);

		if (r != t[i].r)
			fail_msg("\"%s\": returned %d, expected %d", t[i].in, r, t[i].r);
		if (!r && v != t[i].want)
			fail_msg("\"%s\": %llu, expected %llu", t[i].in, (unsigned long long)v,
				 (unsigned long long)t[i].want);
	}
}

static void test_metrics_file(void **state)
{
	static const char *const bad[] = {
		"relative.prom", "/var/lib/x.txt", "/.prom", "/a/../b.prom", "/a//b.prom",
		"/a/./b.prom", "/dir/", "/x\tb.prom",
	};
	struct rpm_config c;
	char err[256];

	(void)state;
	conf_defaults(&c);
	assert_null(c.metrics_file);
	assert_int_equal(conf_set(&c, "MetricsFile", "/run/regionpmd/regionpm.prom", err,
				  sizeof(err)), 0);
	assert_string_equal(c.metrics_file, "/run/regionpmd/regionpm.prom");
	assert_get(&c, "Daemon.MetricsFile", "/run/regionpmd/regionpm.prom");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(conf_set(&c, "Daemon.MetricsFile", bad[i], err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "MetricsFile"));
		/* a refused value loses nothing */
		assert_string_equal(c.metrics_file, "/run/regionpmd/regionpm.prom");
	}
	assert_int_equal(conf_set(&c, "MetricsFile", "", err, sizeof(err)), 0);
	assert_null(c.metrics_file);
	conf_free(&c);
}

/* /etc, /run, /usr/lib: sorted by file name across the directories, a name in
 * an earlier directory masks the same name in a later one. */
static void test_dropin_dirs(void **state)
{
	struct logbuf lb = { 0 };
	struct rpm_config c;
	char e[PATH_MAX], r[PATH_MAX], l[PATH_MAX];
	const char *dirs[] = { fx(e, "dirs/etc"), fx(r, "dirs/run"), fx(l, "dirs/lib"), NULL };
	unsigned w = 0;

	(void)state;
	conf_defaults(&c);
	assert_int_equal(conf_load(&c, NULL, dirs, capture, &lb, &w), 0);
	assert_int_equal(w, 0);
	/* lib/10-vendor, etc/50-site, run/60-run: the last HeadroomPercent wins */
	assert_int_equal(c.policy.headroom_percent, 60);
	assert_false(c.policy.park);			/* lib/10-vendor, not masked */
	assert_true(c.policy.bias);			/* run/50-site is masked by etc/50-site */
	assert_int_equal(c.policy.payback_sec, 3600);	/* run/60-run masks lib/60-run */
	assert_true(c.policy.drop_cache);		/* empty etc/70-masked masks lib's */
	conf_free(&c);
}

/* Main file, then 10-first, 20-second, 30-reset; README, dot files and directories skipped. */
static void test_dropins(void **state)
{
	struct logbuf lb = { 0 };
	struct rpm_config c;
	char path[PATH_MAX];
	unsigned w = 0;

	(void)state;
	conf_defaults(&c);
	assert_int_equal(load(&c, "main.conf", "dropin.d", &lb, &w), 0);
	assert_int_equal(c.policy.headroom_percent, 22);	/* 20-second beats 10-first beats main */
	assert_int_equal(c.policy.budget_pages_per_sec, 1111);	/* 10-first beats main */
	assert_int_equal(c.policy.payback_sec, 200);
	/* 30-reset emptied the list and added one. */
	assert_int_equal(c.n_protected, 1);
	assert_string_equal(c.protected_cgroups[0], "/last.slice");
	fx(path, "dropin.d/10-first.conf");
	expect_msg(&lb, path, 4, "PaybackSec");
	assert_int_equal(w, 1);

	/* Drop-ins alone, no main file. */
	lb.n = 0;
	assert_int_equal(load(&c, NULL, "dropin.d", &lb, &w), 0);
	assert_int_equal(c.policy.headroom_percent, 22);
	assert_int_equal(c.policy.budget_pages_per_sec, 1111);
	assert_int_equal(c.policy.payback_sec, 200);

	/* Main file alone: drop-ins' values gone again. */
	assert_int_equal(load(&c, "main.conf", NULL, &lb, &w), 0);
	assert_int_equal(c.policy.headroom_percent, 11);
	assert_int_equal(c.policy.budget_pages_per_sec, 1000);
	assert_int_equal(c.n_protected, 1);
	assert_string_equal(c.protected_cgroups[0], "/main.slice");
	conf_free(&c);
}

/* HeadroomPercent=auto from a file, blanks around '=' as systemd allows. */
static void test_headroom_auto_file(void **state)
{
	struct logbuf lb = { 0 };
	struct rpm_config c;
	unsigned w = 0;
	char buf[16];

	(void)state;
	conf_defaults(&c);
	assert_int_equal(load(&c, "auto.conf", NULL, &lb, &w), 0);
	assert_int_equal(w, 0);
	assert_int_equal(c.policy.headroom_percent, RPM_HEADROOM_AUTO);
	assert_int_equal(c.policy.hysteresis_percent, 4);
	assert_int_equal(conf_get(&c, "HeadroomPercent", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "auto");
	conf_free(&c);
}

/* SIGHUP: loading twice gives the same config, no duplicated list entries. */
static void test_reload_idempotent(void **state)
{
	struct rpm_config a, b;
	struct logbuf lb = { 0 };
	unsigned w1, w2;

	(void)state;
	conf_defaults(&a);
	conf_defaults(&b);
	assert_int_equal(load(&a, "full.conf", "dropin.d", &lb, &w1), 0);
	assert_int_equal(load(&b, "full.conf", "dropin.d", &lb, &w2), 0);
	assert_int_equal(load(&b, "full.conf", "dropin.d", &lb, &w2), 0);
	assert_int_equal(w1, w2);
	for (size_t i = 0; conf_key_name(i); i++) {
		char va[1024], vb[1024];

		assert_int_equal(conf_get(&a, conf_key_name(i), va, sizeof(va)), 0);
		assert_int_equal(conf_get(&b, conf_key_name(i), vb, sizeof(vb)), 0);
		assert_string_equal(va, vb);
	}
	assert_int_equal(a.n_protected, b.n_protected);
	assert_int_equal(memcmp(&a.policy, &b.policy, sizeof(a.policy)), 0);
	conf_free(&a);
	conf_free(&b);
}

static void test_unreadable_keeps_old(void **state)
{
	struct logbuf lb = { 0 };
	struct rpm_config c;
	unsigned w;

	(void)state;
	conf_defaults(&c);
	assert_int_equal(load(&c, "full.conf", NULL, &lb, &w), 0);
	/* A directory where the main file should be cannot be read. */
	assert_int_equal(load(&c, "dropin.d", NULL, &lb, &w), -EISDIR);
	/* A file where the drop-in directory should be. */
	assert_int_equal(load(&c, NULL, "main.conf", &lb, &w), -ENOTDIR);
	/* The config of the last good load is still there, intact. */
	assert_int_equal(c.interval_sec, 7);
	assert_int_equal(c.n_protected, 2);
	assert_string_equal(c.protected_cgroups[1], "/user.slice");
	conf_free(&c);
}

static void test_set_and_get(void **state)
{
	struct rpm_config c;
	char err[256], buf[64];

	(void)state;
	conf_defaults(&c);
	assert_int_equal(conf_set(&c, "Policy.HeadroomPercent", "20", err, sizeof(err)), 0);
	assert_int_equal(c.policy.headroom_percent, 20);
	assert_int_equal(conf_set(&c, "HeadroomPercent", "21", err, sizeof(err)), 0);
	assert_int_equal(c.policy.headroom_percent, 21);

	/* Unknown keys. */
	assert_int_equal(conf_set(&c, "Policy.Nope", "1", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "unknown key Policy.Nope"));
	assert_int_equal(conf_set(&c, "Daemon.HeadroomPercent", "1", err, sizeof(err)), -ENOENT);
	assert_int_equal(conf_set(&c, "Nope", "1", err, sizeof(err)), -ENOENT);
	assert_int_equal(conf_get(&c, "Nope", buf, sizeof(buf)), -ENOENT);

	/* Bad syntax is -EINVAL, out of range -ERANGE, and nothing changes. */
	assert_int_equal(conf_set(&c, "HeadroomPercent", "abc", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "HeadroomPercent"));
	assert_int_equal(conf_set(&c, "HeadroomPercent", "-1", err, sizeof(err)), -EINVAL);
	assert_int_equal(conf_set(&c, "HeadroomPercent", " 5", err, sizeof(err)), -EINVAL);
	assert_int_equal(conf_set(&c, "HeadroomPercent", "", err, sizeof(err)), -EINVAL);
	assert_int_equal(conf_set(&c, "HeadroomPercent", "91", err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "out of range [0, 90] (or auto)"));
	assert_int_equal(conf_set(&c, "HeadroomPercent", "Auto", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "want auto or a number"));
	assert_int_equal(conf_set(&c, "HeadroomPercent", "auto ", err, sizeof(err)), -EINVAL);
	assert_int_equal(conf_set(&c, "HeadroomPercent", "autox", err, sizeof(err)), -EINVAL);
	/* Stored as UINT_MAX, but only the word sets it. */
	assert_int_equal(conf_set(&c, "HeadroomPercent", "4294967295", err, sizeof(err)), -ERANGE);
	assert_int_equal(conf_set(&c, "HeadroomPercent", "18446744073709551616", err, sizeof(err)), -ERANGE);
	assert_int_equal(conf_set(&c, "IntervalSec", "4294967297", err, sizeof(err)), -ERANGE);
	assert_int_equal(c.policy.headroom_percent, 21);
	assert_int_equal(conf_get(&c, "HeadroomPercent", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "21");
	/* auto and back: the sliding scale, then a flat share again. */
	assert_int_equal(conf_set(&c, "HeadroomPercent", "auto", err, sizeof(err)), 0);
	assert_int_equal(c.policy.headroom_percent, RPM_HEADROOM_AUTO);
	assert_int_equal(conf_get(&c, "Policy.HeadroomPercent", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "auto");
	assert_int_equal(conf_set(&c, "HeadroomPercent", "0", err, sizeof(err)), 0);
	assert_int_equal(c.policy.headroom_percent, 0);
	assert_int_equal(conf_set(&c, "HeadroomPercent", "21", err, sizeof(err)), 0);
	assert_int_equal(conf_set(&c, "Park", "perhaps", err, sizeof(err)), -EINVAL);
	assert_true(c.policy.park);
	assert_int_equal(conf_set(&c, "RegionSavingMilliwatt", "inf", err, sizeof(err)), -EINVAL);
	assert_int_equal(conf_set(&c, "RegionSavingMilliwatt", "1e400", err, sizeof(err)), -ERANGE);
	assert_int_equal(conf_set(&c, "RegionSavingMilliwatt", "2000000", err, sizeof(err)), -ERANGE);
	assert_int_equal(conf_set(&c, "RegionSavingMilliwatt", "0x10", err, sizeof(err)), -EINVAL);
	assert_int_equal(conf_set(&c, "RegionSavingMilliwatt", "7.5", err, sizeof(err)), 0);
	assert_true(c.policy.region_saving_mw == 7.5);
	/* NULL err buffer is allowed. */
	assert_int_equal(conf_set(&c, "Park", "perhaps", NULL, 0), -EINVAL);

	/* Cross check: the stall must fit in the window, in either order. */
	assert_int_equal(conf_set(&c, "StallUSec", "1000001", err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "exceeds WindowUSec"));
	assert_int_equal(conf_set(&c, "WindowUSec", "600000", err, sizeof(err)), 0);
	assert_int_equal(conf_set(&c, "StallUSec", "700000", err, sizeof(err)), -ERANGE);
	assert_int_equal(c.psi_stall_usec, 100000);
	assert_int_equal(conf_set(&c, "StallUSec", "60000", err, sizeof(err)), 0);
	assert_int_equal(conf_set(&c, "WindowUSec", "50000", err, sizeof(err)), -ERANGE);

	/* Percentages. */
	assert_int_equal(conf_set(&c, "SomeAvg10MaxPercent", "0.5", err, sizeof(err)), 0);
	assert_int_equal(c.policy.psi_some_avg10_max, 50);
	assert_int_equal(conf_set(&c, "SomeAvg10MaxPercent", "7%", err, sizeof(err)), 0);
	assert_int_equal(c.policy.psi_some_avg10_max, 700);
	assert_int_equal(conf_set(&c, "SomeAvg10MaxPercent", "100", err, sizeof(err)), 0);
	assert_int_equal(c.policy.psi_some_avg10_max, 10000);
	assert_int_equal(conf_set(&c, "SomeAvg10MaxPercent", "100.01", err, sizeof(err)), -ERANGE);
	assert_int_equal(conf_set(&c, "SomeAvg10MaxPercent", "1.234", err, sizeof(err)), -EINVAL);
	assert_int_equal(conf_set(&c, "SomeAvg10MaxPercent", "1.", err, sizeof(err)), -EINVAL);
	assert_int_equal(conf_set(&c, "SomeAvg10MaxPercent", ".5", err, sizeof(err)), -EINVAL);
	assert_int_equal(conf_set(&c, "SomeAvg10MaxPercent", "%", err, sizeof(err)), -EINVAL);
	assert_int_equal(c.policy.psi_some_avg10_max, 10000);

	/* Booleans, every spelling. */
	static const char *const yes[] = { "yes", "true", "on", "1", "YES", "True" };
	static const char *const no[] = { "no", "false", "off", "0", "NO", "Off" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		assert_int_equal(conf_set(&c, "Policy.DropCache", no[i], err, sizeof(err)), 0);
		assert_false(c.policy.drop_cache);
		assert_int_equal(conf_set(&c, "Policy.DropCache", yes[i], err, sizeof(err)), 0);
		assert_true(c.policy.drop_cache);
	}
	conf_free(&c);
}

static void test_set_cgroups(void **state)
{
	struct rpm_config c;
	char err[256], buf[4096], path[64];

	(void)state;
	conf_defaults(&c);
	assert_int_equal(conf_set(&c, "Cgroup", "/a.slice", err, sizeof(err)), 0);
	assert_int_equal(conf_set(&c, "Protect.Cgroup", "/b.slice/c.service", err, sizeof(err)), 0);
	assert_int_equal(conf_set(&c, "Cgroup", "/a.slice", err, sizeof(err)), 0);	/* no duplicate */
	assert_get(&c, "Cgroup", "/a.slice /b.slice/c.service");
	assert_int_equal(conf_set(&c, "Cgroup", "a.slice", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "invalid cgroup path"));
	assert_int_equal(conf_set(&c, "Cgroup", "/a//b", err, sizeof(err)), -EINVAL);
	assert_int_equal(conf_set(&c, "Cgroup", "/a/./b", err, sizeof(err)), -EINVAL);
	assert_int_equal(c.n_protected, 2);
	assert_int_equal(conf_set(&c, "Cgroup", "", err, sizeof(err)), 0);
	assert_int_equal(c.n_protected, 0);
	for (int i = 0; i < RPM_MAX_PROTECTED; i++) {
		snprintf(path, sizeof(path), "/s%d.slice", i);
		assert_int_equal(conf_set(&c, "Cgroup", path, err, sizeof(err)), 0);
	}
	assert_int_equal(conf_set(&c, "Cgroup", "/one-too-many", err, sizeof(err)), -ERANGE);
	assert_int_equal(c.n_protected, RPM_MAX_PROTECTED);
	assert_int_equal(conf_get(&c, "Cgroup", buf, 16), -ENOBUFS);
	assert_int_equal(conf_get(&c, "Cgroup", buf, sizeof(buf)), 0);
	conf_free(&c);
	assert_int_equal(c.n_protected, 0);
}

/* conf_get's output is accepted by conf_set: one validator for both. */
static void test_get_set_roundtrip(void **state)
{
	struct rpm_config c;
	struct logbuf lb = { 0 };
	unsigned w;

	(void)state;
	conf_defaults(&c);
	assert_int_equal(load(&c, "full.conf", NULL, &lb, &w), 0);
	for (size_t i = 0; conf_key_name(i); i++) {
		const char *k = conf_key_name(i);
		char v[1024], v2[1024], err[256];

		if (!strcmp(k, "Protect.Cgroup"))
			continue;	/* a list; conf_set adds one entry */
		assert_int_equal(conf_get(&c, k, v, sizeof(v)), 0);
		if (conf_set(&c, k, v, err, sizeof(err)))
			fail_msg("%s=%s refused: %s", k, v, err);
		assert_int_equal(conf_get(&c, k, v2, sizeof(v2)), 0);
		assert_string_equal(v, v2);
	}
	conf_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_missing_files),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_duplicates_last_wins),
		cmocka_unit_test(test_stall_window),
		cmocka_unit_test(test_long_and_indented_lines),
		cmocka_unit_test(test_systemd_syntax),
		cmocka_unit_test(test_timespan),
		cmocka_unit_test(test_dropin_dirs),
		cmocka_unit_test(test_metrics_file),
		cmocka_unit_test(test_dropins),
		cmocka_unit_test(test_headroom_auto_file),
		cmocka_unit_test(test_reload_idempotent),
		cmocka_unit_test(test_unreadable_keeps_old),
		cmocka_unit_test(test_set_and_get),
		cmocka_unit_test(test_set_cgroups),
		cmocka_unit_test(test_get_set_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
