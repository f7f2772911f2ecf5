// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of daemon/metrics.c: the Prometheus text against a fixture
 * (daemon/fixtures/metrics/), and the atomic file replacement.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
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

#include "metrics.h"

static const struct rpm_metrics example = {
	.regions_in_use = 5, .regions_empty = 2, .regions_parked = 8, .regions_busy = 1,
	.region_size_bytes = 134217728,
	.pages_migrated = 123456, .pages_dropped = 7890, .pages_failed = 12,
	.compactions = 40, .parks = 9, .unparks = 1, .released_by_kernel = 0, .errors = 3,
	.modelled_power_mw = 812.5, .power_down_ratio = 0.5, .paused = false,
};

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static const char *fixture(char *buf, const char *rel)
{
	const char *f = getenv("REGIONPM_FIXTURES");

	snprintf(buf, PATH_MAX, "%s/metrics/%s", f && *f ? f : "daemon/fixtures", rel);
	return buf;
}

static void test_format(void **state)
{
	char path[PATH_MAX], *got = NULL, *want;
	size_t glen = 0, wlen;
	FILE *f;

	(void)state;
	f = open_memstream(&got, &glen);
	assert_non_null(f);
	assert_int_equal(metrics_format(f, &example), 0);
	fclose(f);
	want = slurp(fixture(path, "example.prom"), &wlen);
	assert_non_null(want);
	assert_string_equal(got, want);
	free(got);
	free(want);
}

/* The paused gauge is 1 for a pause and for a dry run. */
static void test_paused(void **state)
{
	struct rpm_metrics mx = example;
	char *got = NULL;
	size_t glen = 0;
	FILE *f;

	(void)state;
	mx.dry_run = true;
	f = open_memstream(&got, &glen);
	assert_int_equal(metrics_format(f, &mx), 0);
	fclose(f);
	assert_non_null(strstr(got, "\nregionpm_paused 1\n"));
	free(got);
}

static unsigned count_files(const char *dir)
{
	struct dirent *de;
	unsigned n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.' || (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."));
	closedir(d);
	return n;
}

static void test_write(void **state)
{
	char dir[] = "/tmp/test-metrics.XXXXXX", path[PATH_MAX], missing[PATH_MAX];
	char *got, *want = NULL;
	size_t glen, wlen = 0;
	struct rpm_metrics mx = example;
	struct stat st;
	mode_t old;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/regionpm.prom", dir);
	old = umask(077);	/* the unit's UMask=0077 */
	assert_int_equal(metrics_write(path, &mx), 0);
	/* replaced, not appended to */
	mx.errors = 4;
	assert_int_equal(metrics_write(path, &mx), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	got = slurp(path, &glen);
	f = open_memstream(&want, &wlen);
	metrics_format(f, &mx);
	fclose(f);
	assert_string_equal(got, want);
	assert_non_null(strstr(got, "\nregionpm_errors_total 4\n"));
	assert_int_equal(count_files(dir), 1);	/* no temporary file left */
	free(got);
	free(want);

	/* a directory that does not exist: an error, nothing created */
	snprintf(missing, sizeof(missing), "%s/no-such-dir/regionpm.prom", dir);
	assert_int_equal(metrics_write(missing, &mx), -ENOENT);
	assert_int_equal(count_files(dir), 1);
	/* a directory where the file should be: an error, the temp file gone */
	unlink(path);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(metrics_write(path, &mx), -EISDIR);
	assert_int_equal(count_files(dir), 1);
	rmdir(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_paused),
		cmocka_unit_test(test_write),
	};

	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
