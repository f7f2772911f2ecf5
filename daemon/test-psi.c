// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the PSI monitor: on a fixture root (a plain file, where
 * the kernel's trigger is not available) it falls back to polling avg10
 * and calls back only when avg10 reaches STALL/WINDOW.
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
#include "psi-monitor.h"

static char root[256];

static void write_psi(const char *some_avg10)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/proc/pressure/memory", root);
	f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "some avg10=%s avg60=0.00 avg300=0.00 total=1000\n"
		   "full avg10=0.00 avg60=0.00 avg300=0.00 total=10\n", some_avg10);
	fclose(f);
}

static int setup(void **state)
{
	char p[512];

	(void)state;
	snprintf(root, sizeof(root), "/tmp/test-psi.XXXXXX");
	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/proc", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/proc/pressure", root);
	mkdir(p, 0755);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void on_psi(struct psi_monitor *m, void *userdata)
{
	(void)m;
	++*(int *)userdata;
}

static void test_read_avg10(void **state)
{
	unsigned some, full;

	(void)state;
	write_psi("12.34");
	assert_int_equal(psi_read_avg10(root, &some, &full), 0);
	assert_int_equal(some, 1234);
	assert_int_equal(full, 0);
	assert_int_equal(psi_read_avg10("/nonexistent", &some, &full), -ENOENT);
}

static void test_fallback_poll(void **state)
{
	struct psi_monitor *m = NULL;
	sd_event *e = NULL;
	int calls = 0;

	(void)state;
	write_psi("0.50");		/* below 100 ms / 1 s = 10 % */
	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(psi_monitor_new(e, root, 100000, 1000000, 1, on_psi, &calls, &m), 0);
	assert_false(psi_monitor_uses_trigger(m));
	for (int i = 0; i < 3; i++)
		sd_event_run(e, 1500000);
	assert_int_equal(calls, 0);
	write_psi("25.00");
	for (int i = 0; i < 3 && !calls; i++)
		sd_event_run(e, 1500000);
	assert_true(calls > 0);
	psi_monitor_free(m);
	sd_event_unref(e);
}

static void test_bad_window(void **state)
{
	struct psi_monitor *m = NULL;
	sd_event *e = NULL;
	int calls = 0;

	(void)state;
	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(psi_monitor_new(e, root, 2000000, 1000000, 1, on_psi, &calls, &m), -EINVAL);
	sd_event_unref(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read_avg10, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fallback_poll, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_window, setup, teardown),
	};

	rpm_log_max_level = LOG_WARNING;	/* keep the TAP output clean */
	return cmocka_run_group_tests_name("psi-monitor", tests, NULL, NULL);
}
