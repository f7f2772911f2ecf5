// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of the stock backend and its parts: memory blocks through
 * sysfs (fixtures/stock, a fake /), the kpageflags classification, the
 * /run record and its restore, the DAMON scheme written into a fake admin
 * tree, and the backend as the policy sees it (fake trees built in a
 * temporary directory: writes to a state file there stand for the
 * kernel's offline and online).  REGIONPM_FIXTURES overrides the fixture
 * directory.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "backend.h"
#include "damon-sysfs.h"
#include "kpf-scan.h"
#include "memblock-sysfs.h"
#include "offline-state.h"
#include "policy.h"
#include "procfs-util.h"

static const char *fixture_root(void)
{
	static char path[PATH_MAX];
	const char *f = getenv("REGIONPM_FIXTURES");

	snprintf(path, sizeof(path), "%s/stock", f && *f ? f : "daemon/fixtures");
	return path;
}

/* ---- a writable fake / -------------------------------------------------- */

static char tmproot[PATH_MAX];

static void mkdirs(const char *path)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
}

static void put_file(const char *rel, const void *data, size_t len)
{
	char path[PATH_MAX], dir[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", tmproot, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	mkdirs(dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void put_str(const char *rel, const char *s)
{
	put_file(rel, s, strlen(s));
}

static const char *get_str(const char *rel)
{
	static char buf[256];
	ssize_t n = procfs_read_file(tmproot, rel, buf, sizeof(buf));

	if (n < 0)
		return "(missing)";
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static int rm_tree(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmproot);
	return system(cmd);
}

static int setup_tmp(void **state)
{
	(void)state;
	snprintf(tmproot, sizeof(tmproot), "%s/test-stock.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmproot))
		return -1;
	put_str("/run/.keep", "");	/* /run exists on every system */
	return 0;
}

static int teardown_tmp(void **state)
{
	(void)state;
	return rm_tree() == 0 ? 0 : -1;
}

/* Pages per block in the fake trees: 16 pages of 4 KiB. */
#define FAKE_BLOCK_PAGES 16

/* kpageflags bits used below */
#define F_LRU		(1ULL << 5)
#define F_SLAB		(1ULL << 7)
#define F_BUDDY		(1ULL << 10)
#define F_ANON		(1ULL << 12)
#define F_SWAPBACKED	(1ULL << 14)
#define F_NOPAGE	(1ULL << 20)

/* Blocks: 0 has slab, 1 half anon, 2 empty, 3 offline by someone else,
 * 4 empty and movable, 5 file cache only. */
static void make_memory_tree(void)
{
	uint64_t flags[6 * FAKE_BLOCK_PAGES];

	put_str("/sys/devices/system/memory/block_size_bytes", "10000\n");
	for (unsigned i = 0; i < 6; i++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "/sys/devices/system/memory/memory%u/state", i);
		put_str(rel, i == 3 ? "offline\n" : "online\n");
		snprintf(rel, sizeof(rel), "/sys/devices/system/memory/memory%u/valid_zones", i);
		put_str(rel, i == 3 ? "Normal Movable\n" : i == 4 ? "Movable\n" : "Normal\n");
		snprintf(rel, sizeof(rel), "/sys/devices/system/memory/memory%u/node0/.keep", i);
		put_str(rel, "");
	}
	for (unsigned p = 0; p < 6 * FAKE_BLOCK_PAGES; p++) {
		unsigned b = p / FAKE_BLOCK_PAGES, i = p % FAKE_BLOCK_PAGES;

		flags[p] = F_BUDDY;
		if (b == 0 && i < 4)
			flags[p] = F_SLAB;
		if (b == 1 && i < 8)
			flags[p] = F_ANON | F_LRU | F_SWAPBACKED;
		if (b == 3)
			flags[p] = F_NOPAGE;
		if (b == 5 && i < 10)
			flags[p] = F_LRU;
	}
	put_file("/proc/kpageflags", flags, sizeof(flags));
	put_str("/proc/meminfo", "MemTotal:        1000000 kB\nMemFree:          900000 kB\n"
		"MemAvailable:     900000 kB\n");
}

/* ---- memory blocks ------------------------------------------------------ */

static void test_memblock_parse(void **state)
{
	(void)state;
	assert_int_equal(memblock_parse_state("online\n"), MEMBLOCK_ONLINE);
	assert_int_equal(memblock_parse_state("offline"), MEMBLOCK_OFFLINE);
	assert_int_equal(memblock_parse_state("going-offline\n"), MEMBLOCK_GOING_OFFLINE);
	assert_int_equal(memblock_parse_state("onlinex"), MEMBLOCK_UNKNOWN);
	assert_int_equal(memblock_parse_state(""), MEMBLOCK_UNKNOWN);
	assert_true(memblock_zones_have("Normal Movable", "Movable"));
	assert_true(memblock_zones_have("Movable\n", "Movable"));
	assert_false(memblock_zones_have("Normal", "Movable"));
	assert_false(memblock_zones_have("NotMovable", "Movable"));
}

static void test_memblock_fixture(void **state)
{
	struct memblock *v = NULL, one;
	uint64_t bytes = 0;
	size_t n = 0;

	(void)state;
	assert_int_equal(memblock_block_size(fixture_root(), &bytes), 0);
	assert_int_equal(bytes, 128ULL << 20);
	assert_int_equal(memblock_list(fixture_root(), &v, &n), 0);
	assert_int_equal(n, 5);
	/* sorted numerically, not by name (memory12 after memory3) */
	assert_int_equal(v[0].id, 0);
	assert_int_equal(v[3].id, 3);
	assert_int_equal(v[4].id, 12);
	assert_int_equal(v[0].state, MEMBLOCK_ONLINE);
	assert_string_equal(v[0].zones, "none");
	assert_string_equal(v[2].zones, "Movable");
	assert_int_equal(v[3].state, MEMBLOCK_OFFLINE);
	assert_string_equal(v[3].zones, "Normal Movable");
	assert_int_equal(v[4].state, MEMBLOCK_GOING_OFFLINE);
	assert_int_equal(v[4].node, 1);
	free(v);
	assert_int_equal(memblock_read(fixture_root(), 7, &one), -ENOENT);
	assert_int_equal(memblock_block_size("/nonexistent", &bytes), -ENOENT);
}

/*
 * Which blocks come back in their zone: a block at either end of
 * ZONE_DMA32 on its node would be onlined into ZONE_NORMAL (the zone's
 * span shrinks when it goes offline); blocks in the middle, and every
 * block of ZONE_NORMAL and ZONE_MOVABLE, come back where they were; a
 * block spanning zones cannot be offlined.  (2 GiB with movablecore=50%:
 * blocks 0-7 DMA32, 8-15 Movable; blocks 6 and 7 came back in Normal.)
 */
static void test_memblock_zone_edges(void **state)
{
	struct memblock v[] = {
		{ .id = 0, .state = MEMBLOCK_ONLINE, .zones = "none" },
		{ .id = 1, .state = MEMBLOCK_ONLINE, .zones = "DMA32" },
		{ .id = 2, .state = MEMBLOCK_ONLINE, .zones = "DMA32" },
		{ .id = 3, .state = MEMBLOCK_OFFLINE, .zones = "DMA32 Movable" },
		{ .id = 4, .state = MEMBLOCK_ONLINE, .zones = "DMA32" },
		{ .id = 5, .state = MEMBLOCK_ONLINE, .zones = "DMA32" },
		{ .id = 6, .state = MEMBLOCK_ONLINE, .zones = "Movable" },
		{ .id = 7, .state = MEMBLOCK_ONLINE, .zones = "Movable" },
		{ .id = 8, .state = MEMBLOCK_ONLINE, .zones = "Normal", .node = 1 },
		{ .id = 9, .state = MEMBLOCK_ONLINE, .zones = "DMA32", .node = 1 },
	};
	const bool want[] = { false, false, true, false, true, false, true, true, true, false };

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (memblock_returns_to_zone(v, sizeof(v) / sizeof(v[0]), i) != want[i])
			fail_msg("block %zu: %s", i, want[i] ? "comes back" : "must stay");
}

/* ---- kpageflags --------------------------------------------------------- */

static void test_kpf_classify(void **state)
{
	const uint64_t flags[] = {
		F_NOPAGE, F_BUDDY, F_BUDDY, F_SLAB, 1ULL << 26 /* pgtable */,
		1ULL << 32 /* reserved */, F_ANON | F_LRU | F_SWAPBACKED,
		F_SWAPBACKED | F_LRU /* shmem */, F_LRU, F_LRU | (1ULL << 4) /* dirty */,
		F_LRU | (1ULL << 8) /* writeback */, F_LRU | (1ULL << 18) /* unevictable */,
		0 /* kernel, no flags */, 1ULL << 23 /* offline */,
	};
	struct rpm_region_detail d = { 0 };
	uint64_t present = 0;

	(void)state;
	kpf_classify(flags, sizeof(flags) / sizeof(flags[0]), &d, &present);
	assert_int_equal(present, 13);
	assert_int_equal(d.free, 2);
	assert_int_equal(d.slab, 1);
	assert_int_equal(d.page_table, 1);
	assert_int_equal(d.reserved, 1);
	assert_int_equal(d.anon, 1);
	assert_int_equal(d.shmem, 1);
	assert_int_equal(d.file_clean, 1);
	assert_int_equal(d.file_dirty, 1);
	assert_int_equal(d.writeback, 1);
	assert_int_equal(d.unevictable, 1);
	assert_int_equal(d.kernel_other, 1);
	assert_int_equal(d.offline, 1);
}

static void test_kpf_scan(void **state)
{
	struct rpm_region_detail d;
	uint64_t present;

	(void)state;
	make_memory_tree();
	assert_int_equal(kpf_scan(tmproot, 1 * FAKE_BLOCK_PAGES, FAKE_BLOCK_PAGES, &d, &present), 0);
	assert_true(d.valid);
	assert_int_equal(present, FAKE_BLOCK_PAGES);
	assert_int_equal(d.anon, 8);
	assert_int_equal(d.free, 8);
	/* past the end of the file: nothing there, not an error */
	assert_int_equal(kpf_scan(tmproot, 100 * FAKE_BLOCK_PAGES, FAKE_BLOCK_PAGES, &d, &present), 0);
	assert_int_equal(present, 0);
	assert_int_equal(kpf_scan("/nonexistent", 0, 1, &d, &present), -ENOENT);
}

/* ---- the /run record ---------------------------------------------------- */

static void test_offline_state_parse(void **state)
{
	static struct offline_state s;

	(void)state;
	assert_int_equal(offline_state_parse("3 Movable\n17 Normal\n21 DMA32\n", &s), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(offline_state_zone(&s, 3), "Movable");
	assert_string_equal(offline_state_zone(&s, 17), "Normal");
	assert_string_equal(offline_state_zone(&s, 21), "DMA32");
	assert_null(offline_state_zone(&s, 4));
	/* a bad line is reported, the good ones are kept */
	assert_int_equal(offline_state_parse("3 Movable\nx y\n5 Normal extra\n6 Nor/mal\n"
					     "7 Normalnormalnormal\n9 Normal", &s), -EBADMSG);
	assert_int_equal(s.n, 2);
	assert_non_null(offline_state_zone(&s, 9));
	assert_null(offline_state_zone(&s, 6));
	assert_int_equal(offline_state_parse("", &s), 0);
	assert_int_equal(s.n, 0);
}

static void test_offline_state_file(void **state)
{
	static struct offline_state s, t;

	(void)state;
	assert_int_equal(offline_state_load(&s, tmproot), 0);	/* missing: empty */
	assert_int_equal(s.n, 0);
	assert_int_equal(offline_state_add(&s, 4, "Movable"), 0);
	assert_int_equal(offline_state_add(&s, 2, "DMA32"), 0);
	assert_int_equal(offline_state_add(&s, 4, "Movable"), 0);	/* once */
	assert_int_equal(offline_state_add(&s, 5, "none here"), -EINVAL);
	assert_int_equal(offline_state_add(&s, 5, ""), -EINVAL);
	assert_int_equal(offline_state_load(&t, tmproot), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(offline_state_zone(&t, 2), "DMA32");
	assert_int_equal(offline_state_remove(&s, 2), 0);
	assert_string_equal(get_str(RPM_OFFLINE_STATE_FILE), "4 Movable");
	assert_int_equal(offline_state_remove(&s, 4), 0);
	/* an empty record is no file at all */
	assert_string_equal(get_str(RPM_OFFLINE_STATE_FILE), "(missing)");
}

/* Restore onlines recorded offline blocks only, movable ones as movable. */
static void test_offline_state_restore(void **state)
{
	static struct offline_state s;
	unsigned failed = 9;
	int r;

	(void)state;
	make_memory_tree();
	put_str("/sys/devices/system/memory/memory4/state", "offline\n");
	put_str("/sys/devices/system/memory/memory4/valid_zones", "Normal Movable\n");
	put_str("/sys/devices/system/memory/memory5/state", "offline\n");
	put_str("/sys/devices/system/memory/memory5/valid_zones", "DMA32 Movable\n");
	put_str(RPM_OFFLINE_STATE_FILE, "4 Movable\n2 Normal\n5 DMA32\n");
	assert_int_equal(offline_state_load(&s, tmproot), 0);
	r = offline_state_restore(&s, tmproot, &failed);
	assert_int_equal(r, 2);		/* block 2 was online already */
	assert_int_equal(failed, 0);
	assert_string_equal(get_str("/sys/devices/system/memory/memory4/state"), "online_movable");
	assert_string_equal(get_str("/sys/devices/system/memory/memory2/state"), "online");
	/* a kernel zone: online_kernel, whatever memory_hotplug.online_policy says */
	assert_string_equal(get_str("/sys/devices/system/memory/memory5/state"), "online_kernel");
	/* block 3, offline by someone else, is not in the record: untouched */
	assert_string_equal(get_str("/sys/devices/system/memory/memory3/state"), "offline");
	assert_int_equal(s.n, 0);
	assert_string_equal(get_str(RPM_OFFLINE_STATE_FILE), "(missing)");
}

/* ---- DAMON -------------------------------------------------------------- */

static const char *const damon_files[] = {
	"/kdamonds/nr_kdamonds", "/kdamonds/0/state", "/kdamonds/0/contexts/nr_contexts",
	"/kdamonds/0/contexts/0/operations",
	"/kdamonds/0/contexts/0/monitoring_attrs/intervals/sample_us",
	"/kdamonds/0/contexts/0/monitoring_attrs/intervals/aggr_us",
	"/kdamonds/0/contexts/0/monitoring_attrs/intervals/update_us",
	"/kdamonds/0/contexts/0/targets/nr_targets",
	"/kdamonds/0/contexts/0/targets/0/regions/nr_regions",
	"/kdamonds/0/contexts/0/targets/0/regions/0/start",
	"/kdamonds/0/contexts/0/targets/0/regions/0/end",
	"/kdamonds/0/contexts/0/schemes/nr_schemes",
	"/kdamonds/0/contexts/0/schemes/0/action",
	"/kdamonds/0/contexts/0/schemes/0/access_pattern/sz/min",
	"/kdamonds/0/contexts/0/schemes/0/access_pattern/sz/max",
	"/kdamonds/0/contexts/0/schemes/0/access_pattern/nr_accesses/min",
	"/kdamonds/0/contexts/0/schemes/0/access_pattern/nr_accesses/max",
	"/kdamonds/0/contexts/0/schemes/0/access_pattern/age/min",
	"/kdamonds/0/contexts/0/schemes/0/access_pattern/age/max",
	"/kdamonds/0/contexts/0/schemes/0/quotas/bytes",
	"/kdamonds/0/contexts/0/schemes/0/quotas/reset_interval_ms",
	"/kdamonds/0/contexts/0/schemes/0/filters/nr_filters",
	"/kdamonds/0/contexts/0/schemes/0/filters/0/type",
	"/kdamonds/0/contexts/0/schemes/0/filters/0/matching",
	"/kdamonds/0/contexts/0/schemes/0/stats/sz_applied",
};

static void make_damon_tree(const char *nr_kdamonds)
{
	for (size_t i = 0; i < sizeof(damon_files) / sizeof(damon_files[0]); i++) {
		char rel[512];

		snprintf(rel, sizeof(rel), RPM_SYS_DAMON_ADMIN "%s", damon_files[i]);
		put_str(rel, i == 0 ? nr_kdamonds : "0\n");
	}
}

#define S0 RPM_SYS_DAMON_ADMIN "/kdamonds/0/contexts/0"

static void test_damon_setup(void **state)
{
	struct damon_pageout p = {
		.start = 128ULL << 20, .end = 256ULL << 20, .min_age_us = 1000000,
		.quota_bytes = 32ULL << 20, .timeout_ms = 200,
	};
	uint64_t applied = 7;
	char err[256];

	(void)state;
	make_damon_tree("0\n");
	assert_int_equal(damon_sysfs_probe(tmproot), 0);
	assert_int_equal(damon_sysfs_setup(tmproot, &p), 0);
	assert_string_equal(get_str(S0 "/operations"), "paddr");
	assert_string_equal(get_str(S0 "/targets/0/regions/0/start"), "134217728");
	assert_string_equal(get_str(S0 "/targets/0/regions/0/end"), "268435456");
	assert_string_equal(get_str(S0 "/schemes/0/action"), "pageout");
	assert_string_equal(get_str(S0 "/schemes/0/access_pattern/nr_accesses/max"), "0");
	/* one second in 100 ms aggregation intervals */
	assert_string_equal(get_str(S0 "/schemes/0/access_pattern/age/min"), "10");
	assert_string_equal(get_str(S0 "/schemes/0/quotas/bytes"), "33554432");
	/* anonymous pages are filtered out: only page cache is paged out */
	assert_string_equal(get_str(S0 "/schemes/0/filters/0/type"), "anon");
	assert_string_equal(get_str(S0 "/schemes/0/filters/0/matching"), "Y");

	/* a full run against the fake tree: on, stats, off, and the tree left
	 * with no kdamond */
	put_str(S0 "/schemes/0/stats/sz_applied", "40960\n");
	assert_int_equal(damon_sysfs_pageout(tmproot, &p, &applied, err, sizeof(err)), 0);
	assert_int_equal(applied, 40960);
	assert_string_equal(get_str(RPM_SYS_DAMON_ADMIN "/kdamonds/0/state"), "off");
	assert_string_equal(get_str(RPM_SYS_DAMON_ADMIN "/kdamonds/nr_kdamonds"), "0");

	/* someone else's kdamond: not touched */
	make_damon_tree("1\n");
	put_str(RPM_SYS_DAMON_ADMIN "/kdamonds/0/state", "on\n");
	assert_int_equal(damon_sysfs_pageout(tmproot, &p, &applied, err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "someone else"));
	assert_string_equal(get_str(RPM_SYS_DAMON_ADMIN "/kdamonds/nr_kdamonds"), "1");
	assert_string_equal(get_str(RPM_SYS_DAMON_ADMIN "/kdamonds/0/state"), "on");
}

/* ---- the backend as the policy sees it ---------------------------------- */

struct collect {
	struct rpm_region v[16];
	size_t n;
};

static int collect_cb(const struct rpm_region *r, void *userdata)
{
	struct collect *c = userdata;

	if (c->n < 16)
		c->v[c->n++] = *r;
	return 0;
}

static struct rpm_region *by_id(struct collect *c, uint32_t id)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].id == id)
			return &c->v[i];
	fail_msg("no region %u", id);
	return NULL;
}

static void dump(struct rpm_backend *b, struct collect *c)
{
	c->n = 0;
	assert_int_equal(b->ops->dump(b, collect_cb, c), 0);
	/* mark ours as the manager does */
	for (size_t i = 0; i < c->n; i++)
		c->v[i].ours = c->v[i].state == RPM_REGION_PARKED &&
			       c->v[i].owner_portid == b->ops->owner(b);
}

static void test_backend_stock(void **state)
{
	struct rpm_compact_result res;
	struct rpm_backend *b = NULL;
	struct rpm_kernel_info info;
	struct rpm_region r;
	struct collect c;
	char missing[256];

	(void)state;
	make_memory_tree();
	/* a previous daemon died with block 5 offline: onlined at open */
	put_str("/sys/devices/system/memory/memory5/state", "offline\n");
	put_str(RPM_OFFLINE_STATE_FILE, "5 Normal\n");
	assert_int_equal(rpm_backend_stock.probe(tmproot), 0);
	assert_int_equal(rpm_backend_stock.open(&b, tmproot, NULL), 0);
	assert_string_equal(get_str("/sys/devices/system/memory/memory5/state"), "online_kernel");
	put_str("/sys/devices/system/memory/memory5/state", "online\n");
	assert_string_equal(get_str(RPM_OFFLINE_STATE_FILE), "(missing)");
	assert_string_equal(backend_name(b), "stock");
	backend_missing(b, missing, sizeof(missing));
	assert_non_null(strstr(missing, "migrate"));
	assert_non_null(strstr(missing, "kernel release"));
	assert_null(strstr(missing, "park"));

	assert_int_equal(b->ops->info(b, &info), 0);
	assert_int_equal(info.region_size, 0x10000);
	assert_int_equal(info.region_count, 6);
	dump(b, &c);
	assert_int_equal(c.n, 6);
	assert_int_equal(by_id(&c, 1)->start_pfn, FAKE_BLOCK_PAGES);
	assert_int_equal(by_id(&c, 1)->free_pages, 8);
	assert_int_equal(by_id(&c, 2)->free_pages, FAKE_BLOCK_PAGES);
	/* offline by someone else: busy, never ours */
	assert_int_equal(by_id(&c, 3)->state, RPM_REGION_BUSY);
	assert_false(by_id(&c, 3)->ours);

	/* a scan gives the breakdown the policy plans with */
	assert_int_equal(b->ops->region_get(b, 0, true, &r), 0);
	assert_true(r.detail.valid);
	assert_int_equal(r.detail.slab, 4);
	assert_true(region_has_unmovable(&r));

	/* migrate: not without offlining */
	assert_int_equal(b->ops->compact(b, 1, RPM_COMPACT_MIGRATE, 100, &res), -EOPNOTSUPP);
	assert_non_null(strstr(backend_error(b), "park instead"));
	/* slab in block 0: refused before any write */
	assert_int_equal(b->ops->park(b, 0, true, 0, 0, &res), -EBUSY);
	assert_string_equal(get_str("/sys/devices/system/memory/memory0/state"), "online");
	/* someone else's offline block: neither parked nor unparked */
	assert_int_equal(b->ops->park(b, 3, false, 0, 0, &res), -EBUSY);
	assert_int_equal(b->ops->unpark(b, 3), -EPERM);
	assert_string_equal(get_str("/sys/devices/system/memory/memory3/state"), "offline");

	/* park = offline (a write of "offline"), recorded first */
	assert_int_equal(b->ops->park(b, 4, true, 0, 0, &res), 0);
	assert_string_equal(get_str("/sys/devices/system/memory/memory4/state"), "offline");
	assert_string_equal(get_str(RPM_OFFLINE_STATE_FILE), "4 Movable");
	dump(b, &c);
	assert_int_equal(by_id(&c, 4)->state, RPM_REGION_PARKED);
	assert_true(by_id(&c, 4)->ours);

	/* unpark = online, movable again */
	put_str("/sys/devices/system/memory/memory4/valid_zones", "Movable Normal\n");
	assert_int_equal(b->ops->unpark(b, 4), 0);
	assert_string_equal(get_str("/sys/devices/system/memory/memory4/state"), "online_movable");
	assert_string_equal(get_str(RPM_OFFLINE_STATE_FILE), "(missing)");
	put_str("/sys/devices/system/memory/memory4/state", "online\n");
	backend_close(b);
}

/*
 * A block regionpmd offlined that someone else onlined, or whose memory
 * was removed (virtio-mem unplug), is dropped from the record at the next
 * dump: the record must not claim it (a re-added offline block would look
 * parked by us, and the exit would count it "still offline").
 */
static void test_backend_stock_lost_blocks(void **state)
{
	struct rpm_compact_result res;
	struct rpm_backend *b = NULL;
	struct collect c;
	char cmd[PATH_MAX + 64];

	(void)state;
	make_memory_tree();
	assert_int_equal(rpm_backend_stock.open(&b, tmproot, NULL), 0);

	/* onlined behind our back: active, not ours, the record forgets it */
	assert_int_equal(b->ops->park(b, 4, true, 0, 0, &res), 0);
	assert_string_equal(get_str(RPM_OFFLINE_STATE_FILE), "4 Movable");
	put_str("/sys/devices/system/memory/memory4/state", "online\n");
	dump(b, &c);
	assert_int_equal(by_id(&c, 4)->state, RPM_REGION_ACTIVE);
	assert_false(by_id(&c, 4)->ours);
	assert_string_equal(get_str(RPM_OFFLINE_STATE_FILE), "(missing)");
	assert_int_equal(b->ops->unpark(b, 4), -EPERM);
	assert_string_equal(get_str("/sys/devices/system/memory/memory4/state"), "online");

	/* parked, then removed: gone from the dump and from the record */
	assert_int_equal(b->ops->park(b, 4, true, 0, 0, &res), 0);
	assert_string_equal(get_str(RPM_OFFLINE_STATE_FILE), "4 Movable");
	snprintf(cmd, sizeof(cmd), "rm -r '%s/sys/devices/system/memory/memory4'", tmproot);
	assert_int_equal(system(cmd), 0);
	dump(b, &c);
	assert_int_equal(c.n, 5);
	for (size_t i = 0; i < c.n; i++)
		assert_int_not_equal(c.v[i].id, 4);
	assert_string_equal(get_str(RPM_OFFLINE_STATE_FILE), "(missing)");

	/* re-added offline (memhp_default_state=offline): not ours, left alone */
	put_str("/sys/devices/system/memory/memory4/state", "offline\n");
	put_str("/sys/devices/system/memory/memory4/valid_zones", "Movable Normal\n");
	put_str("/sys/devices/system/memory/memory4/node0/.keep", "");
	dump(b, &c);
	assert_int_equal(by_id(&c, 4)->state, RPM_REGION_BUSY);
	assert_int_equal(b->ops->unpark(b, 4), -EPERM);
	assert_string_equal(get_str("/sys/devices/system/memory/memory4/state"), "offline");

	/* a block still offline by us keeps its record */
	put_str("/sys/devices/system/memory/memory4/state", "online\n");
	put_str("/sys/devices/system/memory/memory4/valid_zones", "Movable\n");
	assert_int_equal(b->ops->park(b, 4, true, 0, 0, &res), 0);
	dump(b, &c);
	assert_int_equal(by_id(&c, 4)->state, RPM_REGION_PARKED);
	assert_string_equal(get_str(RPM_OFFLINE_STATE_FILE), "4 Movable");
	assert_int_equal(b->ops->unpark(b, 4), 0);
	backend_close(b);
}

/*
 * On a machine whose low blocks are ZONE_DMA32, the block at the top of
 * that zone is never offlined (the plan sees it as not parkable, a park
 * is refused with the reason); a block inside it is, is recorded as
 * DMA32 and comes back with online_kernel.
 */
static void test_backend_stock_zone_edges(void **state)
{
	struct rpm_compact_result res;
	struct rpm_backend *b = NULL;
	struct collect c;

	(void)state;
	make_memory_tree();
	for (unsigned i = 0; i < 3; i++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "/sys/devices/system/memory/memory%u/valid_zones", i);
		put_str(rel, "DMA32\n");
	}
	assert_int_equal(rpm_backend_stock.open(&b, tmproot, NULL), 0);
	dump(b, &c);
	assert_true(by_id(&c, 0)->no_park);	/* the lowest of DMA32 */
	assert_false(by_id(&c, 1)->no_park);
	assert_true(by_id(&c, 2)->no_park);	/* the highest */
	assert_false(by_id(&c, 4)->no_park);	/* Movable */
	assert_false(by_id(&c, 5)->no_park);	/* Normal */
	assert_int_equal(b->ops->park(b, 2, true, 0, 0, &res), -EBUSY);
	assert_non_null(strstr(backend_error(b), "end of zone DMA32"));
	assert_string_equal(get_str("/sys/devices/system/memory/memory2/state"), "online");
	assert_string_equal(get_str(RPM_OFFLINE_STATE_FILE), "(missing)");
	/* block 1: anonymous pages and free ones, inside the zone */
	assert_int_equal(b->ops->park(b, 1, true, 0, 0, &res), 0);
	assert_string_equal(get_str("/sys/devices/system/memory/memory1/state"), "offline");
	assert_string_equal(get_str(RPM_OFFLINE_STATE_FILE), "1 DMA32");
	put_str("/sys/devices/system/memory/memory1/valid_zones", "DMA32 Movable\n");
	assert_int_equal(b->ops->unpark(b, 1), 0);
	assert_string_equal(get_str("/sys/devices/system/memory/memory1/state"), "online_kernel");
	assert_string_equal(get_str(RPM_OFFLINE_STATE_FILE), "(missing)");
	backend_close(b);
}

