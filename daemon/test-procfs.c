// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of daemon/procfs-util.c with the files in daemon/fixtures/
 * (root/ is a fake / with proc files, procfs/ holds good and malformed
 * variants).  REGIONPM_FIXTURES overrides the fixture directory.
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

#include <cmocka.h>

#include "procfs-util.h"

static const char *fixtures(void)
{
	const char *f = getenv("REGIONPM_FIXTURES");

	return f && *f ? f : "daemon/fixtures";
}

/* The fake / with proc/ in it. */
static const char *root(void)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/root", fixtures());
	return path;
}

/* Text of fixtures/procfs/name; the buffer is static to the test. */
static const char *text(const char *name, char *buf, size_t size)
{
	char rel[256];
	ssize_t n;

	snprintf(rel, sizeof(rel), "procfs/%s", name);
	n = procfs_read_file(fixtures(), rel, buf, size);
	if (n < 0)
		fail_msg("cannot read fixture %s: %s", name, strerror((int)-n));
	return buf;
}

static char buf[65536];

/* ---- read_file -------------------------------------------------------- */

static void test_read_file(void **state)
{
	char small[16], rootslash[PATH_MAX + 2];
	ssize_t n;

	(void)state;
	n = procfs_read_file(root(), "/proc/pressure/memory", buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(buf));
	assert_non_null(strstr(buf, "some avg10=12.34"));
	/* Without a leading slash, and with the root given with a trailing one. */
	snprintf(rootslash, sizeof(rootslash), "%s/", root());
	assert_int_equal(procfs_read_file(rootslash, "proc/pressure/memory", buf, sizeof(buf)), n);

	assert_int_equal(procfs_read_file(root(), "/proc/nope", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(procfs_read_file(root(), "/proc/meminfo", small, sizeof(small)), -EFBIG);
	assert_int_equal(procfs_read_file(root(), "/proc/meminfo", small, 0), -EINVAL);
	/* A directory cannot be read. */
	assert_int_equal(procfs_read_file(root(), "/proc", buf, sizeof(buf)), -EISDIR);
	/* Empty file: length 0, empty string. */
	assert_int_equal(procfs_read_file(fixtures(), "procfs/empty", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");

	/* Exactly size - 1 bytes fits; one byte less of room does not. */
	n = procfs_read_file(root(), "/proc/pressure/memory", buf, sizeof(buf));
	assert_int_equal(procfs_read_file(root(), "/proc/pressure/memory", buf, (size_t)n + 1), n);
	assert_int_equal(procfs_read_file(root(), "/proc/pressure/memory", buf, (size_t)n), -EFBIG);

	/* A real /proc file through the NULL root. */
	assert_true(procfs_read_file(NULL, "/proc/self/stat", buf, sizeof(buf)) > 0);
}

/* ---- PSI -------------------------------------------------------------- */

static void test_pressure_ok(void **state)
{
	struct rpm_pressure p;

	(void)state;
	assert_int_equal(procfs_parse_pressure(text("pressure-ok", buf, sizeof(buf)), &p), 0);
	assert_int_equal(p.some.avg10, 1234);
	assert_int_equal(p.some.avg60, 506);
	assert_int_equal(p.some.avg300, 120);
	assert_int_equal(p.some.total_usec, 98765432);
	assert_true(p.has_full);
	assert_int_equal(p.full.avg10, 350);
	assert_int_equal(p.full.avg60, 91);
	assert_int_equal(p.full.avg300, 2);
	assert_int_equal(p.full.total_usec, 1234567);

	/* The same through the file form under the fixture root. */
	memset(&p, 0xff, sizeof(p));
	assert_int_equal(procfs_read_pressure(root(), &p), 0);
	assert_int_equal(p.some.avg10, 1234);
	assert_int_equal(p.full.total_usec, 1234567);
}

static void test_pressure_variants(void **state)
{
	struct rpm_pressure p;

	(void)state;
	assert_int_equal(procfs_parse_pressure(text("pressure-some-only", buf, sizeof(buf)), &p), 0);
	assert_false(p.has_full);
	assert_int_equal(p.some.avg10, 0);
	/* A key a newer kernel might add is skipped. */
	assert_int_equal(procfs_parse_pressure(text("pressure-extra-field", buf, sizeof(buf)), &p), 0);
	assert_true(p.has_full);
	/* Short decimals and no decimals are still exact. */
	assert_int_equal(procfs_parse_pressure("some avg10=7.5 avg60=3 avg300=0.07 total=1\n", &p), 0);
	assert_int_equal(p.some.avg10, 750);
	assert_int_equal(p.some.avg60, 300);
	assert_int_equal(p.some.avg300, 7);
	/* No trailing newline. */
	assert_int_equal(procfs_parse_pressure("some avg10=1.00 avg60=0.00 avg300=0.00 total=5", &p), 0);
	assert_int_equal(p.some.total_usec, 5);
}

static void test_pressure_malformed(void **state)
{
	static const char *const bad[] = {
		"pressure-bad-number", "pressure-truncated", "pressure-overflow",
		"pressure-duplicate", "pressure-garbage", "empty",
	};
	static const char *const bad_strings[] = {
		"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",	/* no some */
		"some avg10=0.00 avg60=0.00 total=0\n",			/* no avg300 */
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=1x\n",
		"some avg10= avg60=0.00 avg300=0.00 total=1\n",
		"some avg10=1. avg60=0.00 avg300=0.00 total=1\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=0 junk\n",
		"some avg10=0.00 avg60=0.00 avg300=0.00 total=0 =3\n",
		"some avg10=99999999999.00 avg60=0.00 avg300=0.00 total=0\n",
		"someavg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"some\n",
	};
	struct rpm_pressure p;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (procfs_parse_pressure(text(bad[i], buf, sizeof(buf)), &p) != -EBADMSG)
			fail_msg("fixture %s was accepted", bad[i]);
	for (size_t i = 0; i < sizeof(bad_strings) / sizeof(bad_strings[0]); i++)
		if (procfs_parse_pressure(bad_strings[i], &p) != -EBADMSG)
			fail_msg("\"%s\" was accepted", bad_strings[i]);
	assert_int_equal(procfs_parse_pressure(NULL, &p), -EINVAL);
	assert_int_equal(procfs_read_pressure("/nonexistent-root", &p), -ENOENT);
}

/* ---- meminfo ---------------------------------------------------------- */

static void check_meminfo_fixture(const struct rpm_meminfo *m)
{
	assert_int_equal(m->mem_total_kb, 24683568);
	assert_int_equal(m->mem_free_kb, 23356712);
	assert_int_equal(m->mem_available_kb, 24181192);
	assert_int_equal(m->buffers_kb, 19420);
	assert_int_equal(m->cached_kb, 649872);
	assert_int_equal(m->dirty_kb, 1416);
	assert_int_equal(m->writeback_kb, 0);
	assert_int_equal(m->anon_pages_kb, 13244);
	assert_int_equal(m->shmem_kb, 9508);
	assert_int_equal(m->page_tables_kb, 2704);
	assert_int_equal(m->hugepages_total, 0);	/* a count without kB */
	assert_int_equal(m->hugepagesize_kb, 2048);
}

static void test_meminfo_ok(void **state)
{
	struct rpm_meminfo m;

	(void)state;
	assert_int_equal(procfs_parse_meminfo(text("meminfo-ok", buf, sizeof(buf)), &m), 0);
	check_meminfo_fixture(&m);
	memset(&m, 0xff, sizeof(m));
	assert_int_equal(procfs_read_meminfo(root(), &m), 0);
	check_meminfo_fixture(&m);
	/* The running kernel's file parses too. */
	assert_int_equal(procfs_read_meminfo(NULL, &m), 0);
	assert_true(m.mem_total_kb > 0);
	assert_true(m.mem_available_kb <= m.mem_total_kb);

	assert_int_equal(procfs_kb_to_pages(m.mem_total_kb, 4096), m.mem_total_kb / 4);
	assert_int_equal(procfs_kb_to_pages(10, 4096), 2);
	assert_int_equal(procfs_kb_to_pages(10, 65536), 0);
	assert_int_equal(procfs_kb_to_pages(10, 0), 0);
	assert_int_equal(procfs_kb_to_pages(10, 1000), 0);
}

static void test_meminfo_malformed(void **state)
{
	static const char *const bad[] = {
		"meminfo-no-available", "meminfo-bad-number", "meminfo-overflow",
		"meminfo-no-colon", "meminfo-bad-unit", "meminfo-truncated",
		"meminfo-garbled", "empty", "pressure-ok", "vmstat-ok",
	};
	struct rpm_meminfo m;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (procfs_parse_meminfo(text(bad[i], buf, sizeof(buf)), &m) != -EBADMSG)
			fail_msg("fixture %s was accepted", bad[i]);
	assert_int_equal(procfs_parse_meminfo("MemTotal: 1 kB\nMemFree: 1 kB\n: 5 kB\n", &m), -EBADMSG);
	assert_int_equal(procfs_parse_meminfo(NULL, &m), -EINVAL);
	/* The minimum that is accepted. */
	assert_int_equal(procfs_parse_meminfo("MemTotal: 8 kB\nMemFree: 2 kB\nMemAvailable: 4 kB", &m), 0);
	assert_int_equal(m.mem_available_kb, 4);
	assert_int_equal(m.cached_kb, 0);
}

/* ---- vmstat ----------------------------------------------------------- */

static void check_vmstat_fixture(const struct rpm_vmstat *v)
{
	assert_int_equal(v->pgmigrate_success, 1843211);
	assert_int_equal(v->pgmigrate_fail, 3907);
	assert_int_equal(v->compact_stall, 412);
	assert_int_equal(v->compact_fail, 97);
	assert_int_equal(v->compact_success, 315);
	assert_int_equal(v->pgmajfault, 12023);
	assert_int_equal(v->workingset_refault_file, 2563349);
	assert_int_equal(v->nr_file_pages, 167323);
	assert_int_equal(v->allocstall, 21 + 1034);	/* summed over zones */
	assert_int_equal(v->oom_kill, 0);
	assert_true(v->n_found >= 20);
}

static void test_vmstat_ok(void **state)
{
	struct rpm_vmstat v;

	(void)state;
	assert_int_equal(procfs_parse_vmstat(text("vmstat-ok", buf, sizeof(buf)), &v), 0);
	check_vmstat_fixture(&v);
	memset(&v, 0xff, sizeof(v));
	assert_int_equal(procfs_read_vmstat(root(), &v), 0);
	check_vmstat_fixture(&v);
	assert_int_equal(procfs_read_vmstat(NULL, &v), 0);
	assert_true(v.n_found > 0);
	/* Missing counters (other kernel config) are not an error. */
	assert_int_equal(procfs_parse_vmstat("pgmajfault 5\n", &v), 0);
	assert_int_equal(v.pgmajfault, 5);
	assert_int_equal(v.pgmigrate_success, 0);
	assert_int_equal(v.n_found, 1);
}

static void test_vmstat_malformed(void **state)
{
	static const char *const bad[] = {
		"vmstat-negative", "vmstat-overflow", "vmstat-missing-value",
		"vmstat-unknown-only", "empty", "meminfo-ok", "pressure-ok",
	};
	struct rpm_vmstat v;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (procfs_parse_vmstat(text(bad[i], buf, sizeof(buf)), &v) != -EBADMSG)
			fail_msg("fixture %s was accepted", bad[i]);
	assert_int_equal(procfs_parse_vmstat("pgmajfault 5 6\n", &v), -EBADMSG);
	assert_int_equal(procfs_parse_vmstat(" 5\n", &v), -EBADMSG);
	assert_int_equal(procfs_parse_vmstat(NULL, &v), -EINVAL);
}

static void test_zoneinfo(void **state)
{
	struct rpm_zoneinfo z;

	(void)state;
	assert_int_equal(procfs_parse_zoneinfo(text("zoneinfo-movable", buf, sizeof(buf)), &z), 0);
	/* DMA, DMA32 and Movable have pages; Normal and Device have none. */
	assert_int_equal(z.zones, 3);
	assert_int_equal(z.managed_pages, 3840 + 254916 + 253044);
	assert_int_equal(z.movable_pages, 253044);
	assert_int_equal(z.movable_zones, 1);
	/*
	 * The kernel's reserve: per zone the high watermark plus the largest
	 * lowmem reserve, at most the zone (DMA: 50 + 2926; DMA32: 6391 +
	 * 980; Movable: 3219); the free pages above those marks.
	 */
	assert_true(z.marks);
	assert_int_equal(z.reserve_pages, 2976 + 7371 + 3219);
	assert_int_equal(z.free_above_marks, (3840 - 2976) + (201883 - 7371) + (250001 - 3219));
	/* Below ZONE_MOVABLE: the room DMA32's pages can move into. */
	assert_int_equal(z.low_reserve_pages, 2976 + 7371);
	assert_int_equal(z.low_free_above_marks, (3840 - 2976) + (201883 - 7371));
	memset(&z, 0xff, sizeof(z));
	assert_int_equal(procfs_read_zoneinfo(root(), &z), 0);
	assert_int_equal(z.movable_pages, 253044);
	assert_int_equal(procfs_parse_zoneinfo(text("zoneinfo-plain", buf, sizeof(buf)), &z), 0);
	assert_int_equal(z.movable_pages, 0);
	assert_int_equal(z.managed_pages, 3840 + 254916);
	/* No ZONE_MOVABLE: the low zones are all of memory. */
	assert_int_equal(z.low_reserve_pages, z.reserve_pages);
	assert_int_equal(z.low_free_above_marks, z.free_above_marks);
	assert_int_equal(procfs_read_zoneinfo(NULL, &z), 0);	/* this machine's */
	assert_true(z.managed_pages > 0);
	/* Garbage is refused, never half read. */
	assert_int_equal(procfs_parse_zoneinfo(text("zoneinfo-garbled", buf, sizeof(buf)), &z), -EBADMSG);
	assert_int_equal(procfs_parse_zoneinfo(text("zoneinfo-bad-number", buf, sizeof(buf)), &z), -EBADMSG);
	assert_int_equal(procfs_parse_zoneinfo(text("meminfo-ok", buf, sizeof(buf)), &z), -EBADMSG);
	assert_int_equal(procfs_parse_zoneinfo("", &z), -EBADMSG);
	assert_int_equal(procfs_parse_zoneinfo(NULL, &z), -EINVAL);
	/* A zone without the lines the marks need: pages counted, no marks. */
	assert_int_equal(procfs_parse_zoneinfo("Node 0, zone   Normal\n"
					       "        managed  1000\n", &z), 0);
	assert_int_equal(z.managed_pages, 1000);
	assert_false(z.marks);
	assert_int_equal(z.reserve_pages, 0);
	assert_int_equal(z.free_above_marks, 0);
	assert_int_equal(z.low_free_above_marks, 0);
	/*
	 * "high" counts the boost (kswapd's target, not room), the reserve
	 * leaves it out; a lowmem reserve larger than the zone is the zone;
	 * the per-cpu "high:" after "pagesets" is not the watermark.
	 */
	assert_int_equal(procfs_parse_zoneinfo("Node 0, zone      DMA\n"
					       "  pages free     900\n"
					       "        boost    0\n"
					       "        high     100\n"
					       "        managed  1000\n"
					       "        protection: (0, 5000, 7000)\n"
					       "Node 0, zone   Normal\n"
					       "  pages free     9000\n"
					       "        boost    300\n"
					       "        min      200\n"
					       "        high     700\n"
					       "        managed  100000\n"
					       "        protection: (0, 0, 0)\n"
					       "  pagesets\n"
					       "    cpu: 0\n"
					       "              high:  99999\n", &z), 0);
	assert_true(z.marks);
	assert_int_equal(z.zones, 2);
	assert_int_equal(z.reserve_pages, 1000 + 400);
	assert_int_equal(z.free_above_marks, 0 + 9000 - 700);
	/* A field twice in a zone, a bad reserve list: refused. */
	assert_int_equal(procfs_parse_zoneinfo("Node 0, zone   Normal\n"
					       "        high     1\n"
					       "        high     2\n"
					       "        managed  1000\n", &z), -EBADMSG);
	assert_int_equal(procfs_parse_zoneinfo("Node 0, zone   Normal\n"
					       "        managed  1000\n"
					       "        protection: (0, x)\n", &z), -EBADMSG);
	assert_int_equal(procfs_parse_zoneinfo("Node 0, zone   Normal\n"
					       "        managed  1000\n"
					       "        protection: (0, 1\n", &z), -EBADMSG);
	assert_int_equal(procfs_read_zoneinfo("/nonexistent", &z), -ENOENT);
}

/* Random bytes and every prefix of a good file: no crash, no success on garbage. */
static void test_fuzz_no_crash(void **state)
{
	char good[8192], junk[512];
	struct rpm_pressure p;
	struct rpm_meminfo m;
	struct rpm_vmstat v;
	struct rpm_zoneinfo z;
	unsigned seed = 12345;
	size_t len;

	(void)state;
	text("meminfo-ok", good, sizeof(good));
	len = strlen(good);
	for (size_t cut = 0; cut < len; cut += 7) {
		char c = good[cut];

		good[cut] = '\0';
		(void)procfs_parse_meminfo(good, &m);
		(void)procfs_parse_vmstat(good, &v);
		(void)procfs_parse_pressure(good, &p);
		(void)procfs_parse_zoneinfo(good, &z);
		good[cut] = c;
	}
	for (int round = 0; round < 2000; round++) {
		size_t n = (size_t)(rand_r(&seed) % (sizeof(junk) - 1));

		for (size_t i = 0; i < n; i++)
			junk[i] = (char)(rand_r(&seed) % 255 + 1);
		junk[n] = '\0';
		(void)procfs_parse_meminfo(junk, &m);
		(void)procfs_parse_vmstat(junk, &v);
		(void)procfs_parse_pressure(junk, &p);
		(void)procfs_parse_zoneinfo(junk, &z);
	}
}

/* Kernel command line booleans, as the kernel's early parameters read them. */
static void test_cmdline_bool(void **state)
{
	const char *p = "regionpm.bottom_up";
	bool on = true;

	(void)state;
	assert_false(procfs_cmdline_bool("ro quiet movablecore=50%\n", p));
	assert_true(procfs_cmdline_bool("ro regionpm.bottom_up=1 quiet\n", p));
	assert_true(procfs_cmdline_bool("regionpm.bottom_up", p));
	assert_true(procfs_cmdline_bool("regionpm.bottom_up=on", p));
	assert_true(procfs_cmdline_bool("a regionpm.bottom_up=Y", p));
	assert_false(procfs_cmdline_bool("regionpm.bottom_up=0", p));
	assert_false(procfs_cmdline_bool("regionpm.bottom_up=off", p));
	/* The last occurrence wins; a bad value changes nothing. */
	assert_false(procfs_cmdline_bool("regionpm.bottom_up=1 regionpm.bottom_up=n", p));
	assert_true(procfs_cmdline_bool("regionpm.bottom_up=1 regionpm.bottom_up=maybe", p));
	assert_false(procfs_cmdline_bool("regionpm.bottom_up=", p));
	assert_true(procfs_cmdline_has("ro movablecore=50% quiet", "movablecore"));
	assert_true(procfs_cmdline_has("kernelcore", "kernelcore"));
	assert_false(procfs_cmdline_has("movablecore_x=1 amovablecore=1", "movablecore"));
	assert_false(procfs_cmdline_has("ro quiet", "movablecore"));
	assert_false(procfs_cmdline_has("ro", ""));
	/* Another parameter with the same prefix is not this one. */
	assert_false(procfs_cmdline_bool("regionpm.bottom_up_x=1 xregionpm.bottom_up=1", p));
	assert_false(procfs_cmdline_bool("", p));
	assert_false(procfs_cmdline_bool("regionpm.bottom_up=1", ""));

	assert_int_equal(procfs_read_cmdline_bool(root(), "movablecore", &on), 0);
	assert_false(on);
	assert_int_equal(procfs_read_cmdline_bool(root(), "regionpm.bias", &on), 0);
	assert_true(on);
	assert_int_equal(procfs_read_cmdline_bool("/nonexistent-root", p, &on), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_file),
		cmocka_unit_test(test_pressure_ok),
		cmocka_unit_test(test_pressure_variants),
		cmocka_unit_test(test_pressure_malformed),
		cmocka_unit_test(test_meminfo_ok),
		cmocka_unit_test(test_meminfo_malformed),
		cmocka_unit_test(test_vmstat_ok),
		cmocka_unit_test(test_vmstat_malformed),
		cmocka_unit_test(test_zoneinfo),
		cmocka_unit_test(test_fuzz_no_crash),
		cmocka_unit_test(test_cmdline_bool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
