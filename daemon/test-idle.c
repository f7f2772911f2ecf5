// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the page idle sampler on fixture files: a fake
 * <root>/proc/kpageflags and <root>/sys/kernel/mm/page_idle/bitmap.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "idle-sampler.h"

#define NPFN 1024
#define LRU (1ULL << 5)
#define ANON (1ULL << 12)
#define NOPAGE (1ULL << 20)

static char root[256];

static char *path(const char *rel)
{
	static char p[512];

	snprintf(p, sizeof(p), "%s%s", root, rel);
	return p;
}

/* pfn % 3: 0 anon LRU, 1 file LRU, 2 not on an LRU; pfn 150 is a hole */
static uint64_t flags_of(uint64_t pfn)
{
	if (pfn == 150)
		return NOPAGE;
	switch (pfn % 3) {
	case 0:
		return LRU | ANON;
	case 1:
		return LRU;
	default:
		return 0;
	}
}

static int setup(void **state)
{
	uint64_t flags[NPFN], zero[NPFN / 64] = { 0 };
	int fd;

	(void)state;
	snprintf(root, sizeof(root), "/tmp/test-idle.XXXXXX");
	assert_non_null(mkdtemp(root));
	mkdir(path("/proc"), 0755);
	mkdir(path("/sys"), 0755);
	mkdir(path("/sys/kernel"), 0755);
	mkdir(path("/sys/kernel/mm"), 0755);
	mkdir(path("/sys/kernel/mm/page_idle"), 0755);
	for (uint64_t i = 0; i < NPFN; i++)
		flags[i] = flags_of(i);
	fd = open(path("/proc/kpageflags"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, flags, sizeof(flags)), sizeof(flags));
	close(fd);
	fd = open(path("/sys/kernel/mm/page_idle/bitmap"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, zero, sizeof(zero)), sizeof(zero));
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static uint64_t expected(uint64_t start, uint64_t nr, uint64_t want, uint64_t skip_lo, uint64_t skip_hi)
{
	uint64_t n = 0;

	for (uint64_t p = start; p < start + nr; p++) {
		uint64_t f = flags_of(p);

		if ((f & NOPAGE) || !(f & LRU) || (p >= skip_lo && p < skip_hi))
			continue;
		if (want == 0 ? 1 : want == ANON ? (f & ANON) != 0 : !(f & ANON))
			n++;
	}
	return n;
}

/* What the kernel does when pages are touched: their idle bit clears. */
static void touch(uint64_t lo, uint64_t hi)
{
	uint64_t words[NPFN / 64];
	int fd = open(path("/sys/kernel/mm/page_idle/bitmap"), O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, words, sizeof(words), 0), sizeof(words));
	for (uint64_t p = lo; p < hi; p++)
		words[p / 64] &= ~(1ULL << (p % 64));
	assert_int_equal(pwrite(fd, words, sizeof(words), 0), sizeof(words));
	close(fd);
}

static void test_mark_count(void **state)
{
	struct idle_counts c = { 0 };
	uint64_t words[NPFN / 64];
	int fd;

	(void)state;
	/* an unaligned range: 100 .. 299 */
	assert_int_equal(idle_mark(root, 100, 200, &c), 0);
	assert_int_equal(c.lru, expected(100, 200, 0, 0, 0));
	/* only bits of LRU pages inside the range were set */
	fd = open(path("/sys/kernel/mm/page_idle/bitmap"), O_RDONLY);
	assert_int_equal(pread(fd, words, sizeof(words), 0), sizeof(words));
	close(fd);
	for (uint64_t p = 0; p < NPFN; p++) {
		bool bit = words[p / 64] & (1ULL << (p % 64));
		uint64_t f = flags_of(p);
		bool want = p >= 100 && p < 300 && (f & LRU) && !(f & NOPAGE);

		assert_int_equal(bit, want);
	}
	/* nothing touched: everything is idle */
	assert_int_equal(idle_count(root, 100, 200, &c), 0);
	assert_int_equal(c.idle_anon, expected(100, 200, ANON, 0, 0));
	assert_int_equal(c.idle_file, expected(100, 200, 1, 0, 0));
	/* pages 120..180 touched */
	touch(120, 180);
	assert_int_equal(idle_count(root, 100, 200, &c), 0);
	assert_int_equal(c.idle_anon, expected(100, 200, ANON, 120, 180));
	assert_int_equal(c.idle_file, expected(100, 200, 1, 120, 180));
}

static void test_range_past_end(void **state)
{
	struct idle_counts c = { 0 };

	(void)state;
	/* the file ends at NPFN: counting stops there */
	assert_int_equal(idle_mark(root, NPFN - 64, 4096, &c), 0);
	assert_int_equal(c.lru, expected(NPFN - 64, 64, 0, 0, 0));
}

static void test_missing_files(void **state)
{
	struct idle_counts c = { 0 };

	(void)state;
	assert_int_equal(idle_mark("/nonexistent-root", 0, 64, &c), -ENOENT);
}

static void on_done(struct idle_sample *s, int error, const struct idle_counts *c, void *userdata)
{
	struct idle_counts *out = userdata;

	(void)s;
	assert_int_equal(error, 0);
	*out = *c;
	out->lru |= 1ULL << 63;		/* "called" */
}

static void test_sample_timer(void **state)
{
	struct idle_counts got = { 0 };
	struct idle_sample *s = NULL;
	sd_event *e = NULL;

	(void)state;
	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(idle_sample_start(e, root, 0, 512, 1, on_done, &got, &s), 0);
	assert_non_null(s);
	touch(0, 64);
	while (!(got.lru >> 63))
		assert_true(sd_event_run(e, 5000000) >= 0);
	got.lru &= ~(1ULL << 63);
	assert_int_equal(got.lru, expected(0, 512, 0, 0, 0));
	assert_int_equal(got.idle_file + got.idle_anon, expected(0, 512, 0, 0, 64));
	sd_event_unref(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mark_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_past_end, setup, teardown),
		cmocka_unit_test(test_missing_files),
		cmocka_unit_test_setup_teardown(test_sample_timer, setup, teardown),
	};

	return cmocka_run_group_tests_name("idle-sampler", tests, NULL, NULL);
}