/*
 * The policy over the stock backend's regions: the same decisions as over
 * the kernel's (test-policy.c), and never one about a block it does not own.
 */
static void test_policy_over_stock(void **state)
{
	struct rpm_policy_config cfg;
	struct rpm_policy_state st;
	struct rpm_system sys = {
		/* as the fixture's five online blocks of 16 pages say */
		.now = 100000000, .mem_total_pages = 80, .mem_available_pages = 58,
		.mem_free_pages = 58, .page_size = 4096,
	};
	struct rpm_action acts[32];
	struct rpm_compact_result res;
	struct rpm_backend *b = NULL;
	struct collect c;
	bool parked_2 = false;
	size_t n;

	(void)state;
	make_memory_tree();
	assert_int_equal(rpm_backend_stock.open(&b, tmproot, NULL), 0);
	policy_config_defaults(&cfg);
	cfg.bias = false;
	policy_state_init(&st);
	dump(b, &c);
	n = policy_decide(&cfg, &st, &sys, c.v, c.n, acts, 32);
	for (size_t i = 0; i < n; i++) {
		assert_int_not_equal(acts[i].region, 3);	/* foreign: never */
		if (acts[i].kind == RPM_ACT_PARK && acts[i].region == 2)
			parked_2 = true;
	}
	assert_true(parked_2);

	/* park 2 and 4, then pressure: both come back, block 3 never */
	assert_int_equal(b->ops->park(b, 2, false, 0, 0, &res), 0);
	assert_int_equal(b->ops->park(b, 4, false, 0, 0, &res), 0);
	dump(b, &c);
	sys.now += 1000000;
	sys.psi_event = true;
	sys.mem_total_pages = 48;
	sys.mem_available_pages = sys.mem_free_pages = 0;
	cfg.headroom_percent = 50;	/* far below the headroom: both back */
	n = policy_decide(&cfg, &st, &sys, c.v, c.n, acts, 32);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(acts[i].kind, RPM_ACT_UNPARK);
		assert_true(acts[i].region == 2 || acts[i].region == 4);
		assert_int_equal(b->ops->unpark(b, acts[i].region), 0);
	}
	assert_string_equal(get_str("/sys/devices/system/memory/memory3/state"), "offline");
	backend_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memblock_parse),
		cmocka_unit_test(test_memblock_fixture),
		cmocka_unit_test(test_memblock_zone_edges),
		cmocka_unit_test(test_kpf_classify),
		cmocka_unit_test_setup_teardown(test_kpf_scan, setup_tmp, teardown_tmp),
		cmocka_unit_test(test_offline_state_parse),
		cmocka_unit_test_setup_teardown(test_offline_state_file, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_offline_state_restore, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_damon_setup, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_backend_stock, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_backend_stock_zone_edges, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_backend_stock_lost_blocks, setup_tmp, teardown_tmp),
		cmocka_unit_test_setup_teardown(test_policy_over_stock, setup_tmp, teardown_tmp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
