// SPDX-License-Identifier: GPL-2.0
/*
 * Selftest for the "regionpm" generic netlink family (mm/regionpm.c).
 *
 * Build (see README-notes.md):
 *   gcc -std=gnu11 -O2 -Wall -Wextra -Werror -I include/uapi \
 *       -I $KSRC/tools/testing/selftests \
 *       -o regionpm_test tests/kselftest/regionpm_test.c -lmnl
 *
 * Runs as root on a regionpm kernel, normally in the test VM, where the
 * scratch ext4 disk at /mnt/scratch gives real page cache.  Every test
 * leaves the machine as it found it: the fixture teardown kills the memory
 * hogs a test started, removes its files, restores the sysctls it changed,
 * unparks what it parked, and fails the test if the kernel was tainted by a
 * warning, a bad page or an oops while it ran.
 *
 * "regionpm_test --count-regions" prints how many regions the dump returns
 * (ynl-cli.sh compares that with the YNL CLI).
 *
 * The file is laid out as: utilities, the netlink layer (libmnl), region
 * helpers, memory and file workloads, the fixture, then one test per
 * behaviour of the contract.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <linux/capability.h>
#include <linux/genetlink.h>
#include <linux/kernel-page-flags.h>
#include <linux/magic.h>
#include <linux/netlink.h>

#include <libmnl/libmnl.h>

#include <linux/regionpm.h>

/* the harness itself is not -Wextra clean (unused handler argument) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

/* ------------------------------------------------------------------------
 * Tunables of the tests themselves
 */
#define MiB			((uint64_t)1 << 20)
#define EVENT_WAIT_MS		3000	/* deferred, rate limited events */
#define RELEASE_WAIT_MS		1000	/* owner gone -> region released */
#define HOG_TIMEOUT_MS		240000	/* TCG is slow at touching memory */
#define FILL_CHUNK		(32 * MiB)
#define SCRATCH_DIR		"/mnt/scratch"
#ifndef EXT4_IOC_CHECKPOINT	/* linux/ext4.h: Linux 5.13, not in every libc's headers */
#define EXT4_IOC_CHECKPOINT	_IOW('f', 43, __u32)
#endif

#define BIT64(n)		(1ULL << (n))
#define HAS(obj, attr)		(!!((obj)->present & BIT64(attr)))

static uint64_t u64max(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t u64min(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* ------------------------------------------------------------------------
 * Small utilities: time, /proc and /sys files
 */
static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Read a small text file; returns its length or -errno. */
static int read_text(const char *path, char *buf, size_t len)
{
	size_t off = 0;
	ssize_t n = 0;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (off + 1 < len && (n = read(fd, buf + off, len - 1 - off)) > 0)
		off += n;
	err = n < 0 ? -errno : 0;
	close(fd);
	buf[off] = '\0';
	return err ? err : (int)off;
}

static int write_text(const char *path, const char *s)
{
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		err = -errno;
	else if ((size_t)n != strlen(s))
		err = -EIO;
	close(fd);
	return err;
}

/* A "Key:   value kB" line of /proc/meminfo, in kB; -1 if missing. */
static int64_t meminfo_kb(const char *key)
{
	size_t klen = strlen(key);
	char line[256];
	int64_t v = -1;
	FILE *f;

	f = fopen("/proc/meminfo", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* A "key value" line of /proc/vmstat; -1 if missing. */
static int64_t vmstat_get(const char *key)
{
	size_t klen = strlen(key);
	char line[256];
	int64_t v = -1;
	FILE *f;

	f = fopen("/proc/vmstat", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ' ') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* Taint bits that mean the kernel complained: W (warning), B (bad page), D (oops). */
#define TAINT_COMPLAINED	((1UL << 9) | (1UL << 5) | (1UL << 7))

static unsigned long read_taint(void)
{
	char buf[64];

	if (read_text("/proc/sys/kernel/tainted", buf, sizeof(buf)) <= 0)
		return 0;
	return strtoul(buf, NULL, 10);
}

/* Pages per pageblock, from /proc/pagetypeinfo ("Page block order: 9"). */
static uint64_t read_pageblock_pages(void)
{
	char line[256];
	FILE *f;
	int order = 9;

	f = fopen("/proc/pagetypeinfo", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Page block order: %d", &order) == 1)
				break;
		fclose(f);
	}
	return 1ULL << order;
}

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

static uint64_t kb_to_pages(int64_t kb)
{
	return (uint64_t)kb * 1024 / page_size();
}

static uint64_t memtotal_pages(void)
{
	return kb_to_pages(meminfo_kb("MemTotal"));
}

static bool kernel_cmdline_has(const char *word)
{
	char buf[4096];

	return read_text("/proc/cmdline", buf, sizeof(buf)) > 0 &&
	       strstr(buf, word);
}

/* ------------------------------------------------------------------------
 * Names for the uapi enums, for messages
 */
static const char *state_name(uint32_t s)
{
	static const char *const n[] = { "active", "parked", "busy", "held" };

	return s < ARRAY_SIZE(n) ? n[s] : "?";
}

static const char *reason_name(uint32_t r)
{
	static const char *const n[] = { "unpark", "owner-closed", "shrinker",
					 "oom", "hotplug", "timeout", "range-claimed" };

	return r < ARRAY_SIZE(n) ? n[r] : "?";
}

static const char *obstacle_name(uint32_t o)
{
	static const char *const n[] = {
		"none", "reserved", "slab", "page-table", "kernel", "pinned",
		"dirty", "writeback", "unevictable", "hugetlb", "isolation",
		"mode", "no-room",
	};

	return o < ARRAY_SIZE(n) ? n[o] : "?";
}

static const char *cmd_name(uint8_t c)
{
	switch (c) {
	case REGIONPM_CMD_REGION_ALLOC_NTF:	return "region-alloc-ntf";
	case REGIONPM_CMD_REGION_RELEASE_NTF:	return "region-release-ntf";
	case REGIONPM_CMD_REGION_COMPACT_NTF:	return "region-compact-ntf";
	default:				return "?";
	}
}

/* ------------------------------------------------------------------------
 * Netlink layer (libmnl)
 *
 * One struct rpm per socket.  Request sockets never join the multicast
 * group, so a reply is never confused with a notification; event sockets
 * (rpm_events_open) only listen.
 */
#define RPM_RXBUF		(64 * 1024)
#define RPM_TXBUF		8192
#define RPM_RECV_TIMEOUT_S	300	/* a compaction under TCG can be slow */
#define RPM_EVLOG		64

/* Outcome of one request: the kernel's errno and extack. */
struct rpm_ack {
	int err;		/* 0 or negative errno */
	bool local;		/* err came from our side (send, recv, parse) */
	bool intr;		/* dump interrupted (NLM_F_DUMP_INTR) */
	bool replied;		/* a data message (reply) was received */
	char msg[256];		/* NLMSGERR_ATTR_MSG, "" if none */
	int miss_type;		/* NLMSGERR_ATTR_MISS_TYPE, -1 if absent */
	int bad_off;		/* NLMSGERR_ATTR_OFFS, -1 if absent */
};

struct rpm_info {
	uint64_t present;
	uint64_t region_size;
	uint32_t region_count;
	uint8_t bias;
	uint32_t frontier;
	uint64_t parked_pages;
	uint64_t held_pages;
};

#define RPM_MAX_ZONES 4
#define RPM_MAX_NODES 64

struct rpm_region {
	uint64_t present;
	uint32_t id;
	uint64_t start_pfn, spanned, managed, free, parked, held;
	uint32_t node, state, owner;
	int nzones;
	char zones[RPM_MAX_ZONES][16];
	bool has_detail;
	uint64_t detail_present;
	uint64_t detail[REGIONPM_A_DETAIL_MAX + 1];
};

struct rpm_compact_res {
	uint64_t present;
	uint32_t id;
	uint64_t scanned, migrated, dropped, skipped, failed;
	uint32_t obstacle;
	uint64_t obstacle_pfn, free_pages, elapsed_ns;
};

struct rpm_event {
	uint8_t cmd;
	uint64_t present;	/* attributes of the event set */
	uint32_t id;
	uint32_t reason;
	uint64_t pages;
	struct rpm_compact_res compact;	/* REGION_COMPACT_NTF */
};

struct rpm {
	struct mnl_socket *nl;
	uint32_t portid;
	uint16_t family;
	uint32_t events_grp;
	uint32_t seq;
	/* event sockets: everything received, for failure messages */
	struct rpm_event evlog[RPM_EVLOG];
	unsigned int nev;
	unsigned int overruns;
};

/* Replies the kernel sent that do not match the spec (bad attribute sizes). */
static int g_proto_errs;
static char g_proto_msg[256];

static void __attribute__((format(printf, 1, 2))) proto_error(const char *fmt, ...)
{
	va_list ap;

	g_proto_errs++;
	va_start(ap, fmt);
	vsnprintf(g_proto_msg, sizeof(g_proto_msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "# protocol error: %s\n", g_proto_msg);
}

/*
 * Is @a a well-formed attribute of a set described by @types?  Unknown
 * (newer) types and pad attributes are skipped silently; a known type with
 * the wrong payload size is a protocol error.
 */
static bool attr_ok(const struct nlattr *a, const enum mnl_attr_data_type *types,
		    unsigned int max, const char *set)
{
	uint16_t type = mnl_attr_get_type(a);
	uint16_t len = mnl_attr_get_payload_len(a);
	int want = -1;

	if (type == 0 || type > max || types[type] == MNL_TYPE_UNSPEC)
		return false;
	switch (types[type]) {
	case MNL_TYPE_U8:	want = 1; break;
	case MNL_TYPE_U16:	want = 2; break;
	case MNL_TYPE_U32:	want = 4; break;
	case MNL_TYPE_U64:	want = 8; break;
	case MNL_TYPE_FLAG:	want = 0; break;
	default:		break;
	}
	if ((want >= 0 && len != want) || mnl_attr_validate(a, types[type]) < 0) {
		proto_error("%s attribute %u has a bad payload (%u bytes)", set,
			    type, len);
		return false;
	}
	return true;
}

static const enum mnl_attr_data_type info_types[REGIONPM_A_INFO_MAX + 1] = {
	[REGIONPM_A_INFO_REGION_SIZE]	= MNL_TYPE_U64,
	[REGIONPM_A_INFO_REGION_COUNT]	= MNL_TYPE_U32,
	[REGIONPM_A_INFO_BIAS]		= MNL_TYPE_U8,
	[REGIONPM_A_INFO_FRONTIER]	= MNL_TYPE_U32,
	[REGIONPM_A_INFO_PARKED_PAGES]	= MNL_TYPE_U64,
	[REGIONPM_A_INFO_HELD_PAGES]	= MNL_TYPE_U64,
};

static const enum mnl_attr_data_type region_types[REGIONPM_A_REGION_MAX + 1] = {
	[REGIONPM_A_REGION_ID]		= MNL_TYPE_U32,
	[REGIONPM_A_REGION_START_PFN]	= MNL_TYPE_U64,
	[REGIONPM_A_REGION_SPANNED_PAGES] = MNL_TYPE_U64,
	[REGIONPM_A_REGION_MANAGED_PAGES] = MNL_TYPE_U64,
	[REGIONPM_A_REGION_FREE_PAGES]	= MNL_TYPE_U64,
	[REGIONPM_A_REGION_NODE]	= MNL_TYPE_U32,
	[REGIONPM_A_REGION_ZONE]	= MNL_TYPE_STRING,
	[REGIONPM_A_REGION_STATE]	= MNL_TYPE_U32,
	[REGIONPM_A_REGION_OWNER_PORTID] = MNL_TYPE_U32,
	[REGIONPM_A_REGION_PARKED_PAGES] = MNL_TYPE_U64,
	[REGIONPM_A_REGION_SCAN]	= MNL_TYPE_FLAG,
	[REGIONPM_A_REGION_DETAIL]	= MNL_TYPE_NESTED,
	[REGIONPM_A_REGION_HELD_PAGES]	= MNL_TYPE_U64,
};

static const enum mnl_attr_data_type compact_types[REGIONPM_A_COMPACT_MAX + 1] = {
	[REGIONPM_A_COMPACT_ID]		= MNL_TYPE_U32,
	[REGIONPM_A_COMPACT_START_PFN]	= MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_NR_PAGES]	= MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_MODE]	= MNL_TYPE_U32,
	[REGIONPM_A_COMPACT_BUDGET]	= MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_SCANNED]	= MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_MIGRATED]	= MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_DROPPED]	= MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_SKIPPED]	= MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_FAILED]	= MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_OBSTACLE]	= MNL_TYPE_U32,
	[REGIONPM_A_COMPACT_OBSTACLE_PFN] = MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_FREE_PAGES]	= MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_ELAPSED_NS]	= MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_PARK]	= MNL_TYPE_FLAG,
};

static const enum mnl_attr_data_type event_types[REGIONPM_A_EVENT_MAX + 1] = {
	[REGIONPM_A_EVENT_ID]		= MNL_TYPE_U32,
	[REGIONPM_A_EVENT_REASON]	= MNL_TYPE_U32,
	[REGIONPM_A_EVENT_PAGES]	= MNL_TYPE_U64,
};

static int info_attr_cb(const struct nlattr *a, void *data)
{
	struct rpm_info *in = data;
	uint16_t type = mnl_attr_get_type(a);

	if (!attr_ok(a, info_types, REGIONPM_A_INFO_MAX, "info"))
		return MNL_CB_OK;
	in->present |= BIT64(type);
	switch (type) {
	case REGIONPM_A_INFO_REGION_SIZE:  in->region_size = mnl_attr_get_u64(a); break;
	case REGIONPM_A_INFO_REGION_COUNT: in->region_count = mnl_attr_get_u32(a); break;
	case REGIONPM_A_INFO_BIAS:	   in->bias = mnl_attr_get_u8(a); break;
	case REGIONPM_A_INFO_FRONTIER:	   in->frontier = mnl_attr_get_u32(a); break;
	case REGIONPM_A_INFO_PARKED_PAGES: in->parked_pages = mnl_attr_get_u64(a); break;
	case REGIONPM_A_INFO_HELD_PAGES:   in->held_pages = mnl_attr_get_u64(a); break;
	}
	return MNL_CB_OK;
}

static int detail_attr_cb(const struct nlattr *a, void *data)
{
	static const enum mnl_attr_data_type types[REGIONPM_A_DETAIL_MAX + 1] = {
		[REGIONPM_A_DETAIL_FREE ... REGIONPM_A_DETAIL_HUGE] = MNL_TYPE_U64,
	};
	struct rpm_region *r = data;
	uint16_t type = mnl_attr_get_type(a);

	if (!attr_ok(a, types, REGIONPM_A_DETAIL_MAX, "detail"))
		return MNL_CB_OK;
	r->detail_present |= BIT64(type);
	r->detail[type] = mnl_attr_get_u64(a);
	return MNL_CB_OK;
}

static int region_attr_cb(const struct nlattr *a, void *data)
{
	struct rpm_region *r = data;
	uint16_t type = mnl_attr_get_type(a);

	if (!attr_ok(a, region_types, REGIONPM_A_REGION_MAX, "region"))
		return MNL_CB_OK;
	r->present |= BIT64(type);
	switch (type) {
	case REGIONPM_A_REGION_ID:		r->id = mnl_attr_get_u32(a); break;
	case REGIONPM_A_REGION_START_PFN:	r->start_pfn = mnl_attr_get_u64(a); break;
	case REGIONPM_A_REGION_SPANNED_PAGES:	r->spanned = mnl_attr_get_u64(a); break;
	case REGIONPM_A_REGION_MANAGED_PAGES:	r->managed = mnl_attr_get_u64(a); break;
	case REGIONPM_A_REGION_FREE_PAGES:	r->free = mnl_attr_get_u64(a); break;
	case REGIONPM_A_REGION_NODE:		r->node = mnl_attr_get_u32(a); break;
	case REGIONPM_A_REGION_STATE:		r->state = mnl_attr_get_u32(a); break;
	case REGIONPM_A_REGION_OWNER_PORTID:	r->owner = mnl_attr_get_u32(a); break;
	case REGIONPM_A_REGION_PARKED_PAGES:	r->parked = mnl_attr_get_u64(a); break;
	case REGIONPM_A_REGION_HELD_PAGES:	r->held = mnl_attr_get_u64(a); break;
	case REGIONPM_A_REGION_ZONE: {
		/* multi-attr: one attribute per zone the region spans */
		size_t n = mnl_attr_get_payload_len(a);
		char *z;

		if (r->nzones == RPM_MAX_ZONES) {
			proto_error("region %u: more than %d zones", r->id,
				    RPM_MAX_ZONES);
			break;
		}
		z = r->zones[r->nzones++];
		n = u64min(n, sizeof(r->zones[0]) - 1);
		memcpy(z, mnl_attr_get_payload(a), n);
		z[n] = '\0';
		break;
	}
	case REGIONPM_A_REGION_DETAIL:
		r->has_detail = true;
		mnl_attr_parse_nested(a, detail_attr_cb, r);
		break;
	}
	return MNL_CB_OK;
}

static int compact_attr_cb(const struct nlattr *a, void *data)
{
	struct rpm_compact_res *c = data;
	uint16_t type = mnl_attr_get_type(a);

	if (!attr_ok(a, compact_types, REGIONPM_A_COMPACT_MAX, "compact"))
		return MNL_CB_OK;
	c->present |= BIT64(type);
	switch (type) {
	case REGIONPM_A_COMPACT_ID:		c->id = mnl_attr_get_u32(a); break;
	case REGIONPM_A_COMPACT_SCANNED:	c->scanned = mnl_attr_get_u64(a); break;
	case REGIONPM_A_COMPACT_MIGRATED:	c->migrated = mnl_attr_get_u64(a); break;
	case REGIONPM_A_COMPACT_DROPPED:	c->dropped = mnl_attr_get_u64(a); break;
	case REGIONPM_A_COMPACT_SKIPPED:	c->skipped = mnl_attr_get_u64(a); break;
	case REGIONPM_A_COMPACT_FAILED:		c->failed = mnl_attr_get_u64(a); break;
	case REGIONPM_A_COMPACT_OBSTACLE:	c->obstacle = mnl_attr_get_u32(a); break;
	case REGIONPM_A_COMPACT_OBSTACLE_PFN:	c->obstacle_pfn = mnl_attr_get_u64(a); break;
	case REGIONPM_A_COMPACT_FREE_PAGES:	c->free_pages = mnl_attr_get_u64(a); break;
	case REGIONPM_A_COMPACT_ELAPSED_NS:	c->elapsed_ns = mnl_attr_get_u64(a); break;
	}
	return MNL_CB_OK;
}

static int event_attr_cb(const struct nlattr *a, void *data)
{
	struct rpm_event *e = data;
	uint16_t type = mnl_attr_get_type(a);

	if (!attr_ok(a, event_types, REGIONPM_A_EVENT_MAX, "event"))
		return MNL_CB_OK;
	e->present |= BIT64(type);
	switch (type) {
	case REGIONPM_A_EVENT_ID:	e->id = mnl_attr_get_u32(a); break;
	case REGIONPM_A_EVENT_REASON:	e->reason = mnl_attr_get_u32(a); break;
	case REGIONPM_A_EVENT_PAGES:	e->pages = mnl_attr_get_u64(a); break;
	}
	return MNL_CB_OK;
}

/* Per-message callbacks: the attributes start after the genl header. */
static int info_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, GENL_HDRLEN, info_attr_cb, data);
}

static int region_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, GENL_HDRLEN, region_attr_cb, data);
}

static int compact_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, GENL_HDRLEN, compact_attr_cb, data);
}

/* Dump: regions are appended to a growing array. */
struct regions {
	struct rpm_region *r;
	int n, cap;
};

static void regions_free(struct regions *rs)
{
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}

static int region_dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct regions *rs = data;

	if (rs->n == rs->cap) {
		int cap = rs->cap ? rs->cap * 2 : 64;
		void *p = realloc(rs->r, cap * sizeof(*rs->r));

		if (!p)
			return MNL_CB_ERROR;
		rs->r = p;
		rs->cap = cap;
	}
	memset(&rs->r[rs->n], 0, sizeof(rs->r[0]));
	mnl_attr_parse(nlh, GENL_HDRLEN, region_attr_cb, &rs->r[rs->n]);
	rs->n++;
	return MNL_CB_OK;
}

static int local_err(struct rpm_ack *ack, int err, const char *what)
{
	ack->err = err;
	ack->local = true;
	snprintf(ack->msg, sizeof(ack->msg), "(local: %s: %s)", what, strerror(-err));
	return err;
}

/* The extended ack TLVs at @off bytes into the payload of @nlh. */
static void parse_extack(const struct nlmsghdr *nlh, size_t off, struct rpm_ack *ack)
{
	const struct nlattr *a;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	mnl_attr_for_each(a, nlh, MNL_ALIGN(off)) {
		switch (mnl_attr_get_type(a)) {
		case NLMSGERR_ATTR_MSG:
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
				snprintf(ack->msg, sizeof(ack->msg), "%s",
					 mnl_attr_get_str(a));
			break;
		case NLMSGERR_ATTR_OFFS:
			if (mnl_attr_validate(a, MNL_TYPE_U32) == 0)
				ack->bad_off = mnl_attr_get_u32(a);
			break;
		case NLMSGERR_ATTR_MISS_TYPE:
			if (mnl_attr_validate(a, MNL_TYPE_U32) == 0)
				ack->miss_type = mnl_attr_get_u32(a);
			break;
		}
	}
}

static void parse_nlmsgerr(const struct nlmsghdr *nlh, struct rpm_ack *ack)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t off = sizeof(*e);

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e)) {
		local_err(ack, -EBADMSG, "short NLMSG_ERROR");
		return;
	}
	ack->err = e->error;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	parse_extack(nlh, off, ack);
}

static void parse_done(const struct nlmsghdr *nlh, struct rpm_ack *ack)
{
	int err = 0;

	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(err))
		memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
	ack->err = err;
	parse_extack(nlh, sizeof(err), ack);
}

typedef int (*rpm_cb)(const struct nlmsghdr *nlh, void *data);

/*
 * Send @nlh and read until its ACK (do) or NLMSG_DONE (dump), feeding every
 * data message to @cb.  Returns 0 or a negative errno, also in @ack with the
 * kernel's extack message.
 */
static int rpm_transact(struct rpm *s, struct nlmsghdr *nlh, rpm_cb cb,
			void *data, struct rpm_ack *ack)
{
	static char buf[RPM_RXBUF] __attribute__((aligned(8)));
	uint32_t seq = nlh->nlmsg_seq;

	memset(ack, 0, sizeof(*ack));
	ack->miss_type = ack->bad_off = -1;
	if (mnl_socket_sendto(s->nl, nlh, nlh->nlmsg_len) < 0)
		return local_err(ack, -errno, "send");
	for (;;) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
		ssize_t n = mnl_socket_recvfrom(s->nl, buf, sizeof(buf));
		int len = n;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return local_err(ack, errno == EAGAIN ? -ETIMEDOUT : -errno,
					 "recv");
		}
		for (; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len)) {
			if (h->nlmsg_seq != seq)
				continue;	/* late answer to an earlier request */
			if (h->nlmsg_flags & NLM_F_DUMP_INTR)
				ack->intr = true;
			switch (h->nlmsg_type) {
			case NLMSG_NOOP:
				break;
			case NLMSG_ERROR:
				parse_nlmsgerr(h, ack);
				return ack->err;
			case NLMSG_DONE:
				parse_done(h, ack);
				return ack->err;
			case NLMSG_OVERRUN:
				return local_err(ack, -EOVERFLOW, "overrun");
			default:
				ack->replied = true;
				if (cb && cb(h, data) < MNL_CB_OK)
					return local_err(ack, -ENOMEM, "reply parsing");
			}
		}
	}
}

/* Start a request of @cmd to the netlink family @type. */
static struct nlmsghdr *rpm_msg_type(struct rpm *s, char *buf, uint16_t type,
				     uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++s->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = type == GENL_ID_CTRL ? 1 : REGIONPM_FAMILY_VERSION;
	return nlh;
}

/* A regionpm do request (acked, so extack warnings arrive on success too). */
static struct nlmsghdr *rpm_msg(struct rpm *s, char *buf, uint8_t cmd)
{
	return rpm_msg_type(s, buf, s->family, cmd, NLM_F_ACK);
}

struct ctrl_res {
	uint16_t family;
	uint32_t grp;
};

struct ctrl_grp {
	const char *name;
	uint32_t id;
};

static int ctrl_grp_cb(const struct nlattr *a, void *data)
{
	struct ctrl_grp *g = data;

	switch (mnl_attr_get_type(a)) {
	case CTRL_ATTR_MCAST_GRP_NAME:
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
			g->name = mnl_attr_get_str(a);
		break;
	case CTRL_ATTR_MCAST_GRP_ID:
		if (mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			g->id = mnl_attr_get_u32(a);
		break;
	}
	return MNL_CB_OK;
}

static int ctrl_attr_cb(const struct nlattr *a, void *data)
{
	struct ctrl_res *res = data;
	const struct nlattr *grp;

	switch (mnl_attr_get_type(a)) {
	case CTRL_ATTR_FAMILY_ID:
		if (mnl_attr_validate(a, MNL_TYPE_U16) == 0)
			res->family = mnl_attr_get_u16(a);
		break;
	case CTRL_ATTR_MCAST_GROUPS:
		mnl_attr_for_each_nested(grp, a) {
			struct ctrl_grp g = { NULL, 0 };

			mnl_attr_parse_nested(grp, ctrl_grp_cb, &g);
			if (g.name && !strcmp(g.name, REGIONPM_MCGRP_EVENTS))
				res->grp = g.id;
		}
		break;
	}
	return MNL_CB_OK;
}

static int ctrl_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, GENL_HDRLEN, ctrl_attr_cb, data);
}

/* CTRL_CMD_GETFAMILY: the family id and the "events" group id. */
static int rpm_resolve(struct rpm *s, struct rpm_ack *ack)
{
	char buf[RPM_TXBUF];
	struct ctrl_res res = { 0, 0 };
	struct nlmsghdr *nlh;
	int err;

	nlh = rpm_msg_type(s, buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_ACK);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, REGIONPM_FAMILY_NAME);
	err = rpm_transact(s, nlh, ctrl_msg_cb, &res, ack);
	if (err)
		return err;
	if (!res.family)
		return local_err(ack, -ENOENT, "no family id in CTRL reply");
	s->family = res.family;
	s->events_grp = res.grp;
	return 0;
}

static void rpm_close(struct rpm *s)
{
	if (s->nl)
		mnl_socket_close(s->nl);
	s->nl = NULL;
}

/* Open a request socket with extended acks and resolve the family. */
static int rpm_open(struct rpm *s, struct rpm_ack *ack)
{
	struct timeval tv = { .tv_sec = RPM_RECV_TIMEOUT_S };
	int one = 1, err;

	memset(s, 0, sizeof(*s));
	memset(ack, 0, sizeof(*ack));
	s->nl = mnl_socket_open(NETLINK_GENERIC);
	if (!s->nl)
		return local_err(ack, -errno, "socket");
	if (mnl_socket_setsockopt(s->nl, NETLINK_EXT_ACK, &one, sizeof(one)) < 0 ||
	    mnl_socket_setsockopt(s->nl, NETLINK_CAP_ACK, &one, sizeof(one)) < 0 ||
	    setsockopt(mnl_socket_get_fd(s->nl), SOL_SOCKET, SO_RCVTIMEO, &tv,
		       sizeof(tv)) < 0 ||
	    mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = local_err(ack, -errno, "socket setup");
		rpm_close(s);
		return err;
	}
	s->portid = mnl_socket_get_portid(s->nl);
	s->seq = (uint32_t)time(NULL);
	err = rpm_resolve(s, ack);
	if (err)
		rpm_close(s);
	return err;
}

/* Join the "events" group on @s; returns 0 or -errno (e.g. -EPERM). */
static int rpm_join_events(struct rpm *s)
{
	int grp = s->events_grp;

	if (!grp)
		return -ENOENT;
	if (mnl_socket_setsockopt(s->nl, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp)) < 0)
		return -errno;
	return 0;
}

/* A listening socket on the "events" group. */
static int rpm_events_open(struct rpm *ev, struct rpm_ack *ack)
{
	int big = 4 * MiB, err;

	err = rpm_open(ev, ack);
	if (err)
		return err;
	/* best effort: a burst of alloc events must not overrun it */
	setsockopt(mnl_socket_get_fd(ev->nl), SOL_SOCKET, SO_RCVBUFFORCE, &big,
		   sizeof(big));
	err = rpm_join_events(ev);
	if (err) {
		rpm_close(ev);
		return local_err(ack, err, "join events group");
	}
	return 0;
}

/* What rpm_event_wait() waits for. */
struct ev_match {
	uint8_t cmd;
	const uint32_t *ids;	/* the event's id must be one of these; NULL: any */
	int nids;
	uint32_t reasons;	/* release: bit mask of accepted reasons; 0: any */
};

static bool ev_matches(const struct rpm_event *e, const struct ev_match *m)
{
	int i;

	if (e->cmd != m->cmd)
		return false;
	if (m->ids) {
		if (!HAS(e, REGIONPM_A_EVENT_ID))
			return false;
		for (i = 0; i < m->nids; i++)
			if (m->ids[i] == e->id)
				break;
		if (i == m->nids)
			return false;
	}
	if (m->reasons && (!HAS(e, REGIONPM_A_EVENT_REASON) ||
			   e->reason >= 32 || !(m->reasons & (1U << e->reason))))
		return false;
	return true;
}

static void parse_event(const struct nlmsghdr *nlh, struct rpm_event *e)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);

	memset(e, 0, sizeof(*e));
	if (mnl_nlmsg_get_payload_len(nlh) < GENL_HDRLEN)
		return;
	e->cmd = g->cmd;
	if (e->cmd == REGIONPM_CMD_REGION_COMPACT_NTF) {
		mnl_attr_parse(nlh, GENL_HDRLEN, compact_attr_cb, &e->compact);
		if (HAS(&e->compact, REGIONPM_A_COMPACT_ID)) {
			e->id = e->compact.id;
			e->present |= BIT64(REGIONPM_A_EVENT_ID);
		}
	} else {
		mnl_attr_parse(nlh, GENL_HDRLEN, event_attr_cb, e);
	}
}

/*
 * Wait up to @timeout_ms for an event matching @m on the listening socket
 * @ev.  Everything received is kept in ev->evlog.  Returns 0 (and the event
 * in @out) or -ETIMEDOUT.
 */
static int rpm_event_wait(struct rpm *ev, int timeout_ms, const struct ev_match *m,
			  struct rpm_event *out)
{
	static char buf[RPM_RXBUF] __attribute__((aligned(8)));
	uint64_t deadline = now_ms() + timeout_ms;
	int fd = mnl_socket_get_fd(ev->nl);

	for (;;) {
		int64_t left = (int64_t)(deadline - now_ms());
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
		ssize_t n;
		int r, len;

		r = poll(&pfd, 1, left > 0 ? (int)left : 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == ENOBUFS)
				ev->overruns++;
			else if (errno != EAGAIN && errno != EINTR)
				return -errno;
			continue;
		}
		len = n;
		for (; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len)) {
			struct rpm_event e;

			if (h->nlmsg_type != ev->family)
				continue;
			parse_event(h, &e);
			ev->evlog[ev->nev++ % RPM_EVLOG] = e;
			if (m && ev_matches(&e, m)) {
				if (out)
					*out = e;
				return 0;
			}
		}
	}
}

/* For failure messages: every event the listener saw. */
static void log_events(struct __test_metadata *_metadata, const struct rpm *ev)
{
	unsigned int i, first = ev->nev > RPM_EVLOG ? ev->nev - RPM_EVLOG : 0;

	TH_LOG("events received: %u (socket overruns: %u)", ev->nev, ev->overruns);
	for (i = first; i < ev->nev; i++) {
		const struct rpm_event *e = &ev->evlog[i % RPM_EVLOG];

		TH_LOG("  %s id %u reason %s pages %" PRIu64, cmd_name(e->cmd),
		       e->id, HAS(e, REGIONPM_A_EVENT_REASON) ?
		       reason_name(e->reason) : "-", e->pages);
	}
}

/* ---- operations ---- */

static int rpm_info_get(struct rpm *s, struct rpm_info *in, struct rpm_ack *ack)
{
	char buf[RPM_TXBUF];
	struct nlmsghdr *nlh = rpm_msg(s, buf, REGIONPM_CMD_INFO_GET);
	int err;

	memset(in, 0, sizeof(*in));
	err = rpm_transact(s, nlh, info_msg_cb, in, ack);
	if (!err && !ack->replied)
		return local_err(ack, -ENODATA, "no reply");
	return err;
}

static int rpm_region_get(struct rpm *s, uint32_t id, bool detail,
			  struct rpm_region *r, struct rpm_ack *ack)
{
	char buf[RPM_TXBUF];
	struct nlmsghdr *nlh = rpm_msg(s, buf, REGIONPM_CMD_REGION_GET);
	int err;

	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_ID, id);
	if (detail)
		mnl_attr_put(nlh, REGIONPM_A_REGION_SCAN, 0, NULL);
	memset(r, 0, sizeof(*r));
	err = rpm_transact(s, nlh, region_msg_cb, r, ack);
	if (!err && !ack->replied)
		return local_err(ack, -ENODATA, "no reply");
	return err;
}

/* Dump all regions (retried if the table changed under the dump). */
static int regions_dump(struct rpm *s, bool detail, struct regions *rs,
			struct rpm_ack *ack)
{
	int err = 0, tries;

	for (tries = 0; tries < 3; tries++) {
		char buf[RPM_TXBUF];
		struct nlmsghdr *nlh;

		regions_free(rs);
		nlh = rpm_msg_type(s, buf, s->family, REGIONPM_CMD_REGION_GET,
				   NLM_F_DUMP);
		if (detail)
			mnl_attr_put(nlh, REGIONPM_A_REGION_SCAN, 0, NULL);
		err = rpm_transact(s, nlh, region_dump_cb, rs, ack);
		if (err || !ack->intr)
			break;
	}
	return err;
}

static const struct rpm_region *region_find(const struct regions *rs, uint32_t id)
{
	int i;

	for (i = 0; i < rs->n; i++)
		if (rs->r[i].id == id)
			return &rs->r[i];
	return NULL;
}

struct compact_req {
	uint32_t id;
	bool has_range;
	uint64_t start_pfn, nr_pages;
	int mode;		/* enum regionpm_compact_mode; -1: default */
	uint64_t budget;	/* 0: default (attribute not sent) */
};

static int rpm_compact(struct rpm *s, const struct compact_req *rq,
		       struct rpm_compact_res *res, struct rpm_ack *ack)
{
	char buf[RPM_TXBUF];
	struct nlmsghdr *nlh = rpm_msg(s, buf, REGIONPM_CMD_REGION_COMPACT);

	mnl_attr_put_u32(nlh, REGIONPM_A_COMPACT_ID, rq->id);
	if (rq->has_range) {
		mnl_attr_put_u64(nlh, REGIONPM_A_COMPACT_START_PFN, rq->start_pfn);
		mnl_attr_put_u64(nlh, REGIONPM_A_COMPACT_NR_PAGES, rq->nr_pages);
	}
	if (rq->mode >= 0)
		mnl_attr_put_u32(nlh, REGIONPM_A_COMPACT_MODE, rq->mode);
	if (rq->budget)
		mnl_attr_put_u64(nlh, REGIONPM_A_COMPACT_BUDGET, rq->budget);
	memset(res, 0, sizeof(*res));
	return rpm_transact(s, nlh, compact_msg_cb, res, ack);
}

/* Park @id; with @compact_first the kernel evacuates it first (mode BOTH). */
static int rpm_park(struct rpm *s, uint32_t id, bool compact_first,
		    struct rpm_compact_res *res, struct rpm_ack *ack)
{
	char buf[RPM_TXBUF];
	struct nlmsghdr *nlh = rpm_msg(s, buf, REGIONPM_CMD_REGION_PARK);

	mnl_attr_put_u32(nlh, REGIONPM_A_COMPACT_ID, id);
	if (compact_first)
		mnl_attr_put(nlh, REGIONPM_A_COMPACT_PARK, 0, NULL);
	memset(res, 0, sizeof(*res));
	return rpm_transact(s, nlh, compact_msg_cb, res, ack);
}

/* Hold @id (or renew the hold); @r gets the region as the reply shows it. */
static int rpm_hold(struct rpm *s, uint32_t id, struct rpm_region *r, struct rpm_ack *ack)
{
	char buf[RPM_TXBUF];
	struct nlmsghdr *nlh = rpm_msg(s, buf, REGIONPM_CMD_REGION_HOLD);
	int err;

	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_ID, id);
	memset(r, 0, sizeof(*r));
	err = rpm_transact(s, nlh, region_msg_cb, r, ack);
	if (!err && !ack->replied)
		return local_err(ack, -ENODATA, "no reply");
	return err;
}

static int rpm_unpark(struct rpm *s, uint32_t id, struct rpm_ack *ack)
{
	char buf[RPM_TXBUF];
	struct nlmsghdr *nlh = rpm_msg(s, buf, REGIONPM_CMD_REGION_UNPARK);

	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_ID, id);
	return rpm_transact(s, nlh, NULL, NULL, ack);
}

/* An attribute exactly as given, for malformed requests. */
struct raw_attr {
	uint16_t type;		/* may include NLA_F_NESTED */
	uint16_t len;		/* payload bytes taken from val (little endian) */
	uint64_t val;
};

static int rpm_raw(struct rpm *s, uint8_t cmd, uint16_t flags,
		   const struct raw_attr *attrs, int nattrs, struct rpm_ack *ack)
{
	char buf[RPM_TXBUF];
	struct nlmsghdr *nlh = rpm_msg_type(s, buf, s->family, cmd, flags);
	int i;

	for (i = 0; i < nattrs; i++)
		mnl_attr_put(nlh, attrs[i].type, attrs[i].len, &attrs[i].val);
	return rpm_transact(s, nlh, NULL, NULL, ack);
}

/* ------------------------------------------------------------------------
 * Region helpers
 */
static uint64_t region_unmovable(const struct rpm_region *r)
{
	return r->detail[REGIONPM_A_DETAIL_SLAB] +
	       r->detail[REGIONPM_A_DETAIL_PAGE_TABLE] +
	       r->detail[REGIONPM_A_DETAIL_KERNEL_OTHER] +
	       r->detail[REGIONPM_A_DETAIL_UNEVICTABLE];
}

static uint64_t region_movable(const struct rpm_region *r)
{
	return r->detail[REGIONPM_A_DETAIL_ANON] +
	       r->detail[REGIONPM_A_DETAIL_FILE_CLEAN] +
	       r->detail[REGIONPM_A_DETAIL_FILE_DIRTY] +
	       r->detail[REGIONPM_A_DETAIL_WRITEBACK] +
	       r->detail[REGIONPM_A_DETAIL_SHMEM];
}

static bool region_completely_free(const struct rpm_region *r)
{
	return r->state == REGIONPM_REGION_STATE_ACTIVE && r->managed &&
	       r->free == r->managed;
}

static void log_region(struct __test_metadata *_metadata, const char *what,
		       const struct rpm_region *r)
{
	TH_LOG("%s region %u: pfn %#" PRIx64 "+%" PRIu64 " %s zone %s managed %"
	       PRIu64 " free %" PRIu64 " parked %" PRIu64, what, r->id,
	       r->start_pfn, r->spanned, state_name(r->state),
	       r->nzones ? r->zones[0] : "-", r->managed, r->free, r->parked);
	if (r->has_detail)
		TH_LOG("  detail: free %" PRIu64 " anon %" PRIu64 " file %" PRIu64
		       "+%" PRIu64 " dirty, wb %" PRIu64 " shmem %" PRIu64
		       " unevictable %" PRIu64 " slab %" PRIu64 " pt %" PRIu64
		       " reserved %" PRIu64 " kernel %" PRIu64 " offline %" PRIu64
		       " huge %" PRIu64,
		       r->detail[REGIONPM_A_DETAIL_FREE],
		       r->detail[REGIONPM_A_DETAIL_ANON],
		       r->detail[REGIONPM_A_DETAIL_FILE_CLEAN],
		       r->detail[REGIONPM_A_DETAIL_FILE_DIRTY],
		       r->detail[REGIONPM_A_DETAIL_WRITEBACK],
		       r->detail[REGIONPM_A_DETAIL_SHMEM],
		       r->detail[REGIONPM_A_DETAIL_UNEVICTABLE],
		       r->detail[REGIONPM_A_DETAIL_SLAB],
		       r->detail[REGIONPM_A_DETAIL_PAGE_TABLE],
		       r->detail[REGIONPM_A_DETAIL_RESERVED],
		       r->detail[REGIONPM_A_DETAIL_KERNEL_OTHER],
		       r->detail[REGIONPM_A_DETAIL_OFFLINE],
		       r->detail[REGIONPM_A_DETAIL_HUGE]);
}

/* A compaction's result, as one line: @what, the counts, the obstacle, the extack. */
static void log_compact_res(struct __test_metadata *_metadata, const char *what,
			    const struct rpm_compact_res *res, const char *msg)
{
	TH_LOG("%s: scanned %" PRIu64 " migrated %" PRIu64 " dropped %" PRIu64 " skipped %"
	       PRIu64 " failed %" PRIu64 " free %" PRIu64 " in %" PRIu64
	       " ms, obstacle %s at pfn %#" PRIx64 " \"%s\"", what, res->scanned,
	       res->migrated, res->dropped, res->skipped, res->failed, res->free_pages,
	       res->elapsed_ns / 1000000, obstacle_name(res->obstacle), res->obstacle_pfn,
	       msg);
}

/* After a refused park: what region @id still holds, from a fresh scan. */
static void log_refused(struct __test_metadata *_metadata, struct rpm *s, uint32_t id)
{
	struct rpm_region left;
	struct rpm_ack ack;

	if (!rpm_region_get(s, id, true, &left, &ack))
		log_region(_metadata, "refused", &left);
}

/*
 * Regions a test may evacuate or park, highest id first: active, mostly
 * managed, at most @max_unmovable unmovable pages and at least @min_movable
 * movable ones according to the detail scan (@rs must have details).
 */
static int pick_candidates(const struct regions *rs, uint32_t *ids, int max,
			   uint64_t max_unmovable, uint64_t min_movable)
{
	int i, n = 0;

	for (i = rs->n - 1; i >= 0 && n < max; i--) {
		const struct rpm_region *r = &rs->r[i];

		if (r->state != REGIONPM_REGION_STATE_ACTIVE || !r->has_detail ||
		    !r->managed || r->managed * 2 < r->spanned)
			continue;
		if (region_unmovable(r) > max_unmovable ||
		    region_movable(r) < min_movable)
			continue;
		ids[n++] = r->id;
	}
	return n;
}

/*
 * Park the first of @ids that parks (PARK flag: compact first).  Returns the
 * index into @ids, or -1; failures are logged with the kernel's message.
 */
static int park_first(struct __test_metadata *_metadata, struct rpm *s,
		      const uint32_t *ids, int n, struct rpm_compact_res *res)
{
	struct rpm_ack ack;
	int i, err;

	for (i = 0; i < n; i++) {
		err = rpm_park(s, ids[i], true, res, &ack);
		if (!err)
			return i;
		TH_LOG("parking region %u failed: %s, extack \"%s\"", ids[i],
		       strerror(-err), ack.msg);
		log_refused(_metadata, s, ids[i]);
	}
	return -1;
}

/* Poll region @id until its state is @state; returns ms waited or -1. */
static int wait_region_state(struct rpm *s, uint32_t id, uint32_t state,
			     int timeout_ms, struct rpm_region *r)
{
	uint64_t t0 = now_ms();
	struct rpm_ack ack;

	for (;;) {
		if (!rpm_region_get(s, id, false, r, &ack) && r->state == state)
			return (int)(now_ms() - t0);
		if (now_ms() - t0 > (uint64_t)timeout_ms)
			return -1;
		sleep_ms(10);
	}
}

/*
 * Count the free buddy pages of every region by walking /proc/kpageflags:
 * this kernel sets KPF_BUDDY on every page of a free buddy block.
 */
static int kpf_count_buddy(uint64_t base_pfn, uint64_t region_pages,
			   uint32_t nregions, uint64_t *out)
{
	const size_t chunk = 64 * 1024;
	uint64_t end = base_pfn + region_pages * nregions, pfn;
	uint64_t *flags;
	int fd, err = 0;

	memset(out, 0, nregions * sizeof(*out));
	fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	flags = malloc(chunk * sizeof(*flags));
	if (!flags) {
		close(fd);
		return -ENOMEM;
	}
	for (pfn = base_pfn; pfn < end;) {
		size_t want = u64min(chunk, end - pfn), i;
		ssize_t got = pread(fd, flags, want * sizeof(*flags),
				    pfn * sizeof(*flags));

		if (got < 0) {
			err = -errno;
			break;
		}
		if (got == 0)
			break;	/* past the last pfn */
		for (i = 0; i < (size_t)got / sizeof(*flags); i++)
			if (flags[i] & BIT64(KPF_BUDDY))
				out[(pfn + i - base_pfn) / region_pages]++;
		pfn += got / sizeof(*flags);
	}
	free(flags);
	close(fd);
	return err;
}

/* ------------------------------------------------------------------------
 * Workloads: memory hogs in child processes, patterned anon memory and files
 */

/*
 * A child that allocates and touches @bytes of anonymous memory in 16 MiB
 * steps, writes "D" to its pipe when it has all of it (it just dies if the
 * OOM killer picks it), then holds it for @hold_ms (forever if negative)
 * and exits 0.
 */
struct hog {
	pid_t pid;
	int fd;
	bool done;
};

static void __attribute__((noreturn)) hog_run(uint64_t bytes, int hold_ms, int fd)
{
	const uint64_t chunk = 16 * MiB, pg = page_size();
	uint64_t done = 0, off;

	while (done < bytes) {
		uint64_t len = u64min(chunk, bytes - done);
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			_exit(2);
		for (off = 0; off < len; off += pg)
			p[off] = 1;
		done += len;
	}
	if (write(fd, "D", 1) != 1)
		_exit(3);
	if (hold_ms < 0)
		for (;;)
			pause();
	sleep_ms(hold_ms);
	_exit(0);
}

static int hog_start(struct hog *h, uint64_t bytes, int hold_ms)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	h->done = false;
	h->pid = fork();
	if (h->pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (h->pid == 0) {
		close(p[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		hog_run(bytes, hold_ms, p[1]);
	}
	close(p[1]);
	h->fd = p[0];
	return 0;
}

/* 1: holds all its memory, 0: still allocating, -1: died. */
static int hog_poll(struct hog *h, int timeout_ms)
{
	struct pollfd pfd = { .fd = h->fd, .events = POLLIN };
	char c;

	if (h->done)
		return 1;
	if (poll(&pfd, 1, timeout_ms) <= 0)
		return 0;
	if (read(h->fd, &c, 1) == 1 && c == 'D') {
		h->done = true;
		return 1;
	}
	return -1;
}

/* Kill and reap; returns the wait status (or -1 if there was no child). */
static int hog_stop(struct hog *h)
{
	int status = -1;

	if (h->pid <= 0)
		return -1;
	kill(h->pid, SIGKILL);
	waitpid(h->pid, &status, 0);
	close(h->fd);
	h->pid = 0;
	return status;
}

/*
 * Page contents: word i of page p is tag(seed, p) ^ i, so every page is
 * distinct, every word of it is checked, and a zeroed page never passes.
 */
static uint64_t page_tag(uint64_t seed, uint64_t page)
{
	uint64_t x = (seed + page + 1) * 0x9e3779b97f4a7c15ULL;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 32;
	return x | BIT64(63);
}

static void fill_pattern(void *buf, uint64_t len, uint64_t seed, uint64_t first_page)
{
	uint64_t wpp = page_size() / 8, p, i, *w = buf;

	for (p = 0; p < len / page_size(); p++) {
		uint64_t tag = page_tag(seed, first_page + p);

		for (i = 0; i < wpp; i++)
			w[p * wpp + i] = tag ^ i;
	}
}

/* Index of the first page that does not hold its pattern, or -1. */
static int64_t check_pattern(const void *buf, uint64_t len, uint64_t seed,
			     uint64_t first_page)
{
	uint64_t wpp = page_size() / 8, p, i;
	const uint64_t *w = buf;

	for (p = 0; p < len / page_size(); p++) {
		uint64_t tag = page_tag(seed, first_page + p);

		for (i = 0; i < wpp; i++)
			if (w[p * wpp + i] != (tag ^ i))
				return (int64_t)p;
	}
	return -1;
}

/* Append @bytes of pattern (pages first_page...) to the open file @fd. */
static int write_pattern(int fd, uint64_t bytes, uint64_t seed, uint64_t first_page)
{
	const uint64_t bufsz = MiB;
	uint64_t done = 0;
	char *buf = malloc(bufsz);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (done < bytes) {
		uint64_t n = u64min(bufsz, bytes - done), off = 0;

		fill_pattern(buf, n, seed, first_page + done / page_size());
		while (off < n) {
			ssize_t w = write(fd, buf + off, n - off);

			if (w < 0) {
				err = -errno;
				goto out;
			}
			off += w;
		}
		done += n;
	}
out:
	free(buf);
	return err;
}

static int write_pattern_file(const char *path, uint64_t bytes, uint64_t seed,
			      bool sync_it)
{
	int fd, err;

	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = write_pattern(fd, bytes, seed, 0);
	if (!err && sync_it && fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

/*
 * Read @path through a fresh descriptor (page cache, or disk for what is
 * not cached) and check its pattern.  Returns 0, -errno, or 1 with the
 * first bad page in @bad.
 */
static int verify_pattern_file(const char *path, uint64_t bytes, uint64_t seed,
			       int64_t *bad)
{
	const uint64_t bufsz = MiB;
	uint64_t done = 0;
	char *buf = malloc(bufsz);
	int fd, err = 0;

	*bad = -1;
	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	while (done < bytes) {
		uint64_t n = u64min(bufsz, bytes - done);
		ssize_t got = pread(fd, buf, n, done);
		int64_t p;

		if (got != (ssize_t)n) {
			err = got < 0 ? -errno : -EIO;
			break;
		}
		p = check_pattern(buf, n, seed, done / page_size());
		if (p >= 0) {
			*bad = p + done / page_size();
			err = 1;
			break;
		}
		done += n;
	}
	close(fd);
	free(buf);
	return err;
}

/* The vm.dirty_* knobs test 5 changes, restored by the teardown. */
static const char *const dirty_knobs[] = {
	"/proc/sys/vm/dirty_ratio",
	"/proc/sys/vm/dirty_bytes",
	"/proc/sys/vm/dirty_background_ratio",
	"/proc/sys/vm/dirty_background_bytes",
	"/proc/sys/vm/dirty_expire_centisecs",
	"/proc/sys/vm/dirty_writeback_centisecs",
};

struct dirty_save {
	char val[ARRAY_SIZE(dirty_knobs)][32];
};

static int dirty_save(struct dirty_save *d)
{
	size_t i;
	int err;

	for (i = 0; i < ARRAY_SIZE(dirty_knobs); i++) {
		err = read_text(dirty_knobs[i], d->val[i], sizeof(d->val[i]));
		if (err < 0)
			return err;
	}
	return 0;
}

static void dirty_restore(const struct dirty_save *d)
{
	size_t i;

	/* writing *_ratio clears *_bytes and back: the one in use wins */
	for (i = 0; i < 4; i += 2) {
		if (strtoull(d->val[i + 1], NULL, 10))
			write_text(dirty_knobs[i + 1], d->val[i + 1]);
		else
			write_text(dirty_knobs[i], d->val[i]);
	}
	write_text(dirty_knobs[4], d->val[4]);
	write_text(dirty_knobs[5], d->val[5]);
}

/* ------------------------------------------------------------------------
 * The fixture: a request socket, the layout, and cleanup of whatever a test
 * leaves behind.
 */
#define MAX_HOGS 4

FIXTURE(regionpm)
{
	struct rpm rpm;			/* request socket, never subscribed */
	struct rpm_info info;
	uint64_t pgsz;
	uint64_t region_pages;
	uint64_t pageblock;		/* pages per pageblock */
	unsigned long taint_before;
	struct hog hog[MAX_HOGS];	/* killed by the teardown */
	char workdir[256];		/* removed by the teardown */
	bool workdir_tmpfs;
	struct dirty_save dirty;
	bool dirty_saved;
	int64_t hugepages_saved;	/* vm.nr_hugepages to restore, if >= 0 */
	char unevictable_saved[16];	/* vm.compact_unevictable_allowed */
	bool unevictable_set;
};

/* Is a missing family a failure (our kernel) rather than a skip? */
static bool family_required(void)
{
	char buf[256];

	if (getenv("REGIONPM_REQUIRE_FAMILY"))
		return true;
	return read_text("/proc/sys/kernel/osrelease", buf, sizeof(buf)) > 0 &&
	       strstr(buf, "regionpm");
}

FIXTURE_SETUP(regionpm)
{
	struct rpm_ack ack;
	int err;

	self->hugepages_saved = -1;	/* the teardown runs after a skip too */
	if (geteuid() != 0)
		SKIP(return, "needs root (CAP_SYS_ADMIN, /proc/kpageflags)");
	self->pgsz = page_size();
	err = rpm_open(&self->rpm, &ack);
	if (err == -ENOENT && !family_required())
		SKIP(return, "generic netlink family \"%s\" is not registered (kernel without regionpm?)",
		     REGIONPM_FAMILY_NAME);
	ASSERT_EQ(0, err) TH_LOG("opening the %s family: %s, extack \"%s\"",
				 REGIONPM_FAMILY_NAME, strerror(-err), ack.msg);
	ASSERT_NE(0U, self->rpm.events_grp)
		TH_LOG("the family has no \"%s\" multicast group", REGIONPM_MCGRP_EVENTS);
	err = rpm_info_get(&self->rpm, &self->info, &ack);
	ASSERT_EQ(0, err) TH_LOG("INFO_GET: %s, extack \"%s\"", strerror(-err), ack.msg);
	ASSERT_NE(0UL, self->info.region_size);
	ASSERT_NE(0U, self->info.region_count);
	self->region_pages = self->info.region_size / self->pgsz;
	self->pageblock = read_pageblock_pages();
	self->taint_before = read_taint();
}

static void remove_workdir(const char *dir)
{
	char path[PATH_MAX + 256];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

FIXTURE_TEARDOWN(regionpm)
{
	struct regions rs = { 0 };
	struct rpm_ack ack;
	unsigned long taint;
	int i;

	for (i = 0; i < MAX_HOGS; i++)
		hog_stop(&self->hog[i]);
	if (self->workdir[0])
		remove_workdir(self->workdir);
	if (self->dirty_saved)
		dirty_restore(&self->dirty);
	if (self->hugepages_saved >= 0) {
		char buf[32];

		/* pages still mapped become surplus, freed as the process exits */
		snprintf(buf, sizeof(buf), "%" PRId64, self->hugepages_saved);
		write_text("/proc/sys/vm/nr_hugepages", buf);
	}
	if (self->unevictable_set)
		write_text("/proc/sys/vm/compact_unevictable_allowed", self->unevictable_saved);
	/* closing the socket releases them too, but say it explicitly */
	if (self->rpm.nl && !regions_dump(&self->rpm, false, &rs, &ack)) {
		for (i = 0; i < rs.n; i++)
			if ((rs.r[i].state == REGIONPM_REGION_STATE_PARKED ||
			     rs.r[i].state == REGIONPM_REGION_STATE_HELD) &&
			    rs.r[i].owner == self->rpm.portid)
				rpm_unpark(&self->rpm, rs.r[i].id, &ack);
	}
	regions_free(&rs);
	rpm_close(&self->rpm);

	taint = read_taint();
	EXPECT_EQ(0UL, (taint & ~self->taint_before) & TAINT_COMPLAINED)
		TH_LOG("the kernel got tainted during the test (%#lx -> %#lx): see dmesg for a WARNING or BUG",
		       self->taint_before, taint);
}

/*
 * A directory for the test's files: on the scratch ext4 disk when there is
 * one, else under $TMPDIR (possibly tmpfs, i.e. shmem rather than page cache).
 */
static int make_workdir(FIXTURE_DATA(regionpm) *self)
{
	struct statfs sf;
	const char *base = SCRATCH_DIR;
	struct stat st;

	if (stat(SCRATCH_DIR, &st) || !S_ISDIR(st.st_mode)) {
		base = getenv("TMPDIR");
		if (!base)
			base = "/tmp";
	}
	snprintf(self->workdir, sizeof(self->workdir), "%s/regionpm-test.%d",
		 base, getpid());
	if (mkdir(self->workdir, 0700) && errno != EEXIST) {
		int err = -errno;

		self->workdir[0] = '\0';
		return err;
	}
	self->workdir_tmpfs = !statfs(self->workdir, &sf) && sf.f_type == TMPFS_MAGIC;
	return 0;
}

static void workfile(FIXTURE_DATA(regionpm) *self, char *path, size_t len,
		     const char *kind, int i)
{
	snprintf(path, len, "%s/%s-%03d", self->workdir, kind, i);
}

/* ------------------------------------------------------------------------
 * 1. The dump describes the layout consistently with INFO_GET and meminfo.
 */
TEST_F(regionpm, dump_sane)
{
	static const char *const zone_names[] = { "DMA", "DMA32", "Normal", "Movable" };
	const uint64_t need = BIT64(REGIONPM_A_REGION_ID) |
		BIT64(REGIONPM_A_REGION_START_PFN) |
		BIT64(REGIONPM_A_REGION_SPANNED_PAGES) |
		BIT64(REGIONPM_A_REGION_MANAGED_PAGES) |
		BIT64(REGIONPM_A_REGION_FREE_PAGES) |
		BIT64(REGIONPM_A_REGION_NODE) |
		BIT64(REGIONPM_A_REGION_STATE) |
		BIT64(REGIONPM_A_REGION_PARKED_PAGES);
	const struct rpm_info *in = &self->info;
	uint64_t sum_managed = 0, sum_parked = 0, memtotal;
	struct regions rs = { 0 }, rsd = { 0 };
	struct rpm_info info2;
	struct rpm_ack ack;
	char buf[64], path[64];
	int i, err;
	size_t z;

	/* INFO_GET */
	EXPECT_EQ(BIT64(REGIONPM_A_INFO_MAX + 1) - 2, in->present)
		TH_LOG("INFO_GET must carry all of region-size, region-count, bias, frontier, parked-pages (present mask %#" PRIx64 ")",
		       in->present);
	EXPECT_EQ(0UL, in->region_size % self->pgsz)
		TH_LOG("region size %" PRIu64 " is not a multiple of the page size", in->region_size);
	EXPECT_GE(1, in->bias);
	EXPECT_GE(in->region_count, in->frontier);
	if (!kernel_cmdline_has("regionpm.region_size=") &&
	    read_text("/sys/devices/system/memory/block_size_bytes", buf, sizeof(buf)) > 0)
		EXPECT_EQ(strtoull(buf, NULL, 16), in->region_size)
			TH_LOG("default region size must be the memory block size (0x%s)", buf);

	err = regions_dump(&self->rpm, false, &rs, &ack);
	ASSERT_EQ(0, err) TH_LOG("REGION_GET dump: %s, extack \"%s\"", strerror(-err), ack.msg);
	memtotal = memtotal_pages();
	ASSERT_LT(0, rs.n) TH_LOG("the dump returned no region");
	EXPECT_GE(in->region_count, (uint32_t)rs.n)
		TH_LOG("%d regions with memory but region-count is %u", rs.n, in->region_count);

	for (i = 0; i < rs.n; i++) {
		const struct rpm_region *r = &rs.r[i], *prev = i ? &rs.r[i - 1] : NULL;

		EXPECT_EQ(need, r->present & need)
			TH_LOG("region #%d (id %u) lacks attributes: present %#" PRIx64 ", needed %#" PRIx64,
			       i, r->id, r->present, need);
		EXPECT_GT(in->region_count, r->id)
			TH_LOG("region id %u >= region-count %u", r->id, in->region_count);
		if (prev) {
			EXPECT_LT(prev->id, r->id)
				TH_LOG("dump not sorted: region %u after %u", r->id, prev->id);
			EXPECT_LE(prev->start_pfn + prev->spanned, r->start_pfn)
				TH_LOG("region %u [%#" PRIx64 "+%" PRIu64 "] overlaps region %u at %#" PRIx64,
				       prev->id, prev->start_pfn, prev->spanned, r->id, r->start_pfn);
		}
		EXPECT_EQ((uint64_t)r->id * self->region_pages, r->start_pfn)
			TH_LOG("region %u: start pfn must be id * %" PRIu64,
			       r->id, self->region_pages);
		EXPECT_LT(0UL, r->spanned);
		EXPECT_GE(self->region_pages, r->spanned)
			TH_LOG("region %u spans %" PRIu64 " pages, more than a region", r->id, r->spanned);
		EXPECT_LE(r->managed, r->spanned)
			TH_LOG("region %u: managed %" PRIu64 " > spanned %" PRIu64, r->id, r->managed, r->spanned);
		EXPECT_LE(r->free, r->managed)
			TH_LOG("region %u: free %" PRIu64 " > managed %" PRIu64, r->id, r->free, r->managed);
		EXPECT_GE((uint32_t)REGIONPM_REGION_STATE_BUSY, r->state)
			TH_LOG("region %u: unknown state %u", r->id, r->state);
		EXPECT_EQ(r->state == REGIONPM_REGION_STATE_PARKED,
			  HAS(r, REGIONPM_A_REGION_OWNER_PORTID))
			TH_LOG("region %u (%s): owner-portid must be present exactly when parked",
			       r->id, state_name(r->state));
		EXPECT_FALSE(r->has_detail)
			TH_LOG("region %u: detail nest without scan", r->id);
		EXPECT_LT(0, r->nzones) TH_LOG("region %u names no zone", r->id);
		for (int j = 0; j < r->nzones; j++) {
			for (z = 0; z < ARRAY_SIZE(zone_names); z++)
				if (!strcmp(zone_names[z], r->zones[j]))
					break;
			EXPECT_GT(ARRAY_SIZE(zone_names), z)
				TH_LOG("region %u: unknown zone \"%s\"", r->id, r->zones[j]);
		}
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%u", r->node);
		EXPECT_EQ(0, access(path, F_OK))
			TH_LOG("region %u: node %u does not exist", r->id, r->node);
		sum_managed += r->managed;
		sum_parked += r->parked;
	}
	EXPECT_EQ(memtotal, sum_managed)
		TH_LOG("sum of managed-pages over all regions must equal MemTotal (%" PRIu64 " pages)", memtotal);
	err = rpm_info_get(&self->rpm, &info2, &ack);
	ASSERT_EQ(0, err);
	EXPECT_EQ(info2.parked_pages, sum_parked)
		TH_LOG("info parked-pages vs the sum over regions");

	/* The do agrees with the dump and adds the detail nest on request. */
	for (i = 0; i < rs.n; i++) {
		const struct rpm_region *r = &rs.r[i];
		struct rpm_region one;

		err = rpm_region_get(&self->rpm, r->id, true, &one, &ack);
		EXPECT_EQ(0, err) TH_LOG("REGION_GET do of region %u: %s, extack \"%s\"",
					 r->id, strerror(-err), ack.msg);
		if (err)
			continue;
		EXPECT_EQ(r->id, one.id);
		EXPECT_EQ(r->start_pfn, one.start_pfn);
		EXPECT_EQ(r->spanned, one.spanned);
		EXPECT_TRUE(one.has_detail)
			TH_LOG("region %u: no detail nest despite scan", r->id);
		for (int t = REGIONPM_A_DETAIL_FREE; t <= REGIONPM_A_DETAIL_HUGE; t++) {
			EXPECT_GE(one.spanned, one.detail[t])
				TH_LOG("region %u: detail attribute %d = %" PRIu64 " exceeds the region",
				       r->id, t, one.detail[t]);
		}
	}
	err = regions_dump(&self->rpm, true, &rsd, &ack);
	ASSERT_EQ(0, err) TH_LOG("REGION_GET dump with scan: %s, extack \"%s\"",
				 strerror(-err), ack.msg);
	EXPECT_EQ(rs.n, rsd.n);
	for (i = 0; i < rsd.n; i++) {
		EXPECT_TRUE(rsd.r[i].has_detail)
			TH_LOG("dump with scan: region %u has no detail", rsd.r[i].id);
	}

	EXPECT_EQ(0, g_proto_errs) TH_LOG("malformed replies, last: %s", g_proto_msg);
	regions_free(&rs);
	regions_free(&rsd);
}

/* ------------------------------------------------------------------------
 * 2. Incremental free counts agree with a pfn walk of /proc/kpageflags.
 */
static bool free_counts_agree(struct __test_metadata *_metadata,
			      const struct regions *a, const struct regions *b,
			      const uint64_t *kpf, uint32_t count, bool verbose)
{
	uint64_t sum_dump = 0, sum_kpf = 0, tol;
	bool ok = true;
	uint32_t id;
	int i;

	for (i = 0; i < a->n; i++) {
		const struct rpm_region *ra = &a->r[i], *rb = region_find(b, ra->id);
		uint64_t lo, hi, k;

		if (ra->id >= count) {
			if (verbose)
				TH_LOG("region id %u >= region-count %u", ra->id, count);
			ok = false;
			continue;
		}
		k = kpf[ra->id];
		if (!rb) {
			if (verbose)
				TH_LOG("region %u vanished between two dumps", ra->id);
			ok = false;
			continue;
		}
		lo = u64min(ra->free, rb->free);
		hi = u64max(ra->free, rb->free);
		tol = u64max(ra->spanned / 100, 256);
		sum_dump += (ra->free + rb->free) / 2;
		sum_kpf += k;
		if (k + tol < lo || k > hi + tol) {
			ok = false;
			if (verbose)
				TH_LOG("region %u: free-pages %" PRIu64 "..%" PRIu64
				       " but %" PRIu64 " KPF_BUDDY pages (tolerance %" PRIu64 ")",
				       ra->id, lo, hi, k, tol);
		}
	}
	for (id = 0; id < count; id++) {
		if (kpf[id] && !region_find(a, id)) {
			ok = false;
			if (verbose)
				TH_LOG("region %u has %" PRIu64 " free pages but is not in the dump",
				       id, kpf[id]);
		}
	}
	tol = u64max(sum_dump / 200, 256);
	if (sum_kpf + tol < sum_dump || sum_kpf > sum_dump + tol) {
		ok = false;
		if (verbose)
			TH_LOG("total: free-pages %" PRIu64 " vs %" PRIu64
			       " KPF_BUDDY pages (tolerance 0.5%%: %" PRIu64 ")",
			       sum_dump, sum_kpf, tol);
	}
	return ok;
}

TEST_F_TIMEOUT(regionpm, free_counts_match_kpageflags, 120)
{
	uint32_t count = self->info.region_count;
	uint64_t *kpf = calloc(count, sizeof(*kpf));
	struct regions a = { 0 }, b = { 0 };
	struct rpm_ack ack;
	bool ok = false;
	int attempt, err;

	ASSERT_NE(NULL, kpf);
	if (access("/proc/kpageflags", R_OK))
		SKIP(return, "no /proc/kpageflags (CONFIG_PROC_PAGE_MONITOR)");
	sync();
	for (attempt = 1; attempt <= 5 && !ok; attempt++) {
		err = regions_dump(&self->rpm, false, &a, &ack);
		ASSERT_EQ(0, err) TH_LOG("dump: %s, extack \"%s\"", strerror(-err), ack.msg);
		err = kpf_count_buddy(0, self->region_pages, count, kpf);
		ASSERT_EQ(0, err) TH_LOG("reading /proc/kpageflags: %s", strerror(-err));
		err = regions_dump(&self->rpm, false, &b, &ack);
		ASSERT_EQ(0, err) TH_LOG("dump: %s, extack \"%s\"", strerror(-err), ack.msg);
		ok = free_counts_agree(_metadata, &a, &b, kpf, count, attempt == 5);
		if (!ok)
			sleep_ms(200);
	}
	EXPECT_TRUE(ok) TH_LOG("free-pages never matched the kpageflags walk in 5 attempts (details above)");
	regions_free(&a);
	regions_free(&b);
	free(kpf);
}

/* ------------------------------------------------------------------------
 * 3. The first allocation from a completely free region is notified.
 */
TEST_F_TIMEOUT(regionpm, first_alloc_event, 300)
{
	uint32_t free_ids[256], cands[8];
	struct regions rs = { 0 };
	struct rpm_event e;
	struct rpm_ack ack;
	struct rpm ev;
	struct ev_match m = { .cmd = REGIONPM_CMD_REGION_ALLOC_NTF };
	uint64_t deadline, bytes;
	int nfree = 0, ncand, i, err, h = 0;
	bool got = false;

	err = rpm_events_open(&ev, &ack);
	ASSERT_EQ(0, err) TH_LOG("events listener: %s", ack.msg);

	err = regions_dump(&self->rpm, true, &rs, &ack);
	ASSERT_EQ(0, err) TH_LOG("dump: %s, extack \"%s\"", strerror(-err), ack.msg);
	for (i = 0; i < rs.n && nfree < (int)ARRAY_SIZE(free_ids); i++)
		if (region_completely_free(&rs.r[i]))
			free_ids[nfree++] = rs.r[i].id;

	/* None free: empty the highest regions without unmovable pages. */
	ncand = nfree ? 0 : pick_candidates(&rs, cands, 4, 0, 0);
	for (i = 0; i < ncand && !nfree; i++) {
		struct compact_req rq = { .id = cands[i], .mode = REGIONPM_COMPACT_MODE_BOTH };
		struct rpm_compact_res res;
		int j;

		err = rpm_compact(&self->rpm, &rq, &res, &ack);
		TH_LOG("compacting region %u to empty it: %s, free %" PRIu64 " after, obstacle %s \"%s\"",
		       cands[i], err ? strerror(-err) : "ok", res.free_pages,
		       obstacle_name(res.obstacle), ack.msg);
		err = regions_dump(&self->rpm, false, &rs, &ack);
		ASSERT_EQ(0, err);
		for (j = 0; j < rs.n && nfree < (int)ARRAY_SIZE(free_ids); j++)
			if (region_completely_free(&rs.r[j]))
				free_ids[nfree++] = rs.r[j].id;
	}
	if (!nfree)
		SKIP(return, "no region is completely free and none of %d candidates could be emptied",
		     ncand);
	for (i = 0; i < nfree; i++)
		TH_LOG("completely free: region %u", free_ids[i]);

	/* Allocate ~90% of MemFree until one of them gets a page. */
	bytes = (uint64_t)meminfo_kb("MemFree") * 1024 * 9 / 10;
	ASSERT_EQ(0, hog_start(&self->hog[0], bytes, -1));
	m.ids = free_ids;
	m.nids = nfree;
	deadline = now_ms() + HOG_TIMEOUT_MS;
	while (now_ms() < deadline) {
		err = rpm_event_wait(&ev, 250, &m, &e);
		if (!err) {
			got = true;
			break;
		}
		ASSERT_EQ(-ETIMEDOUT, err);
		if (!h) {
			h = hog_poll(&self->hog[0], 0);
			if (h)	/* it has all its memory (or died): the event is due */
				deadline = u64min(deadline, now_ms() + EVENT_WAIT_MS);
		}
	}
	EXPECT_NE(-1, h) TH_LOG("the child allocating %" PRIu64 " MiB died (OOM?)", bytes / MiB);
	EXPECT_TRUE(got) {
		TH_LOG("no region-alloc-ntf for any of the %d free regions within %d ms of allocating %" PRIu64 " MiB",
		       nfree, EVENT_WAIT_MS, bytes / MiB);
		log_events(_metadata, &ev);
	}
	if (got)
		TH_LOG("region-alloc-ntf for region %u", e.id);
	hog_stop(&self->hog[0]);
	rpm_close(&ev);
	regions_free(&rs);
}

/* ------------------------------------------------------------------------
 * Filling memory with our own, checkable data.
 */
struct anon_area {
	char *p;
	uint64_t len;
	uint64_t seed;
};

/* Interleave anon chunks and fsync'ed files so both land in every region. */
static int fill_anon_and_files(FIXTURE_DATA(regionpm) *self, struct anon_area *anon,
			       uint64_t anon_bytes, int nfiles)
{
	uint64_t done = 0;
	char path[PATH_MAX + 32];
	int f = 0, err;

	anon->len = anon_bytes - anon_bytes % FILL_CHUNK;
	anon->seed = 0xa11011;
	anon->p = mmap(NULL, anon->len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon->p == MAP_FAILED)
		return -errno;
	while (done < anon->len || f < nfiles) {
		if (done < anon->len) {
			fill_pattern(anon->p + done, FILL_CHUNK, anon->seed,
				     done / self->pgsz);
			done += FILL_CHUNK;
		}
		if (f < nfiles) {
			workfile(self, path, sizeof(path), "clean", f);
			err = write_pattern_file(path, FILL_CHUNK, 100 + f, true);
			if (err)
				return err;
			f++;
		}
	}
	return 0;
}

/* Every file and the anon area still hold their pattern. */
static void check_data(struct __test_metadata *_metadata,
		       FIXTURE_DATA(regionpm) *self, const struct anon_area *anon,
		       const char *kind, int nfiles, uint64_t file_bytes,
		       uint64_t seed0, const char *when)
{
	char path[PATH_MAX + 32];
	int64_t bad;
	int f, err;

	if (anon && anon->len) {
		bad = check_pattern(anon->p, anon->len, anon->seed, 0);
		EXPECT_EQ(-1, bad) TH_LOG("%s: anon page %" PRId64 " of %" PRIu64 " is corrupt",
					  when, bad, anon->len / self->pgsz);
	}
	for (f = 0; f < nfiles; f++) {
		workfile(self, path, sizeof(path), kind, f);
		err = verify_pattern_file(path, file_bytes, seed0 + f, &bad);
		EXPECT_EQ(0, err) TH_LOG("%s: %s: %s (first bad page %" PRId64 ")", when, path,
					 err > 0 ? "content corrupt" : strerror(-err), bad);
	}
}

static int region_get_detail(struct __test_metadata *_metadata, struct rpm *s,
			     uint32_t id, struct rpm_region *r)
{
	struct rpm_ack ack;
	int err = rpm_region_get(s, id, true, r, &ack);

	if (err)
		TH_LOG("REGION_GET %u: %s, extack \"%s\"", id, strerror(-err), ack.msg);
	return err;
}

/* ------------------------------------------------------------------------
 * 4. MODE=MIGRATE empties a region and keeps anon and file data intact.
 */
TEST_F_TIMEOUT(regionpm, compact_migrate_keeps_data, 900)
{
	struct anon_area anon = { 0 };
	struct regions rs = { 0 };
	struct rpm_region before, after;
	struct rpm_compact_res res;
	struct rpm_ack ack;
	struct compact_req rq = { .mode = REGIONPM_COMPACT_MODE_MIGRATE };
	uint64_t avail, tol;
	uint32_t cand;
	int nfiles, err;

	ASSERT_EQ(0, make_workdir(self));
	avail = (uint64_t)meminfo_kb("MemAvailable") * 1024;
	nfiles = avail * 35 / 100 / FILL_CHUNK;
	TH_LOG("filling %" PRIu64 " MiB anon + %d MiB files in %s", avail * 35 / 100 / MiB,
	       nfiles * (int)(FILL_CHUNK / MiB), self->workdir);
	err = fill_anon_and_files(self, &anon, avail * 35 / 100, nfiles);
	ASSERT_EQ(0, err) TH_LOG("filling memory: %s", strerror(-err));
	check_data(_metadata, self, &anon, "clean", nfiles, FILL_CHUNK, 100, "before compaction");

	err = regions_dump(&self->rpm, true, &rs, &ack);
	ASSERT_EQ(0, err) TH_LOG("dump: %s", ack.msg);
	/* the highest region with >= 4 MiB of movable pages, < 1% unmovable */
	if (pick_candidates(&rs, &cand, 1, self->region_pages / 100, 1024) != 1) {
		for (int i = 0; i < rs.n; i++)
			log_region(_metadata, "", &rs.r[i]);
		ASSERT_TRUE(false) TH_LOG("after filling memory no region holds >= 1024 movable pages with < 1%% unmovable ones");
	}
	ASSERT_EQ(0, region_get_detail(_metadata, &self->rpm, cand, &before));
	log_region(_metadata, "compacting", &before);

	rq.id = cand;
	err = rpm_compact(&self->rpm, &rq, &res, &ack);
	ASSERT_EQ(0, err) TH_LOG("REGION_COMPACT %u mode migrate: %s, extack \"%s\"",
				 cand, strerror(-err), ack.msg);
	log_compact_res(_metadata, "migrate", &res, ack.msg);
	EXPECT_EQ(cand, res.id);
	EXPECT_LT(0UL, res.migrated) TH_LOG("nothing migrated out of a region with %" PRIu64 " movable pages",
					  region_movable(&before));
	EXPECT_EQ(0UL, res.dropped) TH_LOG("mode migrate must not drop page cache");
	EXPECT_LE(res.migrated + res.dropped, res.scanned)
		TH_LOG("more pages handled than scanned");
	EXPECT_LT(0UL, res.elapsed_ns);
	tol = u64max(before.managed / 100, 256);
	EXPECT_LE(before.managed, res.free_pages + res.skipped + res.failed + tol)
		TH_LOG("after migrating, free (%" PRIu64 ") + skipped + failed must cover the %" PRIu64
		       " managed pages (tolerance %" PRIu64 ")", res.free_pages, before.managed, tol);
	if (!region_get_detail(_metadata, &self->rpm, cand, &after))
		log_region(_metadata, "after", &after);

	check_data(_metadata, self, &anon, "clean", nfiles, FILL_CHUNK, 100, "after compaction");
	munmap(anon.p, anon.len);
	regions_free(&rs);
}

/*
 * Free pages above the kernel's marks for migration targets of pages from
 * ZONE_NORMAL or below, from /proc/zoneinfo: per zone up to Normal, the
 * free pages above its high watermark (with boost) plus its lowmem reserve
 * for Normal allocations.  -1 if it cannot be read.
 */
static int64_t zoneinfo_room(void)
{
	struct zi {
		int idx;
		int64_t free, high, prot[8];
	} z[64];
	int n = 0, idx = -1, normal = -1, node = -1, cur, i;
	char line[512], name[32];
	int64_t room = 0;
	FILE *f = fopen("/proc/zoneinfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " ");
		long long v;

		if (sscanf(line, "Node %d, zone %31s", &cur, name) == 2) {
			idx = cur == node ? idx + 1 : 0;
			node = cur;
			if (!strcmp(name, "Normal"))
				normal = idx;
			if (n == (int)ARRAY_SIZE(z))
				break;
			z[n++] = (struct zi){ .idx = idx };
			continue;
		}
		if (!n)
			continue;
		if (sscanf(s, "pages free %lld", &v) == 1)
			z[n - 1].free = v;
		else if (!strncmp(s, "high ", 5) && sscanf(s, "high %lld", &v) == 1)
			z[n - 1].high = v;
		else if (!strncmp(s, "protection: (", 13)) {
			char *p = s + 13;

			for (i = 0; i < 8 && *p && *p != ')'; i++) {
				z[n - 1].prot[i] = strtoll(p, &p, 10);
				p += strspn(p, ", ");
			}
		}
	}
	fclose(f);
	if (normal < 0 || normal >= 8)
		return -1;
	for (i = 0; i < n; i++) {
		int64_t keep = z[i].high + z[i].prot[normal];

		if (z[i].idx <= normal && z[i].free > keep)
			room += z[i].free - keep;
	}
	return room;
}

/*
 * A compaction never migrates into memory below the kernel's marks: there
 * kswapd would evict page cache to make room (a file server's hot set at
 * 8 GiB was read back from disk that way).  With anonymous memory (no
 * swap: nothing to reclaim for it) taking free memory down to 2,048 pages
 * above the marks, a migrating compaction of a region with 16,384 movable
 * pages or more stops with obstacle no-room after about that much, its
 * data intact; once the memory is back it goes on.
 */
TEST_F_TIMEOUT(regionpm, compact_stops_at_watermarks, 600)
{
	/*
	 * slack: the batch that may start just above the room, a large
	 * folio, and the per-cpu free lists that the compaction drains into
	 * the zone (zoneinfo's free pages leave them out).
	 */
	const int64_t leave = 2048, slack = 4096;
	struct anon_area anon = { 0 };
	struct regions rs = { 0 };
	struct rpm_region before;
	struct rpm_compact_res res;
	struct rpm_ack ack;
	struct compact_req rq = { .mode = REGIONPM_COMPACT_MODE_MIGRATE };
	struct hog hog = { 0 };
	int64_t room0, room1, room2, steal0, steal1;
	uint64_t avail;
	uint32_t cand;
	int err, waited;

	ASSERT_EQ(0, make_workdir(self));
	avail = (uint64_t)meminfo_kb("MemAvailable") * 1024;
	err = fill_anon_and_files(self, &anon, avail * 30 / 100, 0);
	ASSERT_EQ(0, err) TH_LOG("filling memory: %s", strerror(-err));
	err = regions_dump(&self->rpm, true, &rs, &ack);
	ASSERT_EQ(0, err) TH_LOG("dump: %s", ack.msg);
	if (pick_candidates(&rs, &cand, 1, self->region_pages / 100, 16384) != 1) {
		munmap(anon.p, anon.len);
		regions_free(&rs);
		ASSERT_TRUE(false) TH_LOG("no region holds >= 16384 movable pages with < 1%% unmovable ones");
	}
	regions_free(&rs);
	ASSERT_EQ(0, region_get_detail(_metadata, &self->rpm, cand, &before));
	log_region(_metadata, "compacting", &before);

	/* Nothing reclaimable left, then anonymous memory up to the marks. */
	write_text("/proc/sys/vm/drop_caches", "3");
	room0 = zoneinfo_room();
	ASSERT_LT(leave + (int64_t)self->region_pages / 8, room0)
		TH_LOG("only %" PRId64 " pages free above the marks", room0);
	ASSERT_EQ(0, hog_start(&hog, (uint64_t)(room0 - leave) * self->pgsz, -1));
	for (waited = 0; hog_poll(&hog, 1000) == 0 && waited < 120; waited++)
		;
	if (!hog.done) {
		munmap(anon.p, anon.len);
		ASSERT_TRUE(false) TH_LOG("hog of %" PRId64 " pages died: %#x", room0 - leave,
					  hog_stop(&hog));
	}
	sleep_ms(1000);
	room1 = zoneinfo_room();
	steal0 = vmstat_get("pgsteal_kswapd") + vmstat_get("pgsteal_direct");

	rq.id = cand;
	err = rpm_compact(&self->rpm, &rq, &res, &ack);
	steal1 = vmstat_get("pgsteal_kswapd") + vmstat_get("pgsteal_direct");
	room2 = zoneinfo_room();
	TH_LOG("room above the marks %" PRId64 " -> %" PRId64 " pages (hog), %" PRId64
	       " after; migrated %" PRIu64 " skipped %" PRIu64 " failed %" PRIu64
	       ", obstacle %s \"%s\"; reclaim stole %" PRId64 " pages meanwhile",
	       room0, room1, room2, res.migrated, res.skipped, res.failed,
	       obstacle_name(res.obstacle), ack.msg, steal1 - steal0);
	EXPECT_EQ(0, err);
	EXPECT_EQ((uint32_t)REGIONPM_OBSTACLE_NO_ROOM, res.obstacle);
	EXPECT_GE((uint64_t)u64max(room1, 0) + slack, res.migrated)
		TH_LOG("migrated more than the room above the marks");
	EXPECT_LT(res.migrated, region_movable(&before));
	hog_stop(&hog);
	check_data(_metadata, self, &anon, "clean", 0, FILL_CHUNK, 100, "after no-room");

	/* Room again: it goes on from where it stopped. */
	sleep_ms(500);
	err = rpm_compact(&self->rpm, &rq, &res, &ack);
	TH_LOG("with room: migrated %" PRIu64 ", obstacle %s", res.migrated,
	       obstacle_name(res.obstacle));
	EXPECT_EQ(0, err);
	EXPECT_NE((uint32_t)REGIONPM_OBSTACLE_NO_ROOM, res.obstacle);
	EXPECT_LT(0UL, res.migrated);
	check_data(_metadata, self, &anon, "clean", 0, FILL_CHUNK, 100, "after compaction");
	munmap(anon.p, anon.len);
}

/* ------------------------------------------------------------------------
 * 5. MODE=DROP drops clean page cache and leaves dirty pages alone.
 */
TEST_F_TIMEOUT(regionpm, compact_drop_clean_not_dirty, 900)
{
	struct regions rs = { 0 };
	struct rpm_region before, after;
	struct rpm_compact_res res;
	struct rpm_ack ack;
	struct compact_req rq = { .mode = REGIONPM_COMPACT_MODE_DROP };
	char path[PATH_MAX + 32];
	uint64_t avail, dirty_step, dirty_total = 0, dirty0, tol;
	uint32_t cands[64], cand;
	int nclean, ncand, pick = -1, f, i, fd, err;
	int64_t bad;

	ASSERT_EQ(0, make_workdir(self));
	if (self->workdir_tmpfs)
		SKIP(return, "%s is tmpfs (shmem): no droppable page cache; needs %s on a disk",
		     self->workdir, SCRATCH_DIR);
	ASSERT_EQ(0, dirty_save(&self->dirty));
	self->dirty_saved = true;
	/* keep dirty pages dirty for the whole test */
	ASSERT_EQ(0, write_text("/proc/sys/vm/dirty_ratio", "90"));
	ASSERT_EQ(0, write_text("/proc/sys/vm/dirty_background_ratio", "80"));
	ASSERT_EQ(0, write_text("/proc/sys/vm/dirty_expire_centisecs", "360000"));
	ASSERT_EQ(0, write_text("/proc/sys/vm/dirty_writeback_centisecs", "0"));

	/* 55% of MemAvailable clean (written, fsync'ed, read back), 10% dirty */
	avail = (uint64_t)meminfo_kb("MemAvailable") * 1024;
	nclean = avail * 55 / 100 / FILL_CHUNK;
	ASSERT_LT(0, nclean);
	dirty_step = (avail / 10 / nclean) & ~(self->pgsz - 1);
	workfile(self, path, sizeof(path), "dirty", 0);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd) TH_LOG("creating %s: %s", path, strerror(errno));
	for (f = 0; f < nclean; f++) {
		workfile(self, path, sizeof(path), "clean", f);
		err = write_pattern_file(path, FILL_CHUNK, 200 + f, true);
		ASSERT_EQ(0, err) TH_LOG("writing %s: %s", path, strerror(-err));
		err = write_pattern(fd, dirty_step, 7, dirty_total / self->pgsz);
		ASSERT_EQ(0, err) TH_LOG("writing the dirty file: %s", strerror(-err));
		dirty_total += dirty_step;
	}
	close(fd);
	/*
	 * Written and read back, the clean pages would be on the active list:
	 * hot cache, which drop mode keeps.  Evict them and read them once, so
	 * they are cold (inactive) page cache; dirty pages stay.
	 */
	ASSERT_EQ(0, write_text("/proc/sys/vm/drop_caches", "1"));
	check_data(_metadata, self, NULL, "clean", nclean, FILL_CHUNK, 200, "after writing");
	TH_LOG("%d MiB clean page cache, %" PRIu64 " MiB dirty; Dirty: %" PRId64 " kB",
	       nclean * (int)(FILL_CHUNK / MiB), dirty_total / MiB, meminfo_kb("Dirty"));

	/* the highest region with clean file pages, preferably dirty ones too */
	err = regions_dump(&self->rpm, true, &rs, &ack);
	ASSERT_EQ(0, err) TH_LOG("dump: %s", ack.msg);
	ncand = pick_candidates(&rs, cands, ARRAY_SIZE(cands), self->region_pages / 100, 1024);
	for (i = 0; i < ncand; i++) {
		const struct rpm_region *r = region_find(&rs, cands[i]);

		if (r->detail[REGIONPM_A_DETAIL_FILE_CLEAN] < 1024)
			continue;
		if (pick < 0)
			pick = i;
		if (r->detail[REGIONPM_A_DETAIL_FILE_DIRTY] >= 64) {
			pick = i;
			break;
		}
	}
	if (pick < 0) {
		for (i = 0; i < rs.n; i++)
			log_region(_metadata, "", &rs.r[i]);
		ASSERT_LE(0, pick) TH_LOG("no region holds >= 1024 clean file pages with < 1%% unmovable ones");
	}
	cand = cands[pick];
	ASSERT_EQ(0, region_get_detail(_metadata, &self->rpm, cand, &before));
	log_region(_metadata, "dropping", &before);
	dirty0 = before.detail[REGIONPM_A_DETAIL_FILE_DIRTY];
	if (dirty0 < 64)
		TH_LOG("note: region %u holds only %" PRIu64 " dirty pages; the dirty check is weak",
		       cand, dirty0);

	rq.id = cand;
	err = rpm_compact(&self->rpm, &rq, &res, &ack);
	ASSERT_EQ(0, err) TH_LOG("REGION_COMPACT %u mode drop: %s, extack \"%s\"",
				 cand, strerror(-err), ack.msg);
	log_compact_res(_metadata, "drop", &res, ack.msg);
	ASSERT_EQ(0, region_get_detail(_metadata, &self->rpm, cand, &after));
	log_region(_metadata, "after", &after);

	EXPECT_LT(0UL, res.dropped) TH_LOG("no clean page cache dropped from a region with %" PRIu64
					 " clean file pages", before.detail[REGIONPM_A_DETAIL_FILE_CLEAN]);
	EXPECT_EQ(0UL, res.migrated) TH_LOG("mode drop must not migrate anything");
	tol = u64max(16, dirty0 / 50);
	EXPECT_LE(dirty0, after.detail[REGIONPM_A_DETAIL_FILE_DIRTY] + tol)
		TH_LOG("dirty file pages went from %" PRIu64 " to %" PRIu64 ": dirty pages must not be dropped",
		       dirty0, after.detail[REGIONPM_A_DETAIL_FILE_DIRTY]);
	EXPECT_LE(dirty0, res.skipped + res.failed + tol)
		TH_LOG("the %" PRIu64 " dirty pages must be reported as skipped (or failed)", dirty0);

	/* a dropped dirty page would read back as zeroes: it never hit the disk */
	workfile(self, path, sizeof(path), "dirty", 0);
	err = verify_pattern_file(path, dirty_total, 7, &bad);
	EXPECT_EQ(0, err) TH_LOG("dirty file: %s (first bad page %" PRId64 "): dirty data was lost",
				 err > 0 ? "content corrupt" : strerror(-err), bad);
	check_data(_metadata, self, NULL, "clean", nclean, FILL_CHUNK, 200, "after dropping");
	regions_free(&rs);
}

/*
 * 5b. Drop mode keeps hot page cache: pages mapped into a process (program
 * text, libraries, mmapped data) and pages on the active list (read more
 * than once) are not dropped -- reclaim would not drop them either -- while
 * cold cache next to them is.  In mode "both" hot cache is migrated.
 */
static uint64_t pfn_of(const void *addr)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (pread(fd, &e, sizeof(e), (uintptr_t)addr / page_size() * sizeof(e)) != sizeof(e))
		e = 0;
	close(fd);
	return (e & (1ULL << 63)) ? e & ((1ULL << 55) - 1) : 0;
}

/* Pages of the file mapped at @map (@len bytes) that are in the page cache. */
static uint64_t resident_pages(void *map, uint64_t len)
{
	uint64_t n = len / page_size(), i, in = 0;
	unsigned char *vec = calloc(n, 1);

	if (vec && !mincore(map, len, vec))
		for (i = 0; i < n; i++)
			in += vec[i] & 1;
	free(vec);
	return in;
}

/* Read @path through read(2) @times times. */
static int read_file_times(const char *path, int times)
{
	static char buf[1 << 16];
	int fd, i;

	for (i = 0; i < times; i++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
	return 0;
}

/* A shared read-only mapping of @len bytes of @path, or NULL. */
static void *map_file(const char *path, uint64_t len)
{
	void *m;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

/*
 * Can the pageblock of @pfn (@block pages) be isolated, as far as
 * /proc/kpageflags tells?  Reserved, slab and page-table pages refuse it
 * and the kernel only reports such a pageblock: a file page there tests
 * nothing (the cold file once landed next to the kernel image in region 0
 * and nothing was dropped).
 */
#ifndef KPF_RESERVED
#define KPF_RESERVED	32	/* kernel-internal flags start at 32 (fs/proc/page.c) */
#endif
#ifndef KPF_OWNER_PRIVATE
#define KPF_OWNER_PRIVATE 37	/* PG_owner_priv_1 */
#endif

static bool block_isolatable(uint64_t pfn, uint64_t block)
{
	const uint64_t bad = BIT64(KPF_RESERVED) | BIT64(KPF_SLAB) | BIT64(KPF_PGTABLE);
	uint64_t *flags = calloc(block, sizeof(*flags)), i;
	bool ok = false;
	int fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && flags &&
	    pread(fd, flags, block * sizeof(*flags),
		  (pfn & ~(block - 1)) * sizeof(*flags)) == (ssize_t)(block * sizeof(*flags))) {
		ok = true;
		for (i = 0; i < block && ok; i++)
			ok = !(flags[i] & bad);
	}
	if (fd >= 0)
		close(fd);
	free(flags);
	return ok;
}

/*
 * Map @path, fault every page in and return the pfn of the first page
 * whose pageblock (@block pages) can be isolated, else of the first page.
 * With MADV_RANDOM the unmap does not mark the pages accessed (no
 * recency for such a mapping), so this does not heat the cache; with
 * @keep the mapping stays in *@map.
 */
static uint64_t file_pfn(const char *path, uint64_t len, uint64_t block, bool keep,
			 void **map)
{
	volatile const char *p;
	uint64_t off, pfn, first;
	void *m = map_file(path, len);

	if (!m)
		return 0;
	if (!keep)
		madvise(m, len, MADV_RANDOM);
	for (p = m, off = 0; off < len; off += page_size())
		(void)p[off];
	pfn = first = pfn_of(m);
	for (off = 0; off < len; off += page_size()) {
		pfn = pfn_of((const char *)m + off);
		if (pfn && block_isolatable(pfn, block))
			break;
	}
	if (off >= len)
		pfn = first;
	if (keep)
		*map = m;
	else
		munmap(m, len);
	return pfn;
}

/* Cached pages of @path, with mincore on a mapping that faults nothing in. */
static uint64_t file_cached(const char *path, uint64_t len)
{
	uint64_t n;
	void *m = map_file(path, len);

	if (!m)
		return 0;
	n = resident_pages(m, len);
	munmap(m, len);
	return n;
}

TEST_F_TIMEOUT(regionpm, compact_drop_keeps_hot_cache, 900)
{
	const uint64_t len = 8 * MiB;
	const char *kinds[] = { "mapped", "active", "cold" };
	struct rpm_compact_res res;
	struct rpm_ack ack;
	struct compact_req rq = { .mode = REGIONPM_COMPACT_MODE_DROP, .has_range = true };
	char path[3][PATH_MAX + 32];
	void *mapped = NULL;
	uint64_t pfn[3], before, after;
	int k, err;

	ASSERT_EQ(0, make_workdir(self));
	if (self->workdir_tmpfs)
		SKIP(return, "%s is tmpfs (shmem): no page cache to drop; needs %s on a disk",
		     self->workdir, SCRATCH_DIR);
	for (k = 0; k < 3; k++) {
		workfile(self, path[k], sizeof(path[k]), kinds[k], 0);
		err = write_pattern_file(path[k], len, 300 + k, true);
		ASSERT_EQ(0, err) TH_LOG("writing %s: %s", path[k], strerror(-err));
	}
	/* Every file out of the cache, then: */
	sync();
	ASSERT_EQ(0, write_text("/proc/sys/vm/drop_caches", "1"));
	ASSERT_EQ(0, read_file_times(path[1], 3));	/* active: read three times */
	ASSERT_EQ(0, read_file_times(path[2], 1));	/* cold: read once */
	pfn[0] = file_pfn(path[0], len, self->pageblock, true, &mapped);	/* stays mapped */
	pfn[1] = file_pfn(path[1], len, self->pageblock, false, NULL);
	pfn[2] = file_pfn(path[2], len, self->pageblock, false, NULL);

	/*
	 * Cold first: a compaction of the hot files' ranges may drop cold
	 * pages that lie there too, which is right but would leave the cold
	 * file's own check nothing to drop.
	 */
	for (k = 2; k >= 0; k--) {
		ASSERT_NE(0UL, pfn[k]) TH_LOG("no pfn for the %s file (pagemap needs CAP_SYS_ADMIN)",
					      kinds[k]);
		/* the file's first pageblock and what follows, inside its region */
		rq.id = pfn[k] / self->region_pages;
		rq.start_pfn = pfn[k] & ~(self->pageblock - 1);
		rq.nr_pages = u64min(self->region_pages - rq.start_pfn % self->region_pages,
				     (len / self->pgsz + 2 * self->pageblock) & ~(self->pageblock - 1));
		before = file_cached(path[k], len);
		err = rpm_compact(&self->rpm, &rq, &res, &ack);
		ASSERT_EQ(0, err) TH_LOG("compacting [%#" PRIx64 "+%" PRIu64 "] in drop mode: %s \"%s\"",
					 rq.start_pfn, rq.nr_pages, strerror(-err), ack.msg);
		after = file_cached(path[k], len);
		TH_LOG("%s file at pfn %#" PRIx64 ": %" PRIu64 " pages cached before, %" PRIu64
		       " after; dropped %" PRIu64 ", skipped %" PRIu64 ", first obstacle %s",
		       kinds[k], pfn[k], before, after, res.dropped, res.skipped,
		       obstacle_name(res.obstacle));
		if (k < 2) {
			EXPECT_EQ(before, after) TH_LOG("%s page cache was dropped", kinds[k]);
			EXPECT_LT(0UL, res.skipped) TH_LOG("the %s pages must be skipped", kinds[k]);
		} else {
			EXPECT_LT(0UL, res.dropped) TH_LOG("cold page cache was not dropped");
			EXPECT_GT(before, after) TH_LOG("cold page cache is still all cached");
		}
	}
	munmap(mapped, len);
}

/*
 * A page that cannot move (here: an anonymous page a pipe holds a reference
 * to, through vmsplice()) is back on the LRU when the compaction returns,
 * not left in a per-cpu LRU batch.  Off the LRU it would look like a kernel
 * page in the region's breakdown and in /proc/kpageflags, and the daemon
 * could not tell page cache that will not move (metadata buffers a journal
 * pins) from slab.  Once the pipe lets go, the page moves.
 */
TEST_F_TIMEOUT(regionpm, compact_failure_back_on_lru, 300)
{
	const uint64_t len = 16 * MiB;
	struct compact_req rq = { .mode = REGIONPM_COMPACT_MODE_MIGRATE, .has_range = true };
	struct rpm_compact_res res = { };
	struct rpm_ack ack;
	uint64_t off, pfn = 0, flags = 0;
	struct iovec iov;
	int pipefd[2] = { -1, -1 }, fd, err;
	char *buf;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	/* small folios: a THP would be split or fail as a whole */
	madvise(buf, len, MADV_NOHUGEPAGE);
	memset(buf, 0x5a, len);
	/*
	 * A page with a pipe reference in a pageblock the kernel isolates and
	 * evacuates.  kpageflags shows slab and page tables, not every kernel
	 * page that keeps a pageblock from isolation: a compaction that moved
	 * nothing and failed nothing could not isolate the pageblock; try the
	 * next one.
	 */
	for (off = 0; off < len; off += self->pageblock * self->pgsz) {
		pfn = pfn_of(buf + off);
		if (!pfn || !block_isolatable(pfn, self->pageblock))
			continue;
		ASSERT_EQ(0, pipe(pipefd));
		iov.iov_base = buf + off;
		iov.iov_len = self->pgsz;
		ASSERT_EQ((ssize_t)self->pgsz, vmsplice(pipefd[1], &iov, 1, 0));
		rq.id = pfn / self->region_pages;
		rq.start_pfn = pfn & ~(self->pageblock - 1);
		rq.nr_pages = self->pageblock;
		err = rpm_compact(&self->rpm, &rq, &res, &ack);
		ASSERT_EQ(0, err) TH_LOG("compacting pageblock %#" PRIx64 ": %s \"%s\"",
					 rq.start_pfn, strerror(-err), ack.msg);
		if (res.migrated + res.failed)
			break;
		close(pipefd[0]);
		close(pipefd[1]);
		pipefd[0] = -1;
	}
	ASSERT_LE(0, pipefd[0]) TH_LOG("no pageblock of %" PRIu64 " MiB of anonymous memory"
				       " could be evacuated", len / MiB);
	fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)sizeof(flags), pread(fd, &flags, sizeof(flags), pfn * sizeof(flags)));
	close(fd);
	TH_LOG("page at pfn %#" PRIx64 " with a pipe reference: migrated %" PRIu64 ", failed %"
	       PRIu64 ", skipped %" PRIu64 " (first obstacle %s), now at %#" PRIx64
	       ", flags %#" PRIx64, pfn, res.migrated, res.failed, res.skipped,
	       obstacle_name(res.obstacle), pfn_of(buf + off), flags);
	EXPECT_LE(1UL, res.failed) TH_LOG("the referenced page did not count as failed");
	EXPECT_EQ(pfn, pfn_of(buf + off)) TH_LOG("a page a pipe references moved");
	EXPECT_NE(0ULL, flags & BIT64(KPF_LRU)) TH_LOG("the page is off the LRU after the call");
	EXPECT_NE(0ULL, flags & BIT64(KPF_ANON));

	close(pipefd[0]);
	close(pipefd[1]);
	err = rpm_compact(&self->rpm, &rq, &res, &ack);
	ASSERT_EQ(0, err) TH_LOG("compacting again: %s \"%s\"", strerror(-err), ack.msg);
	EXPECT_NE(pfn, pfn_of(buf + off)) TH_LOG("the page stayed after the pipe closed"
						 " (migrated %" PRIu64 ", failed %" PRIu64 ")",
						 res.migrated, res.failed);
	EXPECT_EQ(0x5a, buf[off]);
	munmap(buf, len);
}

/* ------------------------------------------------------------------------
 * Parking helpers shared by tests 6-9.
 */

/*
 * Write back and checkpoint the scratch disk's journal.  Until jbd2
 * checkpoints a transaction it holds a reference on the buffer heads of the
 * metadata it logged, so the block device's page cache pages carrying them
 * can be neither migrated nor dropped: after the tests that write hundreds of
 * MiB to /mnt/scratch they sit in regions that look movable and parking those
 * fails with EBUSY.  regionpmd does the same (daemon/fs-checkpoint.c).
 */
static void checkpoint_scratch(struct __test_metadata *_metadata)
{
	__u32 flags = 0;
	int fd;

	sync();
	fd = open(SCRATCH_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;		/* no scratch disk: nothing was written there */
	if (ioctl(fd, EXT4_IOC_CHECKPOINT, &flags) && errno != ENOTTY &&
	    errno != EOPNOTSUPP)
		TH_LOG("checkpointing %s: %s", SCRATCH_DIR, strerror(errno));
	close(fd);
}

/*
 * Park candidates: no unmovable pages, highest first; @rs gets the dump.
 * The scratch journal is checkpointed first (see checkpoint_scratch()).
 */
static int park_candidates(struct __test_metadata *_metadata,
			   FIXTURE_DATA(regionpm) *self, struct regions *rs,
			   uint32_t *ids, int max)
{
	struct rpm_ack ack;
	int err, n, tries;

	/*
	 * Booted without the bias, the earlier tests' file systems and page
	 * cache can leave dentries and inodes in every region.  Freeing the
	 * reclaimable slab once is part of setting up: a CI run skipped two
	 * tests when slab had reached every region.
	 */
	for (tries = 0; tries < 2; tries++) {
		if (tries) {
			TH_LOG("every region holds unmovable pages: freeing reclaimable slab");
			sync();
			write_text("/proc/sys/vm/drop_caches", "3");
			regions_free(rs);
		}
		checkpoint_scratch(_metadata);
		err = regions_dump(&self->rpm, true, rs, &ack);
		if (err) {
			TH_LOG("dump: %s, extack \"%s\"", strerror(-err), ack.msg);
			return -1;
		}
		n = pick_candidates(rs, ids, max, 0, 0);
		if (n)
			return n;
	}
	return 0;
}

static bool wait_release(struct rpm *ev, uint32_t id, uint32_t reason,
			 int timeout_ms, struct rpm_event *e)
{
	struct ev_match m = {
		.cmd = REGIONPM_CMD_REGION_RELEASE_NTF,
		.ids = &id, .nids = 1,
		.reasons = 1U << reason,
	};

	return !rpm_event_wait(ev, timeout_ms, &m, e);
}

/* ------------------------------------------------------------------------
 * 6. A parked region leaves MemTotal and is never allocated from.
 */
TEST_F_TIMEOUT(regionpm, park_lowers_memtotal_and_is_not_used, 600)
{
	struct regions rs = { 0 };
	struct rpm_region r, final;
	struct rpm_compact_res res;
	struct rpm_info info;
	struct rpm_event e;
	struct rpm_ack ack;
	struct rpm ev;
	uint32_t cands[8], id;
	uint64_t mt0, mt1, managed0, bytes, deadline;
	int ncand, idx, err, h = 0, violations = 0;
	bool got;

	/* no page cache: the allocation below must not need reclaim (shrinkers) */
	sync();
	write_text("/proc/sys/vm/drop_caches", "1");

	ncand = park_candidates(_metadata, self, &rs, cands, ARRAY_SIZE(cands));
	ASSERT_LE(0, ncand);
	if (!ncand)
		SKIP(return, "no active region without unmovable pages to park");
	ASSERT_EQ(0, rpm_events_open(&ev, &ack)) TH_LOG("events listener: %s", ack.msg);
	mt0 = memtotal_pages();

	idx = park_first(_metadata, &self->rpm, cands, ncand, &res);
	ASSERT_LE(0, idx) TH_LOG("none of %d candidate regions could be parked", ncand);
	id = cands[idx];
	managed0 = region_find(&rs, id)->managed;
	mt1 = memtotal_pages();

	ASSERT_EQ(0, region_get_detail(_metadata, &self->rpm, id, &r));
	log_region(_metadata, "parked", &r);
	EXPECT_STREQ("parked", state_name(r.state));
	EXPECT_TRUE(HAS(&r, REGIONPM_A_REGION_OWNER_PORTID));
	EXPECT_EQ(self->rpm.portid, r.owner) TH_LOG("owner must be the parking socket");
	EXPECT_EQ(0UL, r.managed);
	EXPECT_EQ(0UL, r.free);
	EXPECT_EQ(managed0, r.parked)
		TH_LOG("parked-pages must be the %" PRIu64 " pages the region managed", managed0);
	EXPECT_EQ(r.parked, r.detail[REGIONPM_A_DETAIL_OFFLINE])
		TH_LOG("parked pages must show as offline in the detail");
	EXPECT_EQ(mt0 - r.parked, mt1)
		TH_LOG("MemTotal must drop by parked-pages: %" PRIu64 " -> %" PRIu64 " pages, parked %" PRIu64,
		       mt0, mt1, r.parked);
	ASSERT_EQ(0, rpm_info_get(&self->rpm, &info, &ack));
	EXPECT_LE(r.parked, info.parked_pages);

	/* Allocate 80% of what is available; the parked region must stay empty. */
	bytes = (uint64_t)meminfo_kb("MemAvailable") * 1024 * 8 / 10;
	ASSERT_EQ(0, hog_start(&self->hog[0], bytes, -1));
	deadline = now_ms() + HOG_TIMEOUT_MS;
	while (!h && now_ms() < deadline) {
		h = hog_poll(&self->hog[0], 200);
		if (rpm_region_get(&self->rpm, id, false, &r, &ack))
			continue;
		if ((r.state != REGIONPM_REGION_STATE_PARKED || r.free) && !violations++)
			TH_LOG("while allocating: region %u is %s with %" PRIu64 " free pages",
			       id, state_name(r.state), r.free);
	}
	EXPECT_EQ(1, h) TH_LOG("allocating %" PRIu64 " MiB did not complete (%s)", bytes / MiB,
			       h < 0 ? "child died" : "timeout");
	EXPECT_EQ(0, violations) TH_LOG("the parked region was released or used during a moderate allocation");
	ASSERT_EQ(0, region_get_detail(_metadata, &self->rpm, id, &final));
	log_region(_metadata, "under load", &final);
	EXPECT_STREQ("parked", state_name(final.state));
	EXPECT_EQ(0UL, final.free);
	EXPECT_EQ(0UL, final.detail[REGIONPM_A_DETAIL_ANON] +
		     final.detail[REGIONPM_A_DETAIL_FILE_CLEAN] +
		     final.detail[REGIONPM_A_DETAIL_FILE_DIRTY] +
		     final.detail[REGIONPM_A_DETAIL_WRITEBACK] +
		     final.detail[REGIONPM_A_DETAIL_SHMEM])
		TH_LOG("anon/file/shmem pages found in a parked region");
	EXPECT_EQ(final.parked, final.detail[REGIONPM_A_DETAIL_OFFLINE]);
	hog_stop(&self->hog[0]);

	/* Unpark: memory comes back and the listener hears why. */
	err = rpm_unpark(&self->rpm, id, &ack);
	ASSERT_EQ(0, err) TH_LOG("REGION_UNPARK %u: %s, extack \"%s\"", id, strerror(-err), ack.msg);
	got = wait_release(&ev, id, REGIONPM_RELEASE_REASON_UNPARK, EVENT_WAIT_MS, &e);
	EXPECT_TRUE(got) {
		TH_LOG("no region-release-ntf {id %u, reason unpark}", id);
		log_events(_metadata, &ev);
	}
	if (got) {
		EXPECT_EQ(final.parked, e.pages) TH_LOG("release event pages vs parked-pages");
	}
	EXPECT_EQ(mt0, memtotal_pages()) TH_LOG("MemTotal not restored after unpark");
	ASSERT_EQ(0, rpm_region_get(&self->rpm, id, false, &r, &ack));
	EXPECT_STREQ("active", state_name(r.state));
	EXPECT_EQ(managed0, r.managed);
	EXPECT_FALSE(HAS(&r, REGIONPM_A_REGION_OWNER_PORTID));
	rpm_close(&ev);
	regions_free(&rs);
}

/* ------------------------------------------------------------------------
 * 7. Closing the socket that parked a region releases it.
 */
TEST_F_TIMEOUT(regionpm, close_socket_releases, 600)
{
	struct regions rs = { 0 };
	struct rpm_region r;
	struct rpm_compact_res res;
	struct rpm_event e;
	struct rpm_ack ack;
	struct rpm a, ev;
	uint32_t cands[8], id;
	uint64_t mt0, parked;
	int ncand, idx, ms;
	bool got;

	ncand = park_candidates(_metadata, self, &rs, cands, ARRAY_SIZE(cands));
	ASSERT_LE(0, ncand);
	if (!ncand)
		SKIP(return, "no active region without unmovable pages to park");
	mt0 = memtotal_pages();
	ASSERT_EQ(0, rpm_events_open(&ev, &ack)) TH_LOG("events listener: %s", ack.msg);
	ASSERT_EQ(0, rpm_open(&a, &ack)) TH_LOG("socket A: %s", ack.msg);

	idx = park_first(_metadata, &a, cands, ncand, &res);
	ASSERT_LE(0, idx) TH_LOG("none of %d candidate regions could be parked", ncand);
	id = cands[idx];
	ASSERT_EQ(0, rpm_region_get(&self->rpm, id, false, &r, &ack));
	EXPECT_STREQ("parked", state_name(r.state));
	EXPECT_EQ(a.portid, r.owner) TH_LOG("owner must be socket A");
	parked = r.parked;
	EXPECT_EQ(mt0 - parked, memtotal_pages());

	rpm_close(&a);
	ms = wait_region_state(&self->rpm, id, REGIONPM_REGION_STATE_ACTIVE,
			       RELEASE_WAIT_MS, &r);
	EXPECT_LE(0, ms) TH_LOG("region %u still %s %d ms after its owner socket was closed",
				id, state_name(r.state), RELEASE_WAIT_MS);
	if (ms >= 0)
		TH_LOG("region %u active again %d ms after close", id, ms);
	got = wait_release(&ev, id, REGIONPM_RELEASE_REASON_OWNER_CLOSED,
			   RELEASE_WAIT_MS, &e);
	EXPECT_TRUE(got) {
		TH_LOG("no region-release-ntf {id %u, reason owner-closed}", id);
		log_events(_metadata, &ev);
	}
	if (got) {
		EXPECT_EQ(parked, e.pages) TH_LOG("release event pages vs parked-pages");
	}
	EXPECT_EQ(mt0, memtotal_pages()) TH_LOG("MemTotal not restored");
	rpm_close(&ev);
	regions_free(&rs);
}

/* ------------------------------------------------------------------------
 * 8. SIGKILL of the owning process releases its parked region.
 */
static void __attribute__((noreturn)) park_child(const uint32_t *ids, int n, int fd)
{
	struct rpm_compact_res res;
	struct rpm_region r;
	struct rpm_ack ack;
	struct rpm s;
	int i, err;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	err = rpm_open(&s, &ack);
	if (err) {
		dprintf(fd, "error open %d\n", err);
		_exit(1);
	}
	for (i = 0; i < n; i++) {
		err = rpm_park(&s, ids[i], true, &res, &ack);
		if (!err && !rpm_region_get(&s, ids[i], false, &r, &ack)) {
			dprintf(fd, "parked %u %u %" PRIu64 "\n", ids[i], s.portid, r.parked);
			for (;;)
				pause();
		}
	}
	dprintf(fd, "error park %d\n", err);
	_exit(1);
}

TEST_F_TIMEOUT(regionpm, sigkill_owner_releases, 600)
{
	struct regions rs = { 0 };
	struct rpm_region r;
	struct rpm_event e;
	struct rpm_ack ack;
	struct rpm ev;
	struct hog *child = &self->hog[0];
	uint32_t cands[8], id = 0, portid = 0;
	uint64_t mt0, parked = 0;
	char line[128] = "";
	int ncand, p[2], ms, status;
	bool got;
	ssize_t n;

	ncand = park_candidates(_metadata, self, &rs, cands, ARRAY_SIZE(cands));
	ASSERT_LE(0, ncand);
	if (!ncand)
		SKIP(return, "no active region without unmovable pages to park");
	mt0 = memtotal_pages();
	ASSERT_EQ(0, rpm_events_open(&ev, &ack)) TH_LOG("events listener: %s", ack.msg);

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	child->pid = fork();
	ASSERT_LE(0, child->pid);
	if (child->pid == 0) {
		close(p[0]);
		park_child(cands, ncand, p[1]);
	}
	close(p[1]);
	child->fd = p[0];

	{
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };

		ASSERT_EQ(1, poll(&pfd, 1, HOG_TIMEOUT_MS)) TH_LOG("the child never reported");
	}
	n = read(p[0], line, sizeof(line) - 1);
	ASSERT_LT(0, n) TH_LOG("the child died before reporting");
	line[n] = '\0';
	if (sscanf(line, "parked %u %u %" SCNu64, &id, &portid, &parked) != 3) {
		for (int i = 0; i < ncand; i++)
			log_refused(_metadata, &self->rpm, cands[i]);
		ASSERT_TRUE(false) TH_LOG("the child could not park a region: %s", line);
	}

	ASSERT_EQ(0, rpm_region_get(&self->rpm, id, false, &r, &ack));
	EXPECT_STREQ("parked", state_name(r.state));
	EXPECT_EQ(portid, r.owner) TH_LOG("owner must be the child's socket");
	EXPECT_EQ(mt0 - parked, memtotal_pages());

	kill(child->pid, SIGKILL);
	waitpid(child->pid, &status, 0);
	child->pid = 0;
	close(child->fd);

	ms = wait_region_state(&self->rpm, id, REGIONPM_REGION_STATE_ACTIVE,
			       RELEASE_WAIT_MS, &r);
	EXPECT_LE(0, ms) TH_LOG("region %u still %s %d ms after its owner was killed",
				id, state_name(r.state), RELEASE_WAIT_MS);
	got = wait_release(&ev, id, REGIONPM_RELEASE_REASON_OWNER_CLOSED,
			   RELEASE_WAIT_MS, &e);
	EXPECT_TRUE(got) {
		TH_LOG("no region-release-ntf {id %u, reason owner-closed}", id);
		log_events(_metadata, &ev);
	}
	if (got) {
		EXPECT_EQ(parked, e.pages) TH_LOG("release event pages vs parked-pages");
	}
	EXPECT_EQ(mt0, memtotal_pages()) TH_LOG("MemTotal not restored after the owner died");
	rpm_close(&ev);
	regions_free(&rs);
}

/* ------------------------------------------------------------------------
 * 9. Memory pressure takes parked regions back before the OOM killer runs.
 */
/*
 * Read the start of /proc/kcore, where the kernel has it: the read holds
 * page_offline_rwsem and allocates (it may enter reclaim, whose shrinker
 * releases parked regions).  On a lockdep kernel that order is then known,
 * and a release that took the same lock would show as the deadlock it is.
 */
static void read_kcore_header(struct __test_metadata *_metadata)
{
	static char buf[64 * 1024];
	ssize_t n;
	int fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;		/* CONFIG_PROC_KCORE=n: nothing holds the lock */
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		TH_LOG("reading /proc/kcore: %s", strerror(errno));
	close(fd);
}

TEST_F_TIMEOUT(regionpm, pressure_releases_without_oom, 900)
{
	const uint32_t pressure = (1U << REGIONPM_RELEASE_REASON_SHRINKER) |
				  (1U << REGIONPM_RELEASE_REASON_OOM);
	struct regions rs = { 0 };
	struct rpm_compact_res res;
	struct rpm_event e;
	struct rpm_ack ack;
	struct rpm ev;
	struct ev_match m = { .cmd = REGIONPM_CMD_REGION_RELEASE_NTF, .reasons = pressure };
	uint32_t cands[64], parked_ids[64];
	uint64_t parked_kb = 0, avail_kb, floor_kb, target, deadline;
	int64_t oom0, oom1;
	int ncand, nparked = 0, released = 0, i, status = 0, err;
	pid_t w = 0;

	sync();
	write_text("/proc/sys/vm/drop_caches", "1");
	ncand = park_candidates(_metadata, self, &rs, cands, ARRAY_SIZE(cands));
	ASSERT_LE(0, ncand);
	if (!ncand)
		SKIP(return, "no active region without unmovable pages to park");
	ASSERT_EQ(0, rpm_events_open(&ev, &ack)) TH_LOG("events listener: %s", ack.msg);
	oom0 = vmstat_get("oom_kill");
	read_kcore_header(_metadata);

	/* Park as much as possible while keeping the system usable. */
	floor_kb = u64max(256 * 1024, (uint64_t)meminfo_kb("MemTotal") / 5);
	for (i = 0; i < ncand; i++) {
		const struct rpm_region *r = region_find(&rs, cands[i]);
		uint64_t kb = r->managed * self->pgsz / 1024;

		if ((uint64_t)meminfo_kb("MemAvailable") < floor_kb + kb)
			continue;
		err = rpm_park(&self->rpm, cands[i], true, &res, &ack);
		if (err) {
			TH_LOG("parking region %u: %s \"%s\"", cands[i], strerror(-err), ack.msg);
			log_refused(_metadata, &self->rpm, cands[i]);
			continue;
		}
		parked_ids[nparked++] = cands[i];
		parked_kb += kb;
	}
	ASSERT_LT(0, nparked) TH_LOG("no region could be parked");

	/* Ask for more than is available: only parked memory can cover it. */
	avail_kb = meminfo_kb("MemAvailable");
	target = (avail_kb + parked_kb / 2) * 1024;
	TH_LOG("parked %d regions (%" PRIu64 " MiB), MemAvailable %" PRIu64 " MiB, allocating %" PRIu64 " MiB",
	       nparked, parked_kb / 1024, avail_kb / 1024, target / MiB);
	ASSERT_EQ(0, hog_start(&self->hog[0], target, 2000));

	m.ids = parked_ids;
	m.nids = nparked;
	deadline = now_ms() + HOG_TIMEOUT_MS;
	while (now_ms() < deadline) {
		if (!rpm_event_wait(&ev, 250, &m, &e)) {
			released++;
			TH_LOG("region %u released (%s, %" PRIu64 " pages)", e.id,
			       reason_name(e.reason), e.pages);
		}
		if (!w) {
			w = waitpid(self->hog[0].pid, &status, WNOHANG);
			if (w > 0)	/* the release events may lag a bit */
				deadline = u64min(deadline, now_ms() + EVENT_WAIT_MS);
		}
	}
	if (w > 0) {
		self->hog[0].pid = 0;
		close(self->hog[0].fd);
	}
	oom1 = vmstat_get("oom_kill");

	EXPECT_LT(0, w) TH_LOG("the allocating child did not finish in %d s", HOG_TIMEOUT_MS / 1000);
	if (w > 0) {
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("the allocating child %s %d (OOM killed?)",
			       WIFSIGNALED(status) ? "was killed by signal" : "exited with",
			       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	}
	EXPECT_EQ(oom0, oom1) TH_LOG("the OOM killer ran while parked regions could have been released");
	EXPECT_LT(0, released) {
		TH_LOG("no region-release-ntf with reason shrinker or oom");
		log_events(_metadata, &ev);
	}
	rpm_close(&ev);
	regions_free(&rs);
}

/* ------------------------------------------------------------------------
 * 10. Privilege: every op and joining the events group need CAP_SYS_ADMIN
 * and CAP_NET_ADMIN; the family exists in the initial network namespace
 * only (netnsok false: it cannot even be resolved elsewhere).
 *
 * A child drops what the mode says, probes every op and writes one line
 * "op errno extack" per op to a pipe; the parent checks them.
 */
enum probe_mode {
	PROBE_NOBODY,			/* setresuid(65534) before opening */
	PROBE_SOCKET_THEN_NOBODY,	/* socket opened as root, then setresuid */
	PROBE_NO_SYS_ADMIN,		/* uid 0 without CAP_SYS_ADMIN */
	PROBE_NO_NET_ADMIN,		/* uid 0 without CAP_NET_ADMIN */
	PROBE_NETNS,			/* root in a new network namespace */
};

static const char *const probe_mode_name[] = {
	"uid nobody", "root socket used as nobody", "no CAP_SYS_ADMIN",
	"no CAP_NET_ADMIN", "new network namespace",
};

struct probe_result {
	char op[24];
	int err;
	char msg[200];
};

static int drop_caps(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	int i = CAP_TO_INDEX(cap);

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[i].effective &= ~CAP_TO_MASK(cap);
	data[i].permitted &= ~CAP_TO_MASK(cap);
	data[i].inheritable &= ~CAP_TO_MASK(cap);
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

static int become_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return -errno;
	return 0;
}

static void probe_report(int fd, const char *op, int err, const char *msg)
{
	dprintf(fd, "%s %d %s\n", op, err, msg && msg[0] ? msg : "-");
}

static void __attribute__((noreturn)) probe_child(enum probe_mode mode, uint32_t id, int fd)
{
	struct regions rs = { 0 };
	struct rpm_compact_res res;
	struct compact_req rq = { .id = id, .mode = REGIONPM_COMPACT_MODE_MIGRATE, .budget = 512 };
	struct rpm_region r;
	struct rpm_info in;
	struct rpm_ack ack;
	struct rpm s = { 0 };
	int err = 0;

	if (mode == PROBE_SOCKET_THEN_NOBODY) {
		err = rpm_open(&s, &ack);
		if (err) {
			probe_report(fd, "open", err, ack.msg);
			_exit(1);
		}
	}
	switch (mode) {
	case PROBE_NOBODY:
	case PROBE_SOCKET_THEN_NOBODY:
		err = become_nobody();
		break;
	case PROBE_NO_SYS_ADMIN:
		err = drop_caps(CAP_SYS_ADMIN);
		break;
	case PROBE_NO_NET_ADMIN:
		err = drop_caps(CAP_NET_ADMIN);
		break;
	case PROBE_NETNS:
		err = unshare(CLONE_NEWNET) ? -errno : 0;
		break;
	}
	if (err) {
		probe_report(fd, "setup", err, strerror(-err));
		_exit(1);
	}
	if (mode != PROBE_SOCKET_THEN_NOBODY) {
		err = rpm_open(&s, &ack);
		if (err) {
			probe_report(fd, "open", err, ack.msg);
			_exit(0);
		}
	}
	err = rpm_info_get(&s, &in, &ack);
	probe_report(fd, "info-get", err, ack.msg);
	err = rpm_region_get(&s, id, false, &r, &ack);
	probe_report(fd, "region-get", err, ack.msg);
	err = regions_dump(&s, false, &rs, &ack);
	probe_report(fd, "region-get-dump", err, ack.msg);
	err = rpm_compact(&s, &rq, &res, &ack);
	probe_report(fd, "region-compact", err, ack.msg);
	err = rpm_park(&s, id, false, &res, &ack);
	probe_report(fd, "region-park", err, ack.msg);
	err = rpm_unpark(&s, id, &ack);
	probe_report(fd, "region-unpark", err, ack.msg);
	err = rpm_join_events(&s);
	probe_report(fd, "events-join", err, NULL);
	rpm_close(&s);
	_exit(0);
}

/* Run a probe child; returns the number of results or -errno. */
static int run_probe(enum probe_mode mode, uint32_t id, struct probe_result *res, int max)
{
	char buf[4096], *line, *save = NULL;
	size_t off = 0;
	int p[2], n = 0, status;
	ssize_t got;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(p[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		probe_child(mode, id, p[1]);
	}
	close(p[1]);
	while (off + 1 < sizeof(buf) && (got = read(p[0], buf + off, sizeof(buf) - 1 - off)) > 0)
		off += got;
	buf[off] = '\0';
	close(p[0]);
	waitpid(pid, &status, 0);
	for (line = strtok_r(buf, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		struct probe_result *r = &res[n];

		r->msg[0] = '\0';
		if (sscanf(line, "%23s %d %199[^\n]", r->op, &r->err, r->msg) >= 2)
			n++;
	}
	return n;
}

static void check_probe(struct __test_metadata *_metadata,
			FIXTURE_DATA(regionpm) *self, enum probe_mode mode)
{
	struct probe_result res[16];
	struct regions rs = { 0 };
	struct rpm_ack ack;
	int n, i;

	ASSERT_EQ(0, regions_dump(&self->rpm, false, &rs, &ack));
	ASSERT_LT(0, rs.n);
	n = run_probe(mode, rs.r[0].id, res, ARRAY_SIZE(res));
	ASSERT_LT(0, n) TH_LOG("%s: the probe child reported nothing", probe_mode_name[mode]);
	ASSERT_STRNE("setup", res[0].op)
		TH_LOG("%s: dropping privileges failed: %s", probe_mode_name[mode], res[0].msg);

	if (mode == PROBE_NETNS) {
		/* the family must be invisible outside the initial netns */
		EXPECT_STREQ("open", res[0].op)
			TH_LOG("the family resolved in a new network namespace");
		EXPECT_EQ(-ENOENT, res[0].err) TH_LOG("opening in a new netns: %s", res[0].msg);
		regions_free(&rs);
		return;
	}
	ASSERT_STRNE("open", res[0].op)
		TH_LOG("%s: resolving the family failed: %d %s", probe_mode_name[mode],
		       res[0].err, res[0].msg);
	EXPECT_EQ(7, n) TH_LOG("%s: only %d of 7 ops probed", probe_mode_name[mode], n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(-EPERM, res[i].err)
			TH_LOG("%s as %s: expected -EPERM, got %d (%s), extack \"%s\"",
			       res[i].op, probe_mode_name[mode], res[i].err,
			       res[i].err ? strerror(-res[i].err) : "success", res[i].msg);
	}
	regions_free(&rs);
}

/*
 * gcc inlines these one-line bodies into the harness's fork/setjmp wrapper
 * and then warns about the wrapper's own "child" variable (-Wclobbered);
 * the variable is not used after the longjmp in the child, so it is safe.
 */
#pragma GCC diagnostic push
#ifndef __clang__
#pragma GCC diagnostic ignored "-Wclobbered"
#endif

TEST_F(regionpm, unprivileged_eperm)
{
	check_probe(_metadata, self, PROBE_NOBODY);
}

TEST_F(regionpm, root_socket_used_by_nobody_eperm)
{
	check_probe(_metadata, self, PROBE_SOCKET_THEN_NOBODY);
}

TEST_F(regionpm, without_cap_sys_admin_eperm)
{
	check_probe(_metadata, self, PROBE_NO_SYS_ADMIN);
}

TEST_F(regionpm, without_cap_net_admin_eperm)
{
	check_probe(_metadata, self, PROBE_NO_NET_ADMIN);
}

TEST_F(regionpm, other_netns_refused)
{
	check_probe(_metadata, self, PROBE_NETNS);
}

#pragma GCC diagnostic pop

/* ------------------------------------------------------------------------
 * 11. Malformed requests get the documented errno and an extack message.
 */
#define E_(e)	(-(e))

struct bad_case {
	const char *name;
	uint8_t cmd;
	uint16_t flags;			/* NLM_F_ACK or NLM_F_DUMP */
	struct raw_attr attrs[3];
	int nattrs;
	int errs[4];			/* accepted results; 0 = success is ok */
	int nerrs;
	int miss_type;			/* missing attribute: MISS_TYPE counts as extack */
	bool no_msg;			/* genl core errors without a message */
};

#define U32(t, v)	{ .type = (t), .len = 4, .val = (uint32_t)(v) }
#define U64(t, v)	{ .type = (t), .len = 8, .val = (v) }
#define U8(t, v)	{ .type = (t), .len = 1, .val = (v) }
#define FLAG(t)		{ .type = (t), .len = 0 }
#define ATTRS(...)	.attrs = { __VA_ARGS__ }, \
			.nattrs = sizeof((struct raw_attr[]){ __VA_ARGS__ }) / sizeof(struct raw_attr)
#define ERRS(...)	.errs = { __VA_ARGS__ }, \
			.nerrs = sizeof((int[]){ __VA_ARGS__ }) / sizeof(int)

static void run_bad_case(struct __test_metadata *_metadata, struct rpm *s,
			 const struct bad_case *c)
{
	struct rpm_ack ack;
	bool accepted = false;
	int err, i;

	err = rpm_raw(s, c->cmd, c->flags, c->attrs, c->nattrs, &ack);
	ASSERT_FALSE(ack.local) TH_LOG("%s: %s", c->name, ack.msg);
	for (i = 0; i < c->nerrs; i++)
		accepted |= err == c->errs[i];
	EXPECT_TRUE(accepted) TH_LOG("%s: expected %s%s, got %d (%s), extack \"%s\"", c->name,
				     strerror(-c->errs[0]), c->nerrs > 1 ? " (or similar)" : "",
				     err, err ? strerror(-err) : "success", ack.msg);
	if (err && !c->no_msg) {
		EXPECT_TRUE(ack.msg[0] || (c->miss_type && ack.miss_type == c->miss_type))
			TH_LOG("%s: error %d without an extack message%s", c->name, err,
			       c->miss_type ? " or missing-attribute type" : "");
	}
	if (accepted && err)
		fprintf(stderr, "#   %-44s %-4d \"%s\"%s\n", c->name, err, ack.msg,
			ack.miss_type >= 0 ? " (missing attr)" : "");
}

/* Whole messages that are broken below the attribute level. */
static void run_raw_msg_cases(struct __test_metadata *_metadata, struct rpm *s)
{
	char buf[RPM_TXBUF];
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	struct nlattr *a;
	struct rpm_ack ack;
	int err;

	/* an attribute header claiming more bytes than the message has */
	nlh = rpm_msg(s, buf, REGIONPM_CMD_REGION_GET);
	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_ID, 0);
	a = mnl_nlmsg_get_payload_tail(nlh);
	a->nla_type = REGIONPM_A_REGION_SCAN;
	a->nla_len = 64;
	nlh->nlmsg_len += sizeof(*a);
	err = rpm_transact(s, nlh, NULL, NULL, &ack);
	EXPECT_EQ(-EINVAL, err) TH_LOG("truncated attribute: got %d, extack \"%s\"", err, ack.msg);
	EXPECT_NE(0, ack.msg[0]) TH_LOG("truncated attribute: no extack message");

	/* two bytes of trailing garbage after the attributes */
	nlh = rpm_msg(s, buf, REGIONPM_CMD_REGION_GET);
	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_ID, 0);
	memset(mnl_nlmsg_get_payload_tail(nlh), 0xff, 4);
	nlh->nlmsg_len += 2;
	err = rpm_transact(s, nlh, NULL, NULL, &ack);
	EXPECT_EQ(-EINVAL, err) TH_LOG("trailing bytes: got %d, extack \"%s\"", err, ack.msg);

	/* message shorter than the genetlink header */
	nlh = rpm_msg(s, buf, REGIONPM_CMD_INFO_GET);
	nlh->nlmsg_len = NLMSG_HDRLEN + 2;
	err = rpm_transact(s, nlh, NULL, NULL, &ack);
	EXPECT_EQ(-EINVAL, err) TH_LOG("short genl header: got %d", err);

	/* genlmsghdr.reserved must be 0 */
	nlh = rpm_msg(s, buf, REGIONPM_CMD_INFO_GET);
	g = mnl_nlmsg_get_payload(nlh);
	g->reserved = 1;
	err = rpm_transact(s, nlh, NULL, NULL, &ack);
	EXPECT_EQ(-EINVAL, err) TH_LOG("reserved != 0: got %d, extack \"%s\"", err, ack.msg);

	/* request flags the core does not define for genetlink */
	nlh = rpm_msg(s, buf, REGIONPM_CMD_INFO_GET);
	nlh->nlmsg_flags |= NLM_F_CREATE;
	err = rpm_transact(s, nlh, NULL, NULL, &ack);
	EXPECT_EQ(-EINVAL, err) TH_LOG("NLM_F_CREATE: got %d, extack \"%s\"", err, ack.msg);
}

TEST_F(regionpm, malformed_attrs)
{
	const int ENO = E_(ENOENT), EIN = E_(EINVAL), ERA = E_(ERANGE), EOP = E_(EOPNOTSUPP);
	const uint64_t huge_budget = (1ULL << 40) + 1;
	struct regions rs = { 0 };
	const struct rpm_region *hi = NULL, *busy = NULL;
	struct rpm_info info;
	struct rpm_ack ack;
	uint64_t pb = self->pageblock, start, end;
	uint32_t none, id, bid;
	size_t i;
	int err;

	ASSERT_EQ(0, regions_dump(&self->rpm, false, &rs, &ack));
	ASSERT_LT(0, rs.n);
	/* the highest active region for range checks; a busy one for -EBUSY */
	for (i = rs.n; i-- > 0;) {
		if (!hi && rs.r[i].state == REGIONPM_REGION_STATE_ACTIVE && rs.r[i].spanned >= 4 * pb)
			hi = &rs.r[i];
		if (!busy && rs.r[i].state == REGIONPM_REGION_STATE_ACTIVE &&
		    rs.r[i].free < rs.r[i].managed)
			busy = &rs.r[i];
	}
	ASSERT_NE(NULL, hi) TH_LOG("no active region of at least 4 pageblocks");
	ASSERT_NE(NULL, busy) TH_LOG("every region is completely free?");
	id = hi->id;
	bid = busy->id;
	start = hi->start_pfn;
	end = hi->start_pfn + hi->spanned;
	none = self->info.region_count;	/* first id past the table */

	const struct bad_case cases[] = {
	/*
	 * INFO_GET has no request attributes, hence no policy: the genl core
	 * does not parse them, so an unknown one is ignored (or rejected).
	 */
	{ "info-get: unknown attr 200", REGIONPM_CMD_INFO_GET, NLM_F_ACK,
	  ATTRS(U32(200, 1)), ERRS(0, EIN) },
	{ "info-get as dump", REGIONPM_CMD_INFO_GET, NLM_F_DUMP,
	  .nattrs = 0, ERRS(EOP), .no_msg = true },

	{ "region-get: no id", REGIONPM_CMD_REGION_GET, NLM_F_ACK,
	  .nattrs = 0, ERRS(EIN), .miss_type = REGIONPM_A_REGION_ID },
	{ "region-get: id as u8", REGIONPM_CMD_REGION_GET, NLM_F_ACK,
	  ATTRS(U8(REGIONPM_A_REGION_ID, 0)), ERRS(EIN, ERA) },
	{ "region-get: id as u64", REGIONPM_CMD_REGION_GET, NLM_F_ACK,
	  ATTRS(U64(REGIONPM_A_REGION_ID, 0)), ERRS(EIN) },
	{ "region-get: id 0xffffffff", REGIONPM_CMD_REGION_GET, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, 0xffffffffU)), ERRS(ERA, EIN, ENO) },
	{ "region-get: id 0x7fffffff", REGIONPM_CMD_REGION_GET, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, 0x7fffffffU)), ERRS(ENO, ERA) },
	{ "region-get: id past region-count", REGIONPM_CMD_REGION_GET, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, none)), ERRS(ENO, ERA) },
	{ "region-get: unknown attr 200", REGIONPM_CMD_REGION_GET, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, id), U32(200, 1)), ERRS(EIN) },
	{ "region-get: reply-only attr spanned-pages", REGIONPM_CMD_REGION_GET, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, id), U64(REGIONPM_A_REGION_SPANNED_PAGES, 1)), ERRS(EIN) },
	{ "region-get: scan with payload", REGIONPM_CMD_REGION_GET, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, id), U32(REGIONPM_A_REGION_SCAN, 1)), ERRS(ERA, EIN) },
	{ "region-get: id flagged NLA_F_NESTED", REGIONPM_CMD_REGION_GET, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID | NLA_F_NESTED, id)), ERRS(EIN) },

	{ "region-get dump: with id", REGIONPM_CMD_REGION_GET, NLM_F_DUMP,
	  ATTRS(U32(REGIONPM_A_REGION_ID, id)), ERRS(EIN) },
	{ "region-get dump: unknown attr 200", REGIONPM_CMD_REGION_GET, NLM_F_DUMP,
	  ATTRS(U32(200, 1)), ERRS(EIN) },
	{ "region-get dump: scan as u32", REGIONPM_CMD_REGION_GET, NLM_F_DUMP,
	  ATTRS(U32(REGIONPM_A_REGION_SCAN, 1)), ERRS(ERA, EIN) },

	{ "region-compact: no id", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U64(REGIONPM_A_COMPACT_BUDGET, pb)), ERRS(EIN), .miss_type = REGIONPM_A_COMPACT_ID },
	{ "region-compact: id as u8", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U8(REGIONPM_A_COMPACT_ID, 0)), ERRS(EIN, ERA) },
	{ "region-compact: id 0xffffffff", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, 0xffffffffU)), ERRS(ERA, EIN, ENO) },
	{ "region-compact: id past region-count", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, none)), ERRS(ENO, ERA) },
	{ "region-compact: start pfn unaligned", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, id), U64(REGIONPM_A_COMPACT_START_PFN, start + 1),
		U64(REGIONPM_A_COMPACT_NR_PAGES, pb)), ERRS(EIN) },
	{ "region-compact: nr pages unaligned", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, id), U64(REGIONPM_A_COMPACT_START_PFN, start),
		U64(REGIONPM_A_COMPACT_NR_PAGES, pb + 1)), ERRS(EIN) },
	{ "region-compact: start pfn past the region", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, id), U64(REGIONPM_A_COMPACT_START_PFN, end),
		U64(REGIONPM_A_COMPACT_NR_PAGES, pb)), ERRS(ERA) },
	{ "region-compact: start pfn before the region", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, id), U64(REGIONPM_A_COMPACT_START_PFN, start - pb),
		U64(REGIONPM_A_COMPACT_NR_PAGES, pb)), ERRS(ERA) },
	{ "region-compact: range overruns the region", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, id), U64(REGIONPM_A_COMPACT_START_PFN, end - pb),
		U64(REGIONPM_A_COMPACT_NR_PAGES, 2 * pb)), ERRS(ERA) },
	{ "region-compact: start pfn as u32", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, id), U32(REGIONPM_A_COMPACT_START_PFN, start),
		U64(REGIONPM_A_COMPACT_NR_PAGES, pb)), ERRS(EIN) },
	{ "region-compact: mode 99", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, id), U32(REGIONPM_A_COMPACT_MODE, 99)), ERRS(ERA, EIN) },
	{ "region-compact: mode as u64", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, id), U64(REGIONPM_A_COMPACT_MODE, 0)), ERRS(EIN) },
	{ "region-compact: budget 0", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, id), U64(REGIONPM_A_COMPACT_BUDGET, 0)), ERRS(EIN) },
	{ "region-compact: budget 2^40+1", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, id), U64(REGIONPM_A_COMPACT_BUDGET, huge_budget)), ERRS(ERA) },
	{ "region-compact: budget u64 max", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, id), U64(REGIONPM_A_COMPACT_BUDGET, UINT64_MAX)), ERRS(ERA) },
	{ "region-compact: unknown attr 200", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, id), U32(200, 1)), ERRS(EIN) },
	{ "region-compact: park flag (park only)", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, id), FLAG(REGIONPM_A_COMPACT_PARK)), ERRS(EIN) },
	{ "region-compact: reply-only attr scanned", REGIONPM_CMD_REGION_COMPACT, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, id), U64(REGIONPM_A_COMPACT_SCANNED, 1)), ERRS(EIN) },
	{ "region-compact as dump", REGIONPM_CMD_REGION_COMPACT, NLM_F_DUMP,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, id)), ERRS(EOP), .no_msg = true },

	{ "region-park: no id", REGIONPM_CMD_REGION_PARK, NLM_F_ACK,
	  .nattrs = 0, ERRS(EIN), .miss_type = REGIONPM_A_COMPACT_ID },
	{ "region-park: id 0xffffffff", REGIONPM_CMD_REGION_PARK, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, 0xffffffffU)), ERRS(ERA, EIN, ENO) },
	{ "region-park: id past region-count", REGIONPM_CMD_REGION_PARK, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, none)), ERRS(ENO, ERA) },
	{ "region-park: start pfn (compact only)", REGIONPM_CMD_REGION_PARK, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, bid), U64(REGIONPM_A_COMPACT_START_PFN, start)), ERRS(EIN) },
	{ "region-park: mode 99", REGIONPM_CMD_REGION_PARK, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, bid), FLAG(REGIONPM_A_COMPACT_PARK),
		U32(REGIONPM_A_COMPACT_MODE, 99)), ERRS(ERA, EIN) },
	{ "region-park: budget 0", REGIONPM_CMD_REGION_PARK, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, bid), FLAG(REGIONPM_A_COMPACT_PARK),
		U64(REGIONPM_A_COMPACT_BUDGET, 0)), ERRS(EIN) },
	{ "region-park: budget 2^40+1", REGIONPM_CMD_REGION_PARK, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, bid), FLAG(REGIONPM_A_COMPACT_PARK),
		U64(REGIONPM_A_COMPACT_BUDGET, huge_budget)), ERRS(ERA) },
	{ "region-park: park flag with payload", REGIONPM_CMD_REGION_PARK, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, bid), U32(REGIONPM_A_COMPACT_PARK, 1)), ERRS(ERA, EIN) },
	{ "region-park: unknown attr 200", REGIONPM_CMD_REGION_PARK, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, bid), U32(200, 1)), ERRS(EIN) },
	{ "region-park: not free, no park flag", REGIONPM_CMD_REGION_PARK, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_COMPACT_ID, bid)), ERRS(E_(EBUSY)), .no_msg = true },

	{ "region-unpark: no id", REGIONPM_CMD_REGION_UNPARK, NLM_F_ACK,
	  .nattrs = 0, ERRS(EIN), .miss_type = REGIONPM_A_REGION_ID },
	{ "region-unpark: region not parked", REGIONPM_CMD_REGION_UNPARK, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, id)), ERRS(EIN) },
	{ "region-unpark: id past region-count", REGIONPM_CMD_REGION_UNPARK, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, none)), ERRS(ENO, ERA, EIN) },
	{ "region-unpark: id 0xffffffff", REGIONPM_CMD_REGION_UNPARK, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, 0xffffffffU)), ERRS(ERA, EIN, ENO) },
	{ "region-unpark: id as u64", REGIONPM_CMD_REGION_UNPARK, NLM_F_ACK,
	  ATTRS(U64(REGIONPM_A_REGION_ID, id)), ERRS(EIN) },
	{ "region-unpark: unknown attr 200", REGIONPM_CMD_REGION_UNPARK, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, id), U32(200, 1)), ERRS(EIN) },
	{ "region-unpark: scan (region-get only)", REGIONPM_CMD_REGION_UNPARK, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, id), FLAG(REGIONPM_A_REGION_SCAN)), ERRS(EIN) },

	{ "region-hold: no id", REGIONPM_CMD_REGION_HOLD, NLM_F_ACK,
	  .nattrs = 0, ERRS(EIN), .miss_type = REGIONPM_A_REGION_ID },
	{ "region-hold: id past region-count", REGIONPM_CMD_REGION_HOLD, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, none)), ERRS(ENO, ERA) },
	{ "region-hold: id 0xffffffff", REGIONPM_CMD_REGION_HOLD, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, 0xffffffffU)), ERRS(ERA, EIN, ENO) },
	{ "region-hold: id 0x7fffffff", REGIONPM_CMD_REGION_HOLD, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, 0x7fffffffU)), ERRS(ENO, ERA) },
	{ "region-hold: id as u64", REGIONPM_CMD_REGION_HOLD, NLM_F_ACK,
	  ATTRS(U64(REGIONPM_A_REGION_ID, id)), ERRS(EIN) },
	{ "region-hold: id as u8", REGIONPM_CMD_REGION_HOLD, NLM_F_ACK,
	  ATTRS(U8(REGIONPM_A_REGION_ID, 0)), ERRS(EIN, ERA) },
	{ "region-hold: unknown attr 200", REGIONPM_CMD_REGION_HOLD, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, id), U32(200, 1)), ERRS(EIN) },
	{ "region-hold: scan (region-get only)", REGIONPM_CMD_REGION_HOLD, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, id), FLAG(REGIONPM_A_REGION_SCAN)), ERRS(EIN) },
	{ "region-hold: reply-only attr held-pages", REGIONPM_CMD_REGION_HOLD, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_REGION_ID, id), U64(REGIONPM_A_REGION_HELD_PAGES, 1)), ERRS(EIN) },
	{ "region-hold as dump", REGIONPM_CMD_REGION_HOLD, NLM_F_DUMP,
	  ATTRS(U32(REGIONPM_A_REGION_ID, id)), ERRS(EOP), .no_msg = true },

	{ "unknown command 99", 99, NLM_F_ACK, .nattrs = 0, ERRS(EOP), .no_msg = true },
	{ "command 0", 0, NLM_F_ACK, .nattrs = 0, ERRS(EOP), .no_msg = true },
	{ "notification sent as a request", REGIONPM_CMD_REGION_ALLOC_NTF, NLM_F_ACK,
	  ATTRS(U32(REGIONPM_A_EVENT_ID, id)), ERRS(EOP), .no_msg = true },
	};

	TH_LOG("cases against region %u (pfn %#" PRIx64 "-%#" PRIx64 "), busy region %u, pageblock %" PRIu64,
	       id, start, end, bid, pb);
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		run_bad_case(_metadata, &self->rpm, &cases[i]);
	run_raw_msg_cases(_metadata, &self->rpm);

	/* still alive, nothing parked by accident (the teardown checks taint) */
	err = rpm_info_get(&self->rpm, &info, &ack);
	EXPECT_EQ(0, err) TH_LOG("INFO_GET after the malformed requests: %s", strerror(-err));
	regions_free(&rs);
	ASSERT_EQ(0, regions_dump(&self->rpm, false, &rs, &ack));
	for (i = 0; i < (size_t)rs.n; i++) {
		EXPECT_STRNE("parked", state_name(rs.r[i].state))
			TH_LOG("region %u got parked by a malformed request", rs.r[i].id);
		EXPECT_STRNE("held", state_name(rs.r[i].state))
			TH_LOG("region %u got held by a malformed request", rs.r[i].id);
	}
	regions_free(&rs);
}

/* ------------------------------------------------------------------------
 * The compact notification carries what the reply carried; the budget
 * bounds the work.
 */
TEST_F_TIMEOUT(regionpm, compact_notification_mirrors_reply, 120)
{
	struct regions rs = { 0 };
	struct rpm_compact_res res;
	struct rpm_event e;
	struct rpm_ack ack;
	struct rpm ev;
	struct compact_req rq = { .mode = REGIONPM_COMPACT_MODE_MIGRATE, .has_range = true };
	struct ev_match m = { .cmd = REGIONPM_CMD_REGION_COMPACT_NTF };
	const struct rpm_region *r = NULL;
	uint64_t pb = self->pageblock;
	int i, err;

	ASSERT_EQ(0, regions_dump(&self->rpm, false, &rs, &ack));
	for (i = rs.n - 1; i >= 0 && !r; i--)
		if (rs.r[i].state == REGIONPM_REGION_STATE_ACTIVE && rs.r[i].spanned >= 4 * pb)
			r = &rs.r[i];
	ASSERT_NE(NULL, r);
	rq.id = r->id;
	rq.start_pfn = r->start_pfn;
	rq.nr_pages = 4 * pb;
	rq.budget = pb;
	m.ids = &rq.id;
	m.nids = 1;

	ASSERT_EQ(0, rpm_events_open(&ev, &ack)) TH_LOG("events listener: %s", ack.msg);
	err = rpm_compact(&self->rpm, &rq, &res, &ack);
	ASSERT_EQ(0, err) TH_LOG("REGION_COMPACT %u [%#" PRIx64 "+%" PRIu64 "] budget %" PRIu64 ": %s, extack \"%s\"",
				 rq.id, rq.start_pfn, rq.nr_pages, rq.budget, strerror(-err), ack.msg);
	EXPECT_EQ(rq.id, res.id);
	EXPECT_LE(res.scanned, rq.nr_pages) TH_LOG("scanned more than the range");
	EXPECT_LE(res.migrated + res.dropped, rq.budget + pb)
		TH_LOG("handled %" PRIu64 " pages with a budget of %" PRIu64, res.migrated + res.dropped, rq.budget);
	EXPECT_LE(res.free_pages, rq.nr_pages) TH_LOG("free-pages counts beyond the range");

	err = rpm_event_wait(&ev, EVENT_WAIT_MS, &m, &e);
	ASSERT_EQ(0, err) {
		TH_LOG("no region-compact-ntf for region %u", rq.id);
		log_events(_metadata, &ev);
	}
	EXPECT_EQ(res.present, e.compact.present)
		TH_LOG("reply attributes %#" PRIx64 " vs notification %#" PRIx64, res.present, e.compact.present);
	EXPECT_EQ(res.id, e.compact.id);
	EXPECT_EQ(res.scanned, e.compact.scanned);
	EXPECT_EQ(res.migrated, e.compact.migrated);
	EXPECT_EQ(res.dropped, e.compact.dropped);
	EXPECT_EQ(res.skipped, e.compact.skipped);
	EXPECT_EQ(res.failed, e.compact.failed);
	EXPECT_EQ(res.obstacle, e.compact.obstacle);
	EXPECT_EQ(res.obstacle_pfn, e.compact.obstacle_pfn);
	EXPECT_EQ(res.free_pages, e.compact.free_pages);
	EXPECT_EQ(res.elapsed_ns, e.compact.elapsed_ns);
	rpm_close(&ev);
	regions_free(&rs);
}

/* ------------------------------------------------------------------------
 * 12. Hardening: a netlink fuzzer, memory offline racing with parks, and
 * parked memory coming back for allocations limited to one zone or node.
 */
#define FUZZ_WORKERS		4
#define FUZZ_SECONDS		30	/* REGIONPM_FUZZ_SECONDS overrides */
#define OFFLINE_BOUND_S		90	/* one offline must finish within this */
#define RACE_SECONDS		40

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Read and throw away whatever the kernel answered, for up to @ms. */
static void fuzz_drain(int fd, int ms)
{
	static char buf[RPM_RXBUF];
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (poll(&p, 1, ms) > 0) {
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) < 0 && errno != EINTR &&
		    errno != ENOBUFS)
			break;
		ms = 0;
	}
}

/*
 * One malformed-or-not request: a command (mostly the family's, sometimes
 * unknown), do/dump/ack flags at random, attributes of random types, sizes
 * and nesting, and lengths that lie: attribute lengths past the message,
 * below the header, a message length that disagrees with what is sent.
 */
static void fuzz_one(int fd, uint16_t family, uint32_t nregions, uint64_t *rnd, uint32_t seq)
{
	static const uint16_t flag_sets[] = {
		NLM_F_REQUEST, NLM_F_REQUEST | NLM_F_ACK, NLM_F_REQUEST | NLM_F_DUMP,
		NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP, 0, NLM_F_REQUEST | NLM_F_ECHO,
	};
	char buf[512] __attribute__((aligned(8)));
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = (struct genlmsghdr *)(buf + NLMSG_HDRLEN);
	size_t off = NLMSG_HDRLEN + GENL_HDRLEN, send_len;
	int nattrs = xorshift(rnd) % 6, i;

	memset(buf, 0, sizeof(buf));
	nlh->nlmsg_type = xorshift(rnd) % 64 ? family : (uint16_t)xorshift(rnd);
	nlh->nlmsg_flags = flag_sets[xorshift(rnd) % ARRAY_SIZE(flag_sets)];
	nlh->nlmsg_seq = seq;
	g->cmd = xorshift(rnd) % 16 ? 1 + xorshift(rnd) % (REGIONPM_CMD_MAX + 1) :
		 (uint8_t)xorshift(rnd);
	g->version = xorshift(rnd) % 8 ? REGIONPM_FAMILY_VERSION : (uint8_t)xorshift(rnd);
	for (i = 0; i < nattrs && off + 64 < sizeof(buf); i++) {
		struct nlattr *a = (struct nlattr *)(buf + off);
		uint16_t plen = xorshift(rnd) % 4 ? (uint16_t[]){ 0, 1, 4, 8, 12 }[xorshift(rnd) % 5] :
				xorshift(rnd) % 40;
		uint64_t v = xorshift(rnd);

		a->nla_type = xorshift(rnd) % 16;
		if (!(xorshift(rnd) % 8))
			a->nla_type |= NLA_F_NESTED;
		/* plausible values most of the time, so deep paths run too */
		switch (xorshift(rnd) % 4) {
		case 0: v = nregions ? xorshift(rnd) % (nregions + 2) : 0; break;
		case 1: v = xorshift(rnd) % 4096; break;
		case 2: v = ~0ULL; break;
		default: break;
		}
		a->nla_len = NLA_HDRLEN + plen;
		memcpy(buf + off + NLA_HDRLEN, &v, plen < 8 ? plen : 8);
		if (!(xorshift(rnd) % 16))
			a->nla_len = xorshift(rnd) % 4;			/* below the header */
		else if (!(xorshift(rnd) % 16))
			a->nla_len = 200 + xorshift(rnd) % 2000;	/* past the end */
		off += NLA_ALIGN(NLA_HDRLEN + plen);
	}
	nlh->nlmsg_len = off;
	send_len = off;
	switch (xorshift(rnd) % 16) {
	case 0: nlh->nlmsg_len = off + 1 + xorshift(rnd) % 64; break;	/* longer than sent */
	case 1: nlh->nlmsg_len = xorshift(rnd) % off; break;		/* shorter */
	case 2: send_len = xorshift(rnd) % off; break;			/* truncated */
	default: break;
	}
	send(fd, buf, send_len, MSG_DONTWAIT);
}

/* A worker: fuzz, park for real now and then, close sockets holding parks. */
static void __attribute__((noreturn)) fuzz_worker(int w, uint32_t nregions, int seconds)
{
	uint64_t rnd = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)getpid() << 20) ^ now_ms();
	uint64_t end = now_ms() + seconds * 1000ULL;
	struct rpm_compact_res res;
	struct rpm_ack ack;
	unsigned long n = 0, parks = 0;
	struct rpm s;
	int grp;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (rpm_open(&s, &ack))
		_exit(2);
	/* worker 0 listens to events and never reads them: ENOBUFS paths */
	grp = s.events_grp;
	if (w == 0 && grp)
		mnl_socket_setsockopt(s.nl, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp));
	while (now_ms() < end) {
		int fd = mnl_socket_get_fd(s.nl);

		switch (xorshift(&rnd) % 16) {
		case 0:	/* a real park of a random region, compacting first */
			if (nregions && !rpm_park(&s, xorshift(&rnd) % nregions,
						  xorshift(&rnd) & 1, &res, &ack))
				parks++;
			break;
		case 1:	/* close while holding whatever this socket parked */
			rpm_close(&s);
			if (rpm_open(&s, &ack))
				_exit(2);
			break;
		case 2:	/* a real hold, often compacted or parked next */
			if (nregions) {
				uint32_t id = xorshift(&rnd) % nregions;
				struct rpm_region r;

				if (!rpm_hold(&s, id, &r, &ack) && xorshift(&rnd) % 2)
					rpm_park(&s, id, xorshift(&rnd) & 1, &res, &ack);
			}
			break;
		default:
			fuzz_one(fd, s.family, nregions, &rnd, ++s.seq);
			if (w != 0 || xorshift(&rnd) % 4)
				fuzz_drain(fd, xorshift(&rnd) % 3 ? 50 : 0);
		}
		n++;
	}
	rpm_close(&s);
	printf("# fuzz worker %d: %lu requests, %lu parks\n", w, n, parks);
	fflush(stdout);
	_exit(0);
}

TEST_F_TIMEOUT(regionpm, fuzz_concurrent_requests, 900)
{
	const char *env = getenv("REGIONPM_FUZZ_SECONDS");
	int seconds = env ? atoi(env) : FUZZ_SECONDS;
	pid_t pids[FUZZ_WORKERS];
	struct rpm_info in;
	struct rpm_ack ack;
	uint64_t mt0, t0;
	int i, status, bad = 0;

	mt0 = memtotal_pages();
	for (i = 0; i < FUZZ_WORKERS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0)
			fuzz_worker(i, self->info.region_count, seconds);
	}
	for (i = 0; i < FUZZ_WORKERS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			TH_LOG("fuzz worker %d ended with status %#x", i, status);
			bad++;
		}
	}
	EXPECT_EQ(0, bad);
	/* Every socket is closed: everything parked must be back, at once. */
	t0 = now_ms();
	do {
		ASSERT_EQ(0, rpm_info_get(&self->rpm, &in, &ack)) TH_LOG("INFO_GET: %s", ack.msg);
		if (!in.parked_pages && !in.held_pages && memtotal_pages() == mt0)
			break;
		sleep_ms(10);
	} while (now_ms() - t0 < RELEASE_WAIT_MS);
	EXPECT_EQ(0UL, in.parked_pages) TH_LOG("pages still parked after every fuzz socket closed");
	EXPECT_EQ(0UL, in.held_pages) TH_LOG("pages still held after every fuzz socket closed");
	EXPECT_EQ(mt0, memtotal_pages()) TH_LOG("MemTotal not back to its value before the fuzz");
}

/* The sysfs directory of the memory block that is region @r, or -ENOENT. */
static int memory_block_of(FIXTURE_DATA(regionpm) *self, const struct rpm_region *r,
			   char *dir, size_t len)
{
	char buf[64];
	uint64_t bs;

	if (read_text("/sys/devices/system/memory/block_size_bytes", buf, sizeof(buf)) <= 0)
		return -ENOENT;
	bs = strtoull(buf, NULL, 16);
	if (bs != self->info.region_size)
		return -EINVAL;
	snprintf(dir, len, "/sys/devices/system/memory/memory%" PRIu64,
		 r->start_pfn * self->pgsz / bs);
	return access(dir, F_OK) ? -ENOENT : 0;
}

/* Write @state into @dir/state; -ETIMEDOUT if it took over @bound_s seconds. */
static int set_block_state(const char *dir, const char *state, int bound_s, uint64_t *ms)
{
	char path[PATH_MAX];
	uint64_t t0 = now_ms();
	int status, p[2], err = 0;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/state", dir);
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int e = write_text(path, state);

		dprintf(p[1], "%d\n", e);
		_exit(0);
	}
	close(p[1]);
	for (;;) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (now_ms() - t0 > (uint64_t)bound_s * 1000) {
			/* a sysfs write gets the signal; the kernel's own offlines do not */
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			close(p[0]);
			*ms = now_ms() - t0;
			return -ETIMEDOUT;
		}
		sleep_ms(5);
	}
	*ms = now_ms() - t0;
	{
		char line[32] = "";
		ssize_t n = read(p[0], line, sizeof(line) - 1);

		if (n > 0)
			err = atoi(line);
	}
	close(p[0]);
	return err;
}

/*
 * Memory offline of a block while the same region is being compacted and
 * parked, over and over: every offline and online must finish within a
 * bound (an offline that met a half-parked region used to loop forever
 * under mem_hotplug_lock), and in the end the block is online, the region
 * active and MemTotal back.
 */
TEST_F_TIMEOUT(regionpm, offline_races_park, 900)
{
	struct regions rs = { 0 };
	struct rpm_region r;
	struct rpm_ack ack;
	uint32_t cands[8];
	char dir[128];
	uint64_t mt0, end, ms, worst = 0;
	int ncand, i, status, offlined = 0, refused = 0, err;
	pid_t parker;

	ncand = park_candidates(_metadata, self, &rs, cands, ARRAY_SIZE(cands));
	ASSERT_LE(0, ncand);
	if (!ncand)
		SKIP(return, "no active region without unmovable pages to park");
	err = -ENOENT;
	for (i = 0; i < ncand && err; i++) {
		err = memory_block_of(self, region_find(&rs, cands[i]), dir, sizeof(dir));
		if (!err)
			r = *region_find(&rs, cands[i]);
	}
	if (err == -EINVAL)
		SKIP(return, "memory blocks and regions differ in size");
	ASSERT_EQ(0, err) TH_LOG("no memory block directory for the candidate regions");
	TH_LOG("racing offline of %s with parks of region %u", dir, r.id);
	mt0 = memtotal_pages();

	parker = fork();
	ASSERT_LE(0, parker);
	if (parker == 0) {
		uint64_t rnd = now_ms() | 1, stop = now_ms() + RACE_SECONDS * 1000ULL;
		struct rpm_compact_res res;
		struct rpm s;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		while (now_ms() < stop) {
			if (rpm_open(&s, &ack))
				_exit(2);
			rpm_park(&s, r.id, true, &res, &ack);
			sleep_ms(xorshift(&rnd) % 50);
			if (xorshift(&rnd) & 1)
				rpm_unpark(&s, r.id, &ack);
			rpm_close(&s);
		}
		_exit(0);
	}
	end = now_ms() + RACE_SECONDS * 1000ULL;
	while (now_ms() < end) {
		err = set_block_state(dir, "offline", OFFLINE_BOUND_S, &ms);
		worst = u64max(worst, ms);
		EXPECT_NE(-ETIMEDOUT, err)
			TH_LOG("offlining %s took over %d s: stuck", dir, OFFLINE_BOUND_S);
		if (err == -ETIMEDOUT)
			break;
		if (err) {
			refused++;
			continue;
		}
		offlined++;
		err = set_block_state(dir, "online", OFFLINE_BOUND_S, &ms);
		ASSERT_EQ(0, err) TH_LOG("onlining %s again: %s", dir, strerror(-err));
	}
	ASSERT_EQ(parker, waitpid(parker, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	TH_LOG("%d offlines, %d refused, slowest state change %" PRIu64 " ms", offlined, refused, worst);
	set_block_state(dir, "online", OFFLINE_BOUND_S, &ms);
	EXPECT_EQ(0, rpm_region_get(&self->rpm, r.id, false, &r, &ack));
	EXPECT_STREQ("active", state_name(r.state));
	EXPECT_EQ(mt0, memtotal_pages()) TH_LOG("MemTotal not back after the race");
	regions_free(&rs);
}

/* debugfs regionpm/alloc (CONFIG_REGIONPM_ALLOC_TEST). */
#define ALLOC_TEST	"/sys/kernel/debug/regionpm/alloc"

static bool alloc_test_ready(void)
{
	if (access(ALLOC_TEST, W_OK) == 0)
		return true;
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	return access(ALLOC_TEST, W_OK) == 0;
}

/*
 * Pages held and failed by the test interface, and the bad blocks it saw
 * since boot (@bad may be NULL).
 */
static int alloc_test_read(uint64_t *held, uint64_t *failed, uint64_t *bad)
{
	uint64_t b;
	char buf[96];

	if (read_text(ALLOC_TEST, buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "held %" SCNu64 " failed %" SCNu64 " bad %" SCNu64,
		   held, failed, bad ? bad : &b) != 3)
		return -EIO;
	return 0;
}

static int alloc_test_state(uint64_t *held, uint64_t *failed)
{
	return alloc_test_read(held, failed, NULL);
}

/*
 * Free pages of zone @zone (NULL: every zone) on node @nid (-1: every
 * node), from /proc/zoneinfo; -1 if no such zone has memory.
 */
static int64_t zone_free_pages(int nid, const char *zone)
{
	char line[256], name[32];
	int64_t sum = -1, free = 0, v;
	int node, in = 0;
	FILE *f = fopen("/proc/zoneinfo", "re");

	if (!f)
		return -1;
	/* zoneinfo lists empty zones too: count a zone only if it has managed pages */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d, zone %31s", &node, name) == 2) {
			in = (nid < 0 || node == nid) && (!zone || !strcmp(name, zone));
			continue;
		}
		if (in && sscanf(line, " pages free %" SCNd64, &v) == 1)
			free = v;
		else if (in && sscanf(line, " managed %" SCNd64, &v) == 1) {
			if (v > 0)
				sum = (sum < 0 ? 0 : sum) + free;
			in = 0;
		}
	}
	fclose(f);
	return sum;
}

static bool region_in_zone(const struct rpm_region *r, const char *zone)
{
	int i;

	for (i = 0; i < r->nzones; i++)
		if (!strcmp(r->zones[i], zone))
			return true;
	return false;
}

/* Which of @rs (all parked by @s at the start) are still parked. */
static int count_still_parked(struct rpm *s, const uint32_t *ids, int n)
{
	struct rpm_region r;
	struct rpm_ack ack;
	int i, still = 0;

	for (i = 0; i < n; i++)
		if (!rpm_region_get(s, ids[i], false, &r, &ack) &&
		    r.state == REGIONPM_REGION_STATE_PARKED)
			still++;
	return still;
}

/*
 * Park every candidate region that matches @want (a zone name and/or a
 * node), into @in, and every other one into @out.  Returns parked pages of
 * the @in kind.
 */
static uint64_t park_split(struct __test_metadata *_metadata, FIXTURE_DATA(regionpm) *self,
			   const struct regions *rs, const uint32_t *cands, int ncand,
			   const char *zone, int node, uint32_t *in, int *nin,
			   uint32_t *out, int *nout)
{
	struct rpm_compact_res res;
	struct rpm_ack ack;
	uint64_t pages = 0;
	int i, err;

	*nin = *nout = 0;
	for (i = 0; i < ncand; i++) {
		const struct rpm_region *r = region_find(rs, cands[i]);
		bool match = (!zone || region_in_zone(r, zone)) &&
			     (node < 0 || (int)r->node == node);

		err = rpm_park(&self->rpm, r->id, true, &res, &ack);
		if (err) {
			TH_LOG("parking region %u (%s, node %u): %s \"%s\"", r->id,
			       r->nzones ? r->zones[0] : "-", r->node, strerror(-err), ack.msg);
			continue;
		}
		if (match) {
			in[(*nin)++] = r->id;
			pages += r->managed;
		} else {
			out[(*nout)++] = r->id;
		}
	}
	return pages;
}

/*
 * Allocate, through the test interface, the free pages of the zone plus
 * most of what is parked in it: only parked memory coming back can serve
 * that.  The OOM killer is never involved (it does not run for these
 * allocations), so it is the shrinker, NUMA- and zone-aware, that must give
 * the memory back -- and only the memory that helps: regions of the other
 * kind stay parked.
 */
static void pressure_gets_parked_back(struct __test_metadata *_metadata,
				      FIXTURE_DATA(regionpm) *self, const char *zone,
				      int node, const char *what)
{
	struct regions rs = { 0 };
	uint32_t cands[256], in[256], out[256];
	uint64_t in_pages, want, held = 0, failed = 0;
	int64_t free_pages, oom0;
	int ncand, nin, nout, still_out;
	char cmd[64];

	sync();
	write_text("/proc/sys/vm/drop_caches", "3");
	ncand = park_candidates(_metadata, self, &rs, cands, ARRAY_SIZE(cands));
	ASSERT_LE(0, ncand);
	in_pages = park_split(_metadata, self, &rs, cands, ncand, zone, node, in, &nin, out, &nout);
	TH_LOG("%s: parked %d regions that help (%" PRIu64 " pages), %d that do not",
	       what, nin, in_pages, nout);
	if (!nin || !nout)
		SKIP(goto out, "needs parkable regions both in and outside %s", what);
	free_pages = zone_free_pages(node, zone);
	ASSERT_LE(0, free_pages);
	want = free_pages + in_pages * 3 / 4;
	oom0 = vmstat_get("oom_kill");
	snprintf(cmd, sizeof(cmd), "%s %d %" PRIu64, zone ? "dma32" : "any", node, want);
	ASSERT_EQ(0, write_text(ALLOC_TEST, cmd)) TH_LOG("writing \"%s\" to %s", cmd, ALLOC_TEST);
	ASSERT_EQ(0, alloc_test_state(&held, &failed));
	still_out = count_still_parked(&self->rpm, out, nout);
	TH_LOG("%s: asked %" PRIu64 " pages (%" PRId64 " free), got %" PRIu64 ", %" PRIu64
	       " failed; %d of %d helping regions still parked, %d of %d others",
	       what, want, free_pages, held, failed, count_still_parked(&self->rpm, in, nin),
	       nin, still_out, nout);
	EXPECT_EQ(0UL, failed) TH_LOG("%s allocations failed while parked memory could serve them", what);
	EXPECT_EQ(oom0, vmstat_get("oom_kill")) TH_LOG("the OOM killer ran");
	EXPECT_EQ(nout, still_out) TH_LOG("regions that cannot serve a %s allocation were released", what);
	ASSERT_EQ(0, write_text(ALLOC_TEST, "free"));
out:
	regions_free(&rs);
}

/* see the -Wclobbered note at the privilege tests */
#pragma GCC diagnostic push
#ifndef __clang__
#pragma GCC diagnostic ignored "-Wclobbered"
#endif

TEST_F_TIMEOUT(regionpm, pressure_dma32_gets_parked_back, 900)
{
	if (!alloc_test_ready())
		SKIP(return, "no %s (CONFIG_REGIONPM_ALLOC_TEST)", ALLOC_TEST);
	if (zone_free_pages(-1, "Normal") < 0)
		SKIP(return, "no ZONE_NORMAL: a DMA32 allocation is any allocation here (boot with over 4 GiB)");
	pressure_gets_parked_back(_metadata, self, "DMA32", -1, "DMA32");
}

TEST_F_TIMEOUT(regionpm, pressure_thisnode_gets_parked_back, 900)
{
	int64_t last_node_free;

	if (!alloc_test_ready())
		SKIP(return, "no %s (CONFIG_REGIONPM_ALLOC_TEST)", ALLOC_TEST);
	last_node_free = zone_free_pages(1, "Normal");
	if (last_node_free < 0 && zone_free_pages(1, "DMA32") < 0)
		SKIP(return, "one NUMA node only (run with --numa 2)");
	/* node 0: the old shrinker released from the top, i.e. node 1, first */
	pressure_gets_parked_back(_metadata, self, NULL, 0, "node 0 (__GFP_THISNODE)");
}

#pragma GCC diagnostic pop

/* ------------------------------------------------------------------------
 * alloc_contig_range() of memory regionpm parked or holds gets it back
 * first, with reason range-claimed: virtio-mem unplugs online memory that
 * way, one sub-block at a time (the 2 MiB taken here), and gigantic huge
 * pages and CMA are made that way.  Parked pages hold a reference and held
 * pageblocks are isolated, so before the hook every such call failed with
 * EBUSY: a virtio-mem device could not unplug what regionpmd had emptied.
 */
#define CONTIG_TAKE	512	/* a virtio-mem sub-block of 2 MiB */

static int alloc_test_contig(uint64_t pfn, uint64_t nr)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "contig %#" PRIx64 " %" PRIu64, pfn, nr);
	return write_text(ALLOC_TEST, cmd);
}

/*
 * Take CONTIG_TAKE pages from the middle of region @id (parked or held as
 * @how) with alloc_contig_range(): the region must be released with reason
 * range-claimed and @pages in the event, and be active again.
 */
static void contig_takes_back(struct __test_metadata *_metadata, struct rpm *s,
			      struct rpm *ev, uint32_t id, const char *how,
			      uint64_t pages)
{
	struct rpm_region r;
	struct rpm_event e;
	struct rpm_ack ack;
	uint64_t pfn, held, failed;
	int err;
	bool got;

	ASSERT_EQ(0, rpm_region_get(s, id, false, &r, &ack));
	pfn = r.start_pfn + (r.spanned / 2 & ~(uint64_t)(CONTIG_TAKE - 1));
	err = alloc_test_contig(pfn, CONTIG_TAKE);
	EXPECT_EQ(0, err) TH_LOG("alloc_contig_range() of %d pages at pfn %#" PRIx64
				 " in %s region %u: %s", CONTIG_TAKE, pfn, how, id,
				 strerror(-err));
	got = wait_release(ev, id, REGIONPM_RELEASE_REASON_RANGE_CLAIMED, EVENT_WAIT_MS, &e);
	EXPECT_TRUE(got) {
		TH_LOG("no region-release-ntf {id %u, reason range-claimed} for the %s region",
		       id, how);
		log_events(_metadata, ev);
	}
	if (got) {
		EXPECT_EQ(pages, e.pages) TH_LOG("release event pages vs %s pages", how);
	}
	ASSERT_EQ(0, rpm_region_get(s, id, false, &r, &ack));
	EXPECT_STREQ("active", state_name(r.state));
	EXPECT_FALSE(HAS(&r, REGIONPM_A_REGION_OWNER_PORTID));
	EXPECT_EQ(0UL, r.parked);
	EXPECT_EQ(0UL, r.held);
	EXPECT_GE(r.managed, r.free + CONTIG_TAKE)
		TH_LOG("the %d pages taken must be managed and in use", CONTIG_TAKE);
	if (!err) {
		ASSERT_EQ(0, alloc_test_state(&held, &failed));
		EXPECT_EQ((uint64_t)CONTIG_TAKE, held);
	}
	EXPECT_EQ(0, write_text(ALLOC_TEST, "free"));
}

/*
 * Before a claim: nothing held by the test interface from an earlier test,
 * no page cache (parks need no reclaim), and the park candidates.
 */
static int contig_candidates(struct __test_metadata *_metadata,
			     FIXTURE_DATA(regionpm) *self, struct regions *rs,
			     uint32_t *cands, int max)
{
	uint64_t held, failed;

	ASSERT_EQ(0, alloc_test_state(&held, &failed));
	ASSERT_EQ(0UL, held) TH_LOG("the test interface holds pages from an earlier test");
	sync();
	write_text("/proc/sys/vm/drop_caches", "1");
	return park_candidates(_metadata, self, rs, cands, max);
}

TEST_F_TIMEOUT(regionpm, contig_alloc_takes_back_parked_and_held, 600)
{
	struct regions rs = { 0 };
	struct rpm_compact_res res;
	struct rpm_region r;
	struct rpm_ack ack;
	struct rpm ev;
	uint32_t cands[8], id;
	uint64_t mt0, parked;
	int ncand, idx, i, err;

	if (!alloc_test_ready())
		SKIP(return, "no %s (CONFIG_REGIONPM_ALLOC_TEST)", ALLOC_TEST);
	/* The test interface refuses what is not online memory of one zone. */
	EXPECT_EQ(-EINVAL, alloc_test_contig(1ULL << 40, CONTIG_TAKE));
	EXPECT_EQ(-EINVAL, alloc_test_contig(0x100000, 0));
	EXPECT_EQ(-EINVAL, alloc_test_contig(0x100000, (1ULL << 30) / self->pgsz + 1));
	ncand = contig_candidates(_metadata, self, &rs, cands, ARRAY_SIZE(cands));
	ASSERT_LE(0, ncand);
	if (!ncand)
		SKIP(return, "no active region without unmovable pages to park");
	ASSERT_EQ(0, rpm_events_open(&ev, &ack)) TH_LOG("events listener: %s", ack.msg);
	mt0 = memtotal_pages();

	/* Parked: MemTotal comes back with it. */
	idx = park_first(_metadata, &self->rpm, cands, ncand, &res);
	ASSERT_LE(0, idx) TH_LOG("none of %d candidate regions could be parked", ncand);
	id = cands[idx];
	ASSERT_EQ(0, rpm_region_get(&self->rpm, id, false, &r, &ack));
	parked = r.parked;
	EXPECT_EQ(mt0 - parked, memtotal_pages());
	contig_takes_back(_metadata, &self->rpm, &ev, id, "parked", parked);
	EXPECT_EQ(mt0, memtotal_pages()) TH_LOG("MemTotal not restored");

	/* Held, by another candidate (or the same one, active again). */
	for (i = 0; i < ncand; i++) {
		if (ncand > 1 && i == idx)
			continue;
		err = rpm_hold(&self->rpm, cands[i], &r, &ack);
		if (!err)
			break;
		TH_LOG("holding region %u: %s, extack \"%s\"", cands[i], strerror(-err), ack.msg);
	}
	ASSERT_LT(i, ncand) TH_LOG("no candidate region could be held");
	EXPECT_STREQ("held", state_name(r.state));
	contig_takes_back(_metadata, &self->rpm, &ev, cands[i], "held", r.held);

	/*
	 * Nothing parked or held in range: nothing is released.  Whether the
	 * allocation succeeds there is not ours to judge (a page may be pinned
	 * for a moment); it must not touch regionpm either way.
	 */
	err = alloc_test_contig(r.start_pfn, CONTIG_TAKE);
	if (err)
		TH_LOG("alloc_contig_range() at pfn %#" PRIx64 " of an active region: %s",
		       r.start_pfn, strerror(-err));
	EXPECT_EQ(0, write_text(ALLOC_TEST, "free"));
	EXPECT_EQ(-ETIMEDOUT, rpm_event_wait(&ev, 1000, &(struct ev_match){
		.cmd = REGIONPM_CMD_REGION_RELEASE_NTF }, NULL)) {
		TH_LOG("a release event when nothing parked or held was in range");
		log_events(_metadata, &ev);
	}
	rpm_close(&ev);
	regions_free(&rs);
}

/* ------------------------------------------------------------------------
 * Issue 10: with the bias on, a claim for unmovable memory takes the lowest
 * free pageblock below the frontier, so new unmovable pageblocks are made
 * in low regions.  A fixed frontier in the middle of memory, unmovable
 * pages through the test interface, and kernel pages counted per region by
 * detail scans before and after: nearly all of them must land below it.
 * In a fresh guest the stock allocator happens to place them low as well
 * (measured: 0 of 16384 above the frontier with the bias off); this guards
 * the steering and the per-node frontier against sending them high.  What
 * the steering buys on fragmented memory is measured by make bench
 * ("unmovable regions/limit per node").
 */
#define BIAS_PARAM	"/sys/module/regionpm/parameters/bias"
#define FRONTIER_PARAM	"/sys/module/regionpm/parameters/frontier"

/*
 * Does @r hold reserved, slab or page-table pages, as the kernel's pinned
 * regions do (not only other kernel pages, which may be free pages on
 * per-CPU lists)?
 */
static bool region_has_pinning_pages(const struct rpm_region *r)
{
	return r->detail[REGIONPM_A_DETAIL_RESERVED] || r->detail[REGIONPM_A_DETAIL_SLAB] ||
	       r->detail[REGIONPM_A_DETAIL_PAGE_TABLE];
}

/*
 * Does @r hold pages that keep it from being emptied (other tests' pages
 * of the test interface count: their unmovable pageblocks pin it too)?
 */
static bool region_has_kernel_pages(const struct rpm_region *r)
{
	return r->detail[REGIONPM_A_DETAIL_RESERVED] || r->detail[REGIONPM_A_DETAIL_SLAB] ||
	       r->detail[REGIONPM_A_DETAIL_PAGE_TABLE] ||
	       r->detail[REGIONPM_A_DETAIL_KERNEL_OTHER];
}

/*
 * Kernel pages (not slab, not page tables) in regions at or above @f that
 * held no reserved, slab or page-table page in @ref.  Regions that did are
 * pinned: with the bias on since boot (make check-debug) their unmovable
 * pageblocks' free pages head the free lists, and filling them costs no
 * region, so allocations that land there are not counted.
 */
static uint64_t kernel_pages_from(const struct regions *rs, const struct regions *ref,
				  uint32_t f)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < rs->n; i++) {
		const struct rpm_region *b = region_find(ref, rs->r[i].id);

		if (rs->r[i].id >= f && b && !region_has_kernel_pages(b))
			n += rs->r[i].detail[REGIONPM_A_DETAIL_KERNEL_OTHER];
	}
	return n;
}

/*
 * Free what the test interface holds with every page behind the frontier:
 * such frees bypass the per-CPU lists, which would otherwise keep tens of
 * MiB away from MemFree for the tests that follow (the frontier is
 * recomputed every second); then restore the bias and the frontier.
 */
static void alloc_test_free_behind(const char *old_bias, const char *old_frontier)
{
	write_text(FRONTIER_PARAM, "0");
	sleep_ms(1500);
	write_text(ALLOC_TEST, "free");
	write_text(BIAS_PARAM, old_bias);
	write_text(FRONTIER_PARAM, old_frontier);
}

/*
 * Run on node 0's CPUs from now on (this test's process and the children
 * it forks: the harness runs each test in a process of its own).  With a
 * fixed frontier, which applies to every zone of every node, only node 0
 * has a front: on node 1 of a two-node guest the test's anonymous memory
 * and unmovable pages came from node 1, where everything lies behind it.
 * Without a node 0 CPU list (no NUMA) nothing changes.
 */
static void run_on_node0(void)
{
	char buf[256], *p = buf;
	cpu_set_t set;

	if (read_text("/sys/devices/system/node/node0/cpulist", buf, sizeof(buf)) <= 0)
		return;
	CPU_ZERO(&set);
	while (*p >= '0' && *p <= '9') {
		long a = strtol(p, &p, 10), b = a;

		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		for (; a <= b && a < CPU_SETSIZE; a++)
			CPU_SET(a, &set);
		if (*p == ',')
			p++;
	}
	if (CPU_COUNT(&set))
		sched_setaffinity(0, sizeof(set), &set);
}

/*
 * @steps allocations of @pages unmovable pages, @ms apart, as slab grows;
 * on node @nid only (-1: any node, the local one first).
 */
static int alloc_test_steps(int nid, uint64_t pages, uint64_t steps, unsigned int ms)
{
	char cmd[64];
	int err = 0;

	snprintf(cmd, sizeof(cmd), "any %d %" PRIu64, nid, pages);
	for (uint64_t i = 0; !err && i < steps; i++) {
		err = write_text(ALLOC_TEST, cmd);
		sleep_ms(ms);
	}
	return err;
}

/*
 * A fixed frontier for a test: the first region past 1/@part of the managed
 * pages, the regions before it holding *@free_below free pages (if asked).
 */
static uint32_t region_past(const struct regions *rs, uint64_t part, uint64_t *free_below)
{
	uint64_t managed = 0, sum = 0;
	uint32_t f = 0;
	int i;

	for (i = 0; i < rs->n; i++)
		managed += rs->r[i].managed;
	for (i = 0; i < rs->n && sum < managed / part; i++) {
		sum += rs->r[i].managed;
		if (free_below)
			*free_below += rs->r[i].free;
		f = rs->r[i].id + 1;
	}
	return f;
}

TEST_F_TIMEOUT(regionpm, bias_claims_low_pageblocks, 300)
{
	uint64_t free_below = 0, want, held = 0, failed = 0;
	uint64_t above_before, above_after, landed_above;
	char old_bias[16] = "", old_frontier[16] = "", cmd[64];
	struct regions rs = { 0 }, before = { 0 }, after = { 0 };
	struct rpm_ack ack;
	uint32_t f = 0;
	int err;

	run_on_node0();
	if (!alloc_test_ready())
		SKIP(return, "no %s (CONFIG_REGIONPM_ALLOC_TEST)", ALLOC_TEST);
	ASSERT_LT(0, read_text(BIAS_PARAM, old_bias, sizeof(old_bias)));
	ASSERT_LT(0, read_text(FRONTIER_PARAM, old_frontier, sizeof(old_frontier)));
	err = regions_dump(&self->rpm, false, &rs, &ack);
	ASSERT_EQ(0, err) TH_LOG("dump: %s \"%s\"", strerror(-err), ack.msg);
	f = region_past(&rs, 2, &free_below);
	regions_free(&rs);
	want = u64min(free_below / 4, 16384);
	if (want < 2048)
		SKIP(return, "only %" PRIu64 " pages free below region %u", free_below, f);

	snprintf(cmd, sizeof(cmd), "%u", f);
	ASSERT_EQ(0, write_text(FRONTIER_PARAM, cmd));
	ASSERT_EQ(0, write_text(BIAS_PARAM, "1"));
	err = regions_dump(&self->rpm, true, &before, &ack);
	ASSERT_EQ(0, err) TH_LOG("detail dump: %s \"%s\"", strerror(-err), ack.msg);
	snprintf(cmd, sizeof(cmd), "any -1 %" PRIu64, want);
	err = write_text(ALLOC_TEST, cmd);
	EXPECT_EQ(0, alloc_test_state(&held, &failed));
	err = err ? err : regions_dump(&self->rpm, true, &after, &ack);
	alloc_test_free_behind(old_bias, old_frontier);
	ASSERT_EQ(0, err) TH_LOG("allocating or dumping: %s", strerror(-err));
	EXPECT_EQ(want, held) TH_LOG("held %" PRIu64 " of %" PRIu64 ", failed %" PRIu64,
				     held, want, failed);

	above_before = kernel_pages_from(&before, &before, f);
	above_after = kernel_pages_from(&after, &before, f);
	landed_above = above_after > above_before ? above_after - above_before : 0;
	TH_LOG("frontier region %u, %" PRIu64 " pages free below it; %" PRIu64
	       " unmovable pages allocated, kernel pages in regions at or above it that held none %" PRIu64 " -> %" PRIu64,
	       f, free_below, want, above_before, above_after);
	/* slack: per-CPU lists and partly free unmovable blocks above it */
	EXPECT_GE(want / 10, landed_above)
		TH_LOG("%" PRIu64 " of %" PRIu64 " unmovable pages landed at or above the frontier",
		       landed_above, want);
	regions_free(&before);
	regions_free(&after);
}

/* Bad blocks the test interface has seen since boot; -1 if unreadable. */
static int64_t alloc_test_bad(void)
{
	uint64_t held, failed, bad;

	return alloc_test_read(&held, &failed, &bad) ? -1 : (int64_t)bad;
}

/*
 * Free blocks of 2^@order pages of migratetype @type in every zone, from
 * /proc/pagetypeinfo; -1 if it cannot be read.
 */
static int64_t pagetype_free_blocks(const char *type, int order)
{
	char line[1024], t[32];
	int64_t sum = -1;
	FILE *f = fopen("/proc/pagetypeinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, ", type");
		char *save, *tok;
		int o = 0;

		if (strncmp(line, "Node", 4) || !p || sscanf(p, ", type %31s", t) != 1 ||
		    strcmp(t, type))
			continue;
		p = strstr(p, t) + strlen(t);
		for (tok = strtok_r(p, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), o++)
			if (o == order)
				sum = (sum < 0 ? 0 : sum) + strtoll(tok, NULL, 10);
	}
	fclose(f);
	return sum;
}

/* The largest order the buddy allocator hands out: columns of /proc/buddyinfo. */
static int buddy_max_order(void)
{
	char line[512], *tok, *save;
	int cols = 0;
	FILE *f = fopen("/proc/buddyinfo", "r");

	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f))
		for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
			cols++;
	fclose(f);
	/* "Node 0, zone DMA32 n0 ... nMAX" */
	return cols > 4 ? cols - 5 : -1;
}

/* ------------------------------------------------------------------------
 * Holds (region-hold): a held region's free pages sit on isolated free
 * lists, so nothing is allocated from it and compaction targets go
 * elsewhere, until it is parked or the hold ends.
 */
#define HOLD_TIMEOUT_PARAM	"/sys/module/regionpm/parameters/hold_timeout_ms"
#define RETYPED_PARAM		"/sys/module/regionpm/parameters/retyped"
#define MAX_PARKED_PARAM	"/sys/module/regionpm/parameters/max_parked_pct"

/* Read a module parameter as an unsigned number; -1 if it cannot be read. */
static int64_t param_get(const char *path)
{
	char buf[32];

	if (read_text(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

static int param_set(const char *path, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return write_text(path, buf);
}

/*
 * Issue 10: the bias's front keeper.  Once the regions in front of the
 * frontier are full of movable memory, a claim for unmovable memory finds
 * no free pageblock there and takes one behind it, wherever memory is free.
 * The keeper moves movable pages out of front pageblocks into the memory
 * behind, so that slab that keeps growing stays in front.  Set-up: with the
 * bias off, park what can be parked behind a fixed frontier (its pages
 * move into the front), fill what is left free with anonymous memory, and
 * unpark: the front is full and the free memory is behind.  Then the bias
 * with its keeper, and unmovable pages, a pageblock at a time, 16
 * pageblocks more than were free in front: the keeper must move pages, and
 * the unmovable pages must land in front.  Without the keeper
 * (regionpm.bias_front_blocks=0) they land behind: measured while writing
 * this test, see the commit that added it.
 */
#define FRONT_BLOCKS_PARAM	"/sys/module/regionpm/parameters/bias_front_blocks"
#define FRONT_MOVED_PARAM	"/sys/module/regionpm/parameters/front_moved"

/* Free pages in regions below @f, from a plain dump; -1 on error. */
static int64_t free_below(struct rpm *s, uint32_t f)
{
	struct regions rs = { 0 };
	struct rpm_ack ack;
	int64_t n = 0;
	int i;

	if (regions_dump(s, false, &rs, &ack))
		return -1;
	for (i = 0; i < rs.n; i++)
		if (rs.r[i].id < f)
			n += rs.r[i].free;
	regions_free(&rs);
	return n;
}

TEST_F_TIMEOUT(regionpm, bias_front_keeper, 300)
{
	uint64_t pb = read_pageblock_pages(), want, held = 0, failed = 0;
	uint64_t above_before, above_after, landed_above, moved0, moved1;
	char old_bias[16] = "", old_frontier[16] = "", cmd[64];
	struct regions rs = { 0 }, before = { 0 }, after = { 0 };
	int64_t old_blocks, front0, front1 = -1, avail_kb;
	uint32_t f = 0, parked[256];
	struct rpm_compact_res res;
	struct hog hogs[6] = { 0 };
	int i, err, nparked = 0, nhogs = 0, waited;
	uint64_t bytes, steps;
	struct rpm_ack ack;

	run_on_node0();
	if (!alloc_test_ready())
		SKIP(return, "no %s (CONFIG_REGIONPM_ALLOC_TEST)", ALLOC_TEST);
	old_blocks = param_get(FRONT_BLOCKS_PARAM);
	ASSERT_LE(0, old_blocks) TH_LOG("%s unreadable", FRONT_BLOCKS_PARAM);
	ASSERT_LT(0, read_text(BIAS_PARAM, old_bias, sizeof(old_bias)));
	ASSERT_LT(0, read_text(FRONTIER_PARAM, old_frontier, sizeof(old_frontier)));
	ASSERT_EQ(0, write_text(BIAS_PARAM, "0"));
	ASSERT_EQ(0, param_set(FRONT_BLOCKS_PARAM, 8));

	err = regions_dump(&self->rpm, true, &rs, &ack);
	ASSERT_EQ(0, err) TH_LOG("dump: %s \"%s\"", strerror(-err), ack.msg);
	f = region_past(&rs, 4, NULL);
	/* park what parks behind it, highest first: its pages move into the front */
	checkpoint_scratch(_metadata);
	for (i = rs.n - 1; i >= 0 && nparked < (int)ARRAY_SIZE(parked); i--) {
		const struct rpm_region *r = &rs.r[i];

		if (r->id < f || r->state != REGIONPM_REGION_STATE_ACTIVE || !r->managed ||
		    region_unmovable(r))
			continue;
		if (!rpm_park(&self->rpm, r->id, true, &res, &ack))
			parked[nparked++] = r->id;
	}
	regions_free(&rs);
	/*
	 * Fill what is left free with anonymous memory.  The allocator takes
	 * the smallest free blocks first, so what a hog leaves is the largest
	 * blocks, in front or in regions behind that could not be parked:
	 * more hogs, each as large as what is still free in front, until
	 * fewer than two pageblocks' worth are.
	 */
	front0 = free_below(&self->rpm, f);
	for (nhogs = 0; nparked && nhogs < (int)ARRAY_SIZE(hogs) && front0 > (int64_t)(2 * pb);
	     nhogs++) {
		avail_kb = meminfo_kb("MemFree");
		bytes = nhogs ? (uint64_t)front0 * page_size() : (uint64_t)avail_kb * 1024;
		bytes = u64min(bytes, avail_kb > 24 * 1024 ? (avail_kb - 24 * 1024) * 1024 : 0);
		if (!bytes)
			break;
		ASSERT_EQ(0, hog_start(&hogs[nhogs], bytes, -1));
		for (waited = 0; hog_poll(&hogs[nhogs], 1000) == 0 && waited < 120; waited++)
			;
		if (!hogs[nhogs].done) {
			TH_LOG("hog %d of %" PRIu64 " bytes (MemFree %" PRId64 " kB) died: %#x",
			       nhogs, bytes, avail_kb, hog_stop(&hogs[nhogs]));
			break;
		}
		front0 = free_below(&self->rpm, f);
	}
	for (i = 0; i < nparked; i++)
		rpm_unpark(&self->rpm, parked[i], &ack);
	if (!nparked) {
		param_set(FRONT_BLOCKS_PARAM, old_blocks);
		write_text(BIAS_PARAM, old_bias);
		ASSERT_LT(0, nparked) TH_LOG("no region behind region %u could be parked", f);
	}
	front0 = free_below(&self->rpm, f);
	moved0 = param_get(FRONT_MOVED_PARAM);

	/* the bias with its keeper */
	snprintf(cmd, sizeof(cmd), "%u", f);
	ASSERT_EQ(0, write_text(FRONTIER_PARAM, cmd));
	ASSERT_EQ(0, write_text(BIAS_PARAM, "1"));
	sleep_ms(3000);
	front1 = free_below(&self->rpm, f);

	/*
	 * Unmovable memory, a pageblock at a time, 16 pageblocks more than
	 * were free in front (what hogs leave can be free pages of unmovable
	 * pageblocks): it must land in front, so the keeper must move pages.
	 */
	steps = u64min(64, (uint64_t)u64max(front0, 0) / pb + 16);
	want = steps * pb;
	err = regions_dump(&self->rpm, true, &before, &ack);
	if (!err)
		err = alloc_test_steps(-1, pb, steps, 250);
	moved1 = param_get(FRONT_MOVED_PARAM);
	EXPECT_EQ(0, alloc_test_state(&held, &failed));
	err = err ? err : regions_dump(&self->rpm, true, &after, &ack);

	alloc_test_free_behind(old_bias, old_frontier);
	for (i = 0; i < nhogs; i++)
		hog_stop(&hogs[i]);
	param_set(FRONT_BLOCKS_PARAM, old_blocks);
	ASSERT_EQ(0, err) TH_LOG("allocating or dumping: %s", strerror(-err));

	TH_LOG("frontier region %u, %d regions parked behind it, %d hogs; free in front %"
	       PRId64 " -> %" PRId64 " pages, keeper moved %" PRIu64 " pages",
	       f, nparked, nhogs, front0, front1, moved1 - moved0);
	EXPECT_LT(moved0, moved1) TH_LOG("the keeper moved nothing");
	EXPECT_EQ(want, held) TH_LOG("held %" PRIu64 " of %" PRIu64 ", failed %" PRIu64,
				     held, want, failed);
	above_before = kernel_pages_from(&before, &before, f);
	above_after = kernel_pages_from(&after, &before, f);
	landed_above = above_after > above_before ? above_after - above_before : 0;
	TH_LOG("%" PRIu64 " unmovable pages allocated, kernel pages in regions behind the frontier that held none %"
	       PRIu64 " -> %" PRIu64, want, above_before, above_after);
	EXPECT_GE(want / 4, landed_above)
		TH_LOG("%" PRIu64 " of %" PRIu64 " unmovable pages landed at or above the frontier",
		       landed_above, want);
	regions_free(&before);
	regions_free(&after);
}

/*
 * What a failing placement test needs to be explained: per region of
 * node @nid, whether it held kernel pages before, and its free, slab,
 * page-table, other kernel, anonymous and file pages before -> after.
 */
static void log_node_regions(struct __test_metadata *_metadata, const struct regions *before,
			     const struct regions *after, uint32_t nid)
{
	int i;

	for (i = 0; i < after->n; i++) {
		const struct rpm_region *a = &after->r[i], *b = region_find(before, a->id);
		const uint64_t *d = a->detail, *e;

		if (a->node != nid || !b)
			continue;
		e = b->detail;
		TH_LOG("region %u%s: free %" PRIu64 " -> %" PRIu64 ", slab %" PRIu64 " -> %"
		       PRIu64 ", page tables %" PRIu64 " -> %" PRIu64 ", other kernel %" PRIu64
		       " -> %" PRIu64 ", anon %" PRIu64 " -> %" PRIu64 ", file %" PRIu64 " -> %"
		       PRIu64, a->id, region_has_kernel_pages(b) ? " (kernel pages)" : "",
		       b->free, a->free, e[REGIONPM_A_DETAIL_SLAB], d[REGIONPM_A_DETAIL_SLAB],
		       e[REGIONPM_A_DETAIL_PAGE_TABLE], d[REGIONPM_A_DETAIL_PAGE_TABLE],
		       e[REGIONPM_A_DETAIL_KERNEL_OTHER], d[REGIONPM_A_DETAIL_KERNEL_OTHER],
		       e[REGIONPM_A_DETAIL_ANON], d[REGIONPM_A_DETAIL_ANON],
		       e[REGIONPM_A_DETAIL_FILE_CLEAN] + e[REGIONPM_A_DETAIL_FILE_DIRTY],
		       d[REGIONPM_A_DETAIL_FILE_CLEAN] + d[REGIONPM_A_DETAIL_FILE_DIRTY]);
	}
}

/*
 * Issue 10: with the automatic frontier, regions that can never be emptied
 * anyway -- those holding reserved pages (the memmap, the kernel) or
 * unmovable pageblocks -- take new unmovable memory first, wherever they
 * lie; the lowest free pageblock in front of the frontier comes only after
 * them.  In a 2 GiB guest the memmap is in the highest region, behind the
 * frontier: unmovable pages must land there (or in another such region)
 * rather than start a region that held none.  Per node: node 0's pinned
 * regions, and pages from node 0 only.
 */
TEST_F_TIMEOUT(regionpm, bias_fills_pinned_regions_first, 300)
{
	uint64_t pb = read_pageblock_pages(), free_pinned = 0, want, held = 0, failed = 0;
	uint64_t outside = 0, steps;
	char old_bias[16] = "", old_frontier[16] = "";
	struct regions before = { 0 }, after = { 0 };
	int64_t moved0, moved;
	struct rpm_ack ack;
	int i, err, npinned = 0;

	if (!alloc_test_ready())
		SKIP(return, "no %s (CONFIG_REGIONPM_ALLOC_TEST)", ALLOC_TEST);
	ASSERT_LT(0, read_text(BIAS_PARAM, old_bias, sizeof(old_bias)));
	ASSERT_LT(0, read_text(FRONTIER_PARAM, old_frontier, sizeof(old_frontier)));
	ASSERT_EQ(0, write_text(FRONTIER_PARAM, "-1"));
	ASSERT_EQ(0, write_text(BIAS_PARAM, "1"));
	sleep_ms(1500);
	/*
	 * Pinned as the kernel counts it: regions with reserved, slab or
	 * page-table pages (their pageblocks are unmovable or unmanaged).  Not
	 * "other kernel" pages alone: pages on per-CPU free lists look like
	 * that in the breakdown (after the keeper test's hogs exited, a
	 * pageblock of them sat in each of two regions the kernel rightly did
	 * not count as pinned, and their 58,873 free pages were asked for in
	 * vain), and a few pages in flight in a movable pageblock (8 pages in
	 * an otherwise free region, after the drain) pin nothing either.
	 */
	ASSERT_EQ(0, write_text(ALLOC_TEST, "drain"));
	err = regions_dump(&self->rpm, true, &before, &ack);
	ASSERT_EQ(0, err) TH_LOG("detail dump: %s \"%s\"", strerror(-err), ack.msg);
	/*
	 * Node 0's pinned regions, allocations from node 0: unmovable memory
	 * is kept together per node (each node has its own frontier), and
	 * the local node is the test's CPU's (on two nodes, node 1's pinned
	 * regions were full and its pages went to its own lowest region).
	 */
	for (i = 0; i < before.n; i++) {
		if (before.r[i].node != 0 || !region_has_pinning_pages(&before.r[i]))
			continue;
		npinned++;
		free_pinned += before.r[i].free;
	}
	/*
	 * Two thirds of what is free there, so more than the lowest of them
	 * has free (in a 2 GiB guest: region 0, below the frontier), which
	 * the lowest-first claim alone would fill before spilling into the
	 * regions above it; not all of it, as part of it is scattered in
	 * pageblocks the keeper cannot empty.
	 */
	steps = u64min(free_pinned * 2 / 3, 65536) / pb;
	want = steps * pb;
	if (steps < 4) {
		write_text(BIAS_PARAM, old_bias);
		write_text(FRONTIER_PARAM, old_frontier);
		regions_free(&before);
		SKIP(return, "only %" PRIu64 " pages free in %d regions with reserved, slab or "
		     "page-table pages", free_pinned, npinned);
	}
	moved0 = param_get(FRONT_MOVED_PARAM);
	if (!err)
		err = alloc_test_steps(0, pb, steps, 250);
	moved = param_get(FRONT_MOVED_PARAM) - moved0;
	EXPECT_EQ(0, alloc_test_state(&held, &failed));
	err = err ? err : regions_dump(&self->rpm, true, &after, &ack);
	alloc_test_free_behind(old_bias, old_frontier);
	ASSERT_EQ(0, err) TH_LOG("allocating or dumping: %s", strerror(-err));
	EXPECT_EQ(want, held) TH_LOG("held %" PRIu64 " of %" PRIu64 ", failed %" PRIu64,
				     held, want, failed);

	for (i = 0; i < after.n; i++) {
		const struct rpm_region *b = region_find(&before, after.r[i].id);
		uint64_t was, now = after.r[i].detail[REGIONPM_A_DETAIL_KERNEL_OTHER];

		if (!b || region_has_pinning_pages(b))
			continue;
		was = b->detail[REGIONPM_A_DETAIL_KERNEL_OTHER];
		if (now > was) {
			TH_LOG("region %u, which held no reserved, slab or page-table page, got %"
			       PRIu64 " kernel pages", after.r[i].id, now - was);
			outside += now - was;
		}
	}
	TH_LOG("%d regions of node 0 with reserved, slab or page-table pages, %" PRIu64
	       " pages free in them; %" PRIu64 " unmovable pages allocated, %" PRIu64
	       " landed elsewhere; the keeper moved %" PRId64 " pages",
	       npinned, free_pinned, want, outside, moved);
	/* slack: per-CPU lists, page tables of the test itself */
	EXPECT_GE(want / 8, outside);
	if (outside > want / 8)
		log_node_regions(_metadata, &before, &after, 0);
	regions_free(&before);
	regions_free(&after);
}

/* Kernel pages (not slab, not page tables) region @id gained from @ref to @rs. */
static uint64_t kernel_pages_gained(const struct regions *rs, const struct regions *ref,
				    uint32_t id)
{
	const struct rpm_region *a = region_find(rs, id), *b = region_find(ref, id);
	uint64_t now, was;

	if (!a || !b)
		return 0;
	now = a->detail[REGIONPM_A_DETAIL_KERNEL_OTHER];
	was = b->detail[REGIONPM_A_DETAIL_KERNEL_OTHER];
	return now > was ? now - was : 0;
}

/*
 * Kernel pages that regions from @f on gained from @ref to @rs; if @rs2 and
 * @ref2 are given, only in the regions that held no kernel pages in @ref2
 * and gained at least @min from @ref2 to @rs2.
 */
static uint64_t kernel_pages_gained_from(const struct regions *rs, const struct regions *ref,
					 uint32_t f, const struct regions *rs2,
					 const struct regions *ref2, uint64_t min)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < rs->n; i++) {
		uint32_t id = rs->r[i].id;

		const struct rpm_region *r2 = rs2 ? region_find(ref2, id) : NULL;

		if (id < f || (rs2 && (!r2 || region_has_kernel_pages(r2) ||
				       kernel_pages_gained(rs2, ref2, id) < min)))
			continue;
		n += kernel_pages_gained(rs, ref, id);
	}
	return n;
}

/*
 * A pageblock keeps its type when the unmovable memory in it is freed, and
 * the allocator takes a free block of the type asked for before it claims
 * one: with the bias on, free unmovable pageblocks behind the frontier are
 * made movable (within a second), so that the next unmovable allocations
 * are claimed in front instead of landing there.  The shape: with the bias
 * off, the lowest regions with free memory held (nothing is allocated from
 * them), blocks of the largest order taken above them for unmovable memory
 * and freed again (free unmovable blocks), the holds ended.  Then a fixed
 * frontier just above the held regions, the bias on, and unmovable pages
 * asked for: they must land in front, where the held regions' free memory
 * is, not in the free unmovable blocks behind it.  Before the retyping
 * (2 GiB guest): 9,610 of 8,192 landed in the regions of the freed blocks
 * (the per-CPU lists take batches) and none of the 64 blocks was retyped;
 * after the other bias tests, 7,125 landed behind the frontier, in
 * regions that held other kernel pages already (not counted), and the
 * retyping checks failed.  After: 0 (default kernel) and 429 (debug kernel,
 * the bias on since boot) landed there.  Before bias_claims_whole_blocks,
 * whose freed half blocks stay unmovable.
 */
TEST_F_TIMEOUT(regionpm, bias_retypes_free_blocks_behind_front, 300)
{
	char old_bias[16] = "", old_frontier[16] = "", cmd[64];
	struct regions rs = { 0 }, base = { 0 }, mid = { 0 }, before = { 0 }, after = { 0 };
	uint64_t want = 8192, held = 0, failed = 0, nblocks, free_front = 0, free_behind = 0;
	uint64_t landed, clean, behind = 0;
	int64_t unmov_freed = -1, unmov_left, retyped0, retyped1;
	int max = buddy_max_order(), i, err, nheld = 0;
	uint32_t *ids = NULL, f = 0;
	struct rpm_region r;
	struct rpm_ack ack;

	run_on_node0();
	if (!alloc_test_ready())
		SKIP(return, "no %s (CONFIG_REGIONPM_ALLOC_TEST)", ALLOC_TEST);
	ASSERT_LT(0, max) TH_LOG("no largest order in /proc/buddyinfo");
	ASSERT_LT(0, read_text(BIAS_PARAM, old_bias, sizeof(old_bias)));
	ASSERT_LT(0, read_text(FRONTIER_PARAM, old_frontier, sizeof(old_frontier)));
	write_text(ALLOC_TEST, "free");
	ASSERT_EQ(0, write_text(BIAS_PARAM, "0"));
	err = regions_dump(&self->rpm, false, &rs, &ack);
	ASSERT_EQ(0, err) TH_LOG("dump: %s \"%s\"", strerror(-err), ack.msg);
	ids = calloc(rs.n + 1, sizeof(*ids));
	ASSERT_NE(NULL, ids);
	/* Hold the lowest regions until 8 x want pages are free in them. */
	for (i = 0; i < rs.n; i++) {
		if (free_front >= 8 * want) {
			free_behind += rs.r[i].free;
			continue;
		}
		f = rs.r[i].id + 1;
		if (!rs.r[i].free || rpm_hold(&self->rpm, rs.r[i].id, &r, &ack))
			continue;
		ids[nheld++] = rs.r[i].id;
		free_front += rs.r[i].free;
	}
	regions_free(&rs);
	nblocks = u64min(64, (free_behind / 4) >> max);
	TH_LOG("%d regions held below region %u, %" PRIu64 " pages free in them, %" PRIu64
	       " free above; %" PRIu64 " blocks of order %d", nheld, f, free_front, free_behind,
	       nblocks, max);
	if (free_front >= 8 * want && nblocks * (1ULL << max) >= 2 * want) {
		snprintf(cmd, sizeof(cmd), "block %d %" PRIu64, max, nblocks);
		err = regions_dump(&self->rpm, true, &base, &ack);
		err = err ? err : write_text(ALLOC_TEST, cmd);
		err = err ? err : regions_dump(&self->rpm, true, &mid, &ack);
		write_text(ALLOC_TEST, "free");
		/* The blocks' pages that lay behind the frontier-to-be. */
		behind = kernel_pages_gained_from(&mid, &base, f, NULL, NULL, 0);
		sleep_ms(200);
		unmov_freed = pagetype_free_blocks("Unmovable", max);
	}
	for (i = 0; i < nheld; i++)
		rpm_unpark(&self->rpm, ids[i], &ack);
	free(ids);
	if (unmov_freed < 0 || err) {
		write_text(BIAS_PARAM, old_bias);
		ASSERT_EQ(0, err) TH_LOG("taking blocks: %s", strerror(-err));
		ASSERT_LE(0, unmov_freed) TH_LOG("too little free memory for the test's shape");
	}

	snprintf(cmd, sizeof(cmd), "%u", f);
	ASSERT_EQ(0, write_text(FRONTIER_PARAM, cmd));
	retyped0 = param_get(RETYPED_PARAM);
	ASSERT_EQ(0, write_text(BIAS_PARAM, "1"));
	sleep_ms(2500);
	retyped1 = param_get(RETYPED_PARAM);
	unmov_left = pagetype_free_blocks("Unmovable", max);
	err = regions_dump(&self->rpm, true, &before, &ack);
	snprintf(cmd, sizeof(cmd), "any -1 %" PRIu64, want);
	err = err ? err : write_text(ALLOC_TEST, cmd);
	EXPECT_EQ(0, alloc_test_state(&held, &failed));
	err = err ? err : regions_dump(&self->rpm, true, &after, &ack);
	alloc_test_free_behind(old_bias, old_frontier);
	ASSERT_EQ(0, err) TH_LOG("allocating or dumping: %s \"%s\"", strerror(-err), ack.msg);
	EXPECT_EQ(want, held) TH_LOG("held %" PRIu64 " of %" PRIu64 ", failed %" PRIu64,
				     held, want, failed);

	/*
	 * Only where the freed blocks lay in regions that held nothing else
	 * of the kernel's: partly free unmovable pageblocks behind the
	 * frontier (slab of earlier tests, of a boot with the bias on) are
	 * not what this tests.  After other tests there may be no such region;
	 * the retyping checks below still hold then.
	 */
	clean = kernel_pages_gained_from(&mid, &base, f, &mid, &base, 1ULL << max);
	landed = kernel_pages_gained_from(&after, &before, f, &mid, &base, 1ULL << max);
	for (i = 0; i < after.n; i++) {
		uint32_t id = after.r[i].id;
		uint64_t g = kernel_pages_gained(&after, &before, id);

		if (id >= f && g >= 64)
			TH_LOG("region %u gained %" PRIu64 " kernel pages (%" PRIu64
			       " of the freed blocks lay there)", id, g,
			       kernel_pages_gained(&mid, &base, id));
	}
	TH_LOG("%" PRIu64 " pages of the blocks lay behind region %u; free unmovable order-%d blocks %"
	       PRId64 " after they were freed, %" PRId64 " with the bias on (%" PRId64
	       " pageblocks retyped); kernel pages gained where %" PRIu64
	       " of them lay in regions with no other kernel pages: %" PRIu64
	       ", at or above region %u: %" PRIu64, behind, f, max, unmov_freed, unmov_left,
	       retyped1 - retyped0, clean, landed, f,
	       kernel_pages_gained_from(&after, &before, f, NULL, NULL, 0));
	/* The shape the test needs: most blocks behind the frontier. */
	EXPECT_LE(nblocks << max, 2 * behind);
	/* Those are movable now (a few may have been split meanwhile). */
	EXPECT_LE(behind * 3 / 4, (uint64_t)(retyped1 - retyped0) * self->pageblock);
	EXPECT_GE(unmov_freed - (int64_t)((behind >> max) * 3 / 4), unmov_left);
	/* slack: per-CPU lists */
	EXPECT_GE(want / 10, landed)
		TH_LOG("%" PRIu64 " of %" PRIu64 " unmovable pages landed in the freed blocks' regions",
		       landed, want);
	regions_free(&base);
	regions_free(&mid);
	regions_free(&before);
	regions_free(&after);
}

/*
 * An unmovable claim for a block larger than a pageblock, with the bias on,
 * gets a block of the size it asked for.  Blocks of the largest order are
 * taken, their upper halves freed (free pageblocks next to allocated ones,
 * in the regions unmovable memory pins, where the bias looks first), and
 * more such blocks taken.  The bias's lowest-free-pageblock search once
 * returned the first free pageblock whatever its order, and the allocator
 * handed out half a block as a whole one: the caller wrote into free
 * memory (the debug kernel saw it at boot as "Bad page state" in
 * alloc_large_system_hash()).  The test interface checks every block it
 * gets: aligned, no page still free, no page in a block it holds.
 * After the other bias tests: the blocks it frees stay free unmovable
 * pageblocks, which the next unmovable allocations take first (in the
 * debug kernel's full run, bias_fills_pinned_regions_first after it saw
 * 35,297 of its pages land there).
 */
TEST_F_TIMEOUT(regionpm, bias_claims_whole_blocks, 300)
{
	char old_bias[16] = "", cmd[64];
	int64_t bad_before, bad_after, halves_before, halves_after;
	uint64_t held = 0, failed = 0, need;
	int max = buddy_max_order(), pb_order = 0;

	if (!alloc_test_ready())
		SKIP(return, "no %s (CONFIG_REGIONPM_ALLOC_TEST)", ALLOC_TEST);
	while ((1ULL << pb_order) < self->pageblock)
		pb_order++;
	ASSERT_LT(0, max) TH_LOG("no largest order in /proc/buddyinfo");
	if (max <= pb_order)
		SKIP(return, "the largest order (%d) is a pageblock: no claim for more", max);
	/* 32 blocks, halved, and 64 more: 128 halves at most. */
	need = (128ULL << (max - 1)) * self->pgsz;
	if (meminfo_kb("MemAvailable") < (int64_t)(2 * need / 1024))
		SKIP(return, "less than %" PRIu64 " MiB available", 2 * need >> 20);
	write_text(ALLOC_TEST, "free");
	bad_before = alloc_test_bad();
	ASSERT_LE(0, bad_before);
	ASSERT_LT(0, read_text(BIAS_PARAM, old_bias, sizeof(old_bias)));
	ASSERT_EQ(0, write_text(BIAS_PARAM, "1"));

	snprintf(cmd, sizeof(cmd), "block %d 32", max);
	EXPECT_EQ(0, write_text(ALLOC_TEST, cmd));
	halves_before = pagetype_free_blocks("Unmovable", max - 1);
	EXPECT_EQ(0, write_text(ALLOC_TEST, "halve"));
	halves_after = pagetype_free_blocks("Unmovable", max - 1);
	/* The shape the test needs: free unmovable half blocks (upper halves). */
	EXPECT_LE(halves_before + 16, halves_after)
		TH_LOG("free unmovable order-%d blocks %" PRId64 " -> %" PRId64 " after halving",
		       max - 1, halves_before, halves_after);
	/* The frontier work (every second) now counts their regions as pinned. */
	sleep_ms(2500);
	snprintf(cmd, sizeof(cmd), "block %d 64", max);
	EXPECT_EQ(0, write_text(ALLOC_TEST, cmd));
	EXPECT_EQ(0, alloc_test_state(&held, &failed));
	bad_after = alloc_test_bad();
	write_text(ALLOC_TEST, "free");
	write_text(BIAS_PARAM, old_bias);

	TH_LOG("order %d: held %" PRIu64 " pages after halving and asking again, %" PRIu64
	       " failed, bad blocks %" PRId64 " -> %" PRId64, max, held, failed,
	       bad_before, bad_after);
	EXPECT_EQ(bad_before, bad_after)
		TH_LOG("the allocator handed out blocks smaller than asked (dmesg: regionpm-alloc-test)");
	/* 32 halves and at least half of the 64 new blocks: the claims ran. */
	EXPECT_LE((uint64_t)(32 + 32 * 2) << (max - 1), held);
}

/*
 * Booted with regionpm.bias=1: what the kernel allocated before regionpm
 * started came from the top of each zone, where memblock put the memmap
 * (boot memory went to the head of the free lists), and the slab that
 * followed filled the regions with reserved pages first.  So, soon after
 * boot, no region without reserved pages holds slab or page tables.
 * run-checks runs it alone in a fresh 6 GiB guest (kernel-bias-boot): with
 * boot memory at the tail, the lowest region of ZONE_NORMAL, above 4 GiB,
 * held 1,288 slab and page-table pages there.  In a longer run of the
 * suite, the slab of earlier tests may have outgrown those regions.  A
 * kernel with CONFIG_DEFERRED_STRUCT_PAGE_INIT (not the test kernel) takes
 * its earliest pages from that region whatever the order and fails it.
 */
TEST_F(regionpm, bias_at_boot_keeps_kernel_pages_with_reserved)
{
	struct regions rs = { 0 };
	uint64_t stray = 0;
	struct rpm_ack ack;
	int i, err, nres = 0;

	if (!kernel_cmdline_has("regionpm.bias=1"))
		SKIP(return, "booted without regionpm.bias=1: nothing steered the boot");
	err = regions_dump(&self->rpm, true, &rs, &ack);
	ASSERT_EQ(0, err) TH_LOG("detail dump: %s \"%s\"", strerror(-err), ack.msg);
	for (i = 0; i < rs.n; i++) {
		const struct rpm_region *r = &rs.r[i];
		uint64_t slab = r->detail[REGIONPM_A_DETAIL_SLAB];
		uint64_t pt = r->detail[REGIONPM_A_DETAIL_PAGE_TABLE];

		if (r->detail[REGIONPM_A_DETAIL_RESERVED]) {
			nres++;
			continue;
		}
		if (!slab && !pt)
			continue;
		TH_LOG("region %u (%s, no reserved page) holds %" PRIu64 " slab and %" PRIu64
		       " page-table pages", r->id, r->nzones ? r->zones[0] : "?", slab, pt);
		stray += slab + pt;
	}
	TH_LOG("%d regions with reserved pages; %" PRIu64 " slab and page-table pages elsewhere",
	       nres, stray);
	EXPECT_EQ((uint64_t)0, stray);
	regions_free(&rs);
}

/*
 * regionpm.bottom_up=1 (with movablecore=): memblock's allocations (the
 * memmap above all) and the early slab lie in the lowest regions of each
 * node, so no region of ZONE_MOVABLE holds a reserved, slab or page-table
 * page, and per node the regions that do are at most the ones their pages
 * fill plus one.  Top-down, the memmap pinned the top region of
 * ZONE_MOVABLE and the early slab the top of DMA32: three regions on a
 * 2 GiB guest with movablecore=50%, where one holds it all.
 */
/*
 * Pages of [@pfn, @pfn + @n) that /proc/iomem does not list as System RAM
 * (firmware tables, holes): their struct pages are reserved too, but
 * no placement of the kernel's could have put them elsewhere.  -1 if
 * /proc/iomem cannot be read.
 */
static int64_t pages_outside_ram(uint64_t pfn, uint64_t n)
{
	uint64_t ram = 0, end = pfn + n;
	char line[256];
	FILE *f = fopen("/proc/iomem", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		uint64_t lo, hi;

		/* Top-level entries only: nested ones lie inside these. */
		if (line[0] == ' ' || !strstr(line, " : System RAM") ||
		    sscanf(line, "%llx-%llx", &a, &b) != 2)
			continue;
		lo = a / 4096 > pfn ? a / 4096 : pfn;
		hi = (b + 1) / 4096 < end ? (b + 1) / 4096 : end;
		if (hi > lo)
			ram += hi - lo;
	}
	fclose(f);
	return (int64_t)(n - ram);
}

TEST_F(regionpm, bottom_up_at_boot_keeps_unmovable_low)
{
	uint64_t pages[RPM_MAX_NODES] = { 0 }, rp = 0;
	int holders[RPM_MAX_NODES] = { 0 }, in_movable = 0, n;
	struct regions rs = { 0 };
	struct rpm_ack ack;
	int i, err;

	if (!kernel_cmdline_has("regionpm.bottom_up=1"))
		SKIP(return, "booted without regionpm.bottom_up=1");
	err = regions_dump(&self->rpm, true, &rs, &ack);
	ASSERT_EQ(0, err) TH_LOG("detail dump: %s \"%s\"", strerror(-err), ack.msg);
	for (i = 0; i < rs.n; i++) {
		const struct rpm_region *r = &rs.r[i];
		int64_t hole = pages_outside_ram(r->start_pfn, r->spanned);
		uint64_t res = r->detail[REGIONPM_A_DETAIL_RESERVED], unmov;

		ASSERT_LE(0, hole) TH_LOG("/proc/iomem: %s", strerror(errno));
		ASSERT_LT(r->node, (uint32_t)RPM_MAX_NODES);
		/* Reserved struct pages of firmware ranges are not boot memory. */
		res = res > (uint64_t)hole ? res - hole : 0;
		unmov = res + r->detail[REGIONPM_A_DETAIL_SLAB] +
			r->detail[REGIONPM_A_DETAIL_PAGE_TABLE];
		rp = r->spanned > rp ? r->spanned : rp;
		if (!unmov)
			continue;
		TH_LOG("region %u (node %u, %s): %" PRIu64 " reserved in RAM, %" PRIu64
		       " slab, %" PRIu64 " page-table pages", r->id, r->node,
		       r->nzones ? r->zones[0] : "?", res,
		       (uint64_t)r->detail[REGIONPM_A_DETAIL_SLAB],
		       (uint64_t)r->detail[REGIONPM_A_DETAIL_PAGE_TABLE]);
		holders[r->node]++;
		pages[r->node] += unmov;
		if (r->nzones == 1 && !strcmp(r->zones[0], "Movable"))
			in_movable++;
	}
	regions_free(&rs);
	ASSERT_NE((uint64_t)0, rp);
	EXPECT_EQ(0, in_movable);
	for (n = 0; n < RPM_MAX_NODES; n++) {
		if (!holders[n])
			continue;
		EXPECT_LE((uint64_t)holders[n], (pages[n] + rp - 1) / rp + 1)
			TH_LOG("node %d: %d regions hold its %" PRIu64 " unmovable pages",
			       n, holders[n], pages[n]);
	}
}

/*
 * Up to @max regions that are completely free and hold no unmovable page,
 * highest first; the emptiest candidates are compacted first if needed.
 */
static int empty_regions(struct __test_metadata *_metadata, FIXTURE_DATA(regionpm) *self,
			 uint32_t *out, int max)
{
	struct regions rs = { 0 };
	struct rpm_compact_res res;
	struct rpm_region r;
	struct rpm_ack ack;
	uint32_t cands[64];
	int ncand, i, n = 0;

	sync();
	write_text("/proc/sys/vm/drop_caches", "3");
	ncand = park_candidates(_metadata, self, &rs, cands, ARRAY_SIZE(cands));
	for (i = 0; i < ncand && n < max; i++) {
		const struct rpm_region *c = region_find(&rs, cands[i]);
		struct compact_req rq = { .id = cands[i], .mode = REGIONPM_COMPACT_MODE_BOTH };

		if (c->managed != c->spanned)
			continue;	/* holes or reserved pages: not a clean twin */
		if (!region_completely_free(c) && rpm_compact(&self->rpm, &rq, &res, &ack))
			continue;
		if (!rpm_region_get(&self->rpm, cands[i], false, &r, &ack) &&
		    region_completely_free(&r))
			out[n++] = cands[i];
	}
	regions_free(&rs);
	return n;
}

/* Allocations, and the anon memory of a process, do not land in a held region. */
TEST_F_TIMEOUT(regionpm, hold_keeps_allocations_out, 600)
{
	struct rpm_region h0, t0, h1, t1, r;
	struct rpm_compact_res res;
	struct rpm_info info;
	struct rpm_event e;
	struct rpm_ack ack;
	struct rpm ev;
	uint32_t ids[2];
	int64_t memfree0, memfree1, left_kb;
	uint64_t bytes, deadline;
	int n, err, done = 0, violations = 0;
	bool got;

	n = empty_regions(_metadata, self, ids, 2);
	if (n < 2)
		SKIP(return, "needs two completely free regions (found %d)", n);
	ASSERT_EQ(0, rpm_events_open(&ev, &ack)) TH_LOG("events listener: %s", ack.msg);
	/*
	 * A compaction of the twin (free: it moves nothing) drains the per-CPU
	 * free lists as the hold will, so MemFree before and after compare
	 * like with like: after tests that freed a lot (hogs) they held
	 * tens of MiB.
	 */
	rpm_compact(&self->rpm, &(struct compact_req){ .id = ids[1], .mode = -1 }, &res, &ack);
	memfree0 = meminfo_kb("MemFree");
	ASSERT_EQ(0, rpm_region_get(&self->rpm, ids[1], false, &t0, &ack));

	err = rpm_hold(&self->rpm, ids[0], &h0, &ack);
	ASSERT_EQ(0, err) TH_LOG("REGION_HOLD %u: %s, extack \"%s\"", ids[0], strerror(-err), ack.msg);
	log_region(_metadata, "held", &h0);
	TH_LOG("held-pages %" PRIu64 ", twin region %u free %" PRIu64, h0.held, ids[1], t0.free);
	EXPECT_EQ(ids[0], h0.id);
	EXPECT_STREQ("held", state_name(h0.state));
	EXPECT_TRUE(HAS(&h0, REGIONPM_A_REGION_OWNER_PORTID));
	EXPECT_EQ(self->rpm.portid, h0.owner) TH_LOG("owner must be the holding socket");
	EXPECT_EQ(h0.spanned, h0.held) TH_LOG("every pageblock of a free region can be isolated");
	EXPECT_EQ(h0.managed, h0.free);
	EXPECT_EQ(0UL, h0.parked);
	ASSERT_EQ(0, rpm_info_get(&self->rpm, &info, &ack));
	EXPECT_LE(h0.held, info.held_pages);
	/*
	 * Isolated free pages are not free for the allocator: MemFree drops.
	 * By a little less than the region: the hold drains the per-CPU free
	 * lists, whose pages then count as free (CI saw 114 of 128 MiB).
	 */
	memfree1 = meminfo_kb("MemFree");
	TH_LOG("MemFree %" PRId64 " -> %" PRId64 " kB", memfree0, memfree1);
	EXPECT_LE(memfree1, memfree0 - (int64_t)(h0.free * self->pgsz / 1024) * 3 / 4);

	/* Allocate all but 96 MiB of what is free: the twin must be used. */
	left_kb = 96 * 1024;
	if (memfree1 < left_kb + (int64_t)(t0.free * self->pgsz / 1024))
		SKIP(goto out, "not enough free memory for the workload");
	bytes = (uint64_t)(memfree1 - left_kb) * 1024;
	TH_LOG("allocating %" PRIu64 " MiB of anonymous memory", bytes / MiB);
	ASSERT_EQ(0, hog_start(&self->hog[0], bytes, -1));
	deadline = now_ms() + HOG_TIMEOUT_MS;
	while (!done && now_ms() < deadline) {
		done = hog_poll(&self->hog[0], 200);
		if (rpm_region_get(&self->rpm, ids[0], false, &r, &ack))
			continue;
		if ((r.state != REGIONPM_REGION_STATE_HELD || r.free < h0.free) && !violations++)
			TH_LOG("while allocating: held region %u is %s with %" PRIu64 " free pages",
			       ids[0], state_name(r.state), r.free);
	}
	EXPECT_EQ(1, done) TH_LOG("allocating did not complete (%s)",
				  done < 0 ? "child died" : "timeout");
	ASSERT_EQ(0, rpm_region_get(&self->rpm, ids[0], false, &h1, &ack));
	ASSERT_EQ(0, rpm_region_get(&self->rpm, ids[1], false, &t1, &ack));
	log_region(_metadata, "held, after", &h1);
	log_region(_metadata, "twin, after", &t1);
	EXPECT_EQ(0, violations) TH_LOG("the held region was released or allocated from");
	EXPECT_STREQ("held", state_name(h1.state));
	EXPECT_EQ(h0.free, h1.free) TH_LOG("pages were allocated from the held region");
	EXPECT_LT(t1.free, t0.free) TH_LOG("the unheld twin was not used: the workload proves nothing");
	hog_stop(&self->hog[0]);

	/* The owner ends the hold with region-unpark. */
	err = rpm_unpark(&self->rpm, ids[0], &ack);
	ASSERT_EQ(0, err) TH_LOG("REGION_UNPARK of a held region: %s, extack \"%s\"",
				 strerror(-err), ack.msg);
	got = wait_release(&ev, ids[0], REGIONPM_RELEASE_REASON_UNPARK, EVENT_WAIT_MS, &e);
	EXPECT_TRUE(got) {
		TH_LOG("no region-release-ntf {id %u, reason unpark}", ids[0]);
		log_events(_metadata, &ev);
	}
	if (got) {
		EXPECT_EQ(h0.held, e.pages) TH_LOG("release event pages vs held-pages");
	}
	ASSERT_EQ(0, rpm_region_get(&self->rpm, ids[0], false, &r, &ack));
	EXPECT_STREQ("active", state_name(r.state));
	EXPECT_EQ(0UL, r.held);
	EXPECT_FALSE(HAS(&r, REGIONPM_A_REGION_OWNER_PORTID));
out:
	rpm_close(&ev);
}

/*
 * Evacuate a held region in budgeted steps with allocations in between:
 * it never gets fuller, and the park that follows needs no compaction.
 */
TEST_F_TIMEOUT(regionpm, hold_compact_then_park, 900)
{
	struct anon_area anon = { 0 };
	struct regions rs = { 0 };
	struct rpm_compact_res res;
	struct rpm_region r, prev;
	struct rpm_ack ack;
	uint32_t cands[16];
	uint64_t managed0, mt0, avail, migrated = 0;
	int ncand, nfiles, i, step, err, refills = 0, parked = -1;

	/* Anon memory and page cache in every region, so there is work to do. */
	ASSERT_EQ(0, make_workdir(self));
	avail = (uint64_t)meminfo_kb("MemAvailable") * 1024;
	nfiles = avail * 25 / 100 / FILL_CHUNK;
	err = fill_anon_and_files(self, &anon, avail * 25 / 100, nfiles);
	ASSERT_EQ(0, err) TH_LOG("filling memory: %s", strerror(-err));
	/* The files just written: their journal pins metadata buffers until a checkpoint. */
	checkpoint_scratch(_metadata);
	err = regions_dump(&self->rpm, true, &rs, &ack);
	ASSERT_EQ(0, err) TH_LOG("dump: %s", ack.msg);
	ncand = pick_candidates(&rs, cands, ARRAY_SIZE(cands), 0, 1024);
	if (!ncand)
		SKIP(goto out, "no region with movable pages and no unmovable one");
	mt0 = memtotal_pages();
	for (i = 0; i < ncand && parked < 0; i++) {
		uint32_t id = cands[i];

		err = rpm_hold(&self->rpm, id, &prev, &ack);
		if (err) {
			TH_LOG("holding region %u: %s \"%s\"", id, strerror(-err), ack.msg);
			continue;
		}
		managed0 = prev.managed;
		log_region(_metadata, "held", &prev);
		for (step = 0; step < 16 && prev.free < prev.managed; step++) {
			struct compact_req rq = {
				.id = id, .mode = REGIONPM_COMPACT_MODE_BOTH,
				.budget = self->region_pages / 8,
			};

			err = rpm_compact(&self->rpm, &rq, &res, &ack);
			EXPECT_EQ(0, err) TH_LOG("compacting held region %u: %s \"%s\"", id,
						 strerror(-err), ack.msg);
			migrated += res.migrated + res.dropped;
			/* Something else allocates meanwhile. */
			ASSERT_EQ(0, hog_start(&self->hog[0], 32 * MiB, 0));
			hog_poll(&self->hog[0], HOG_TIMEOUT_MS);
			hog_stop(&self->hog[0]);
			ASSERT_EQ(0, rpm_region_get(&self->rpm, id, false, &r, &ack));
			EXPECT_STREQ("held", state_name(r.state))
				TH_LOG("region-compact must keep the region held");
			if (r.free < prev.free && !refills++)
				TH_LOG("step %d: free pages of held region %u fell %" PRIu64
				       " -> %" PRIu64, step, id, prev.free, r.free);
			prev = r;
		}
		EXPECT_EQ(0, refills) TH_LOG("a held region was refilled between compactions");
		TH_LOG("region %u: %d compactions moved or dropped %" PRIu64 " pages, %" PRIu64
		       " of %" PRIu64 " free", id, step, migrated, prev.free, prev.managed);
		if (prev.free < prev.managed) {
			TH_LOG("region %u not empty after %d steps (%" PRIu64 " of %" PRIu64
			       " free), next candidate", id, step, prev.free, prev.managed);
			log_refused(_metadata, &self->rpm, id);
			rpm_unpark(&self->rpm, id, &ack);
			continue;
		}
		/* Empty and held: park it without a compaction. */
		err = rpm_park(&self->rpm, id, false, &res, &ack);
		EXPECT_EQ(0, err) TH_LOG("parking the emptied held region %u: %s \"%s\"", id,
					 strerror(-err), ack.msg);
		if (err) {
			rpm_unpark(&self->rpm, id, &ack);
			continue;
		}
		parked = id;
		ASSERT_EQ(0, rpm_region_get(&self->rpm, id, false, &r, &ack));
		log_region(_metadata, "parked", &r);
		EXPECT_STREQ("parked", state_name(r.state));
		EXPECT_EQ(self->rpm.portid, r.owner);
		EXPECT_EQ(managed0, r.parked);
		EXPECT_EQ(0UL, r.held);
		EXPECT_EQ(mt0 - r.parked, memtotal_pages());
		ASSERT_EQ(0, rpm_unpark(&self->rpm, id, &ack));
		ASSERT_EQ(0, rpm_region_get(&self->rpm, id, false, &r, &ack));
		EXPECT_STREQ("active", state_name(r.state));
		EXPECT_EQ(managed0, r.managed);
		EXPECT_EQ(mt0, memtotal_pages());
	}
	EXPECT_LE(0, parked) TH_LOG("no candidate could be emptied while held and parked");

	/* The park flag on a held region: compact and park in one request. */
	for (i = 0; i < ncand; i++) {
		if (rpm_hold(&self->rpm, cands[i], &r, &ack))
			continue;
		err = rpm_park(&self->rpm, cands[i], true, &res, &ack);
		if (err) {
			TH_LOG("park flag on held region %u: %s \"%s\"", cands[i], strerror(-err), ack.msg);
			ASSERT_EQ(0, rpm_region_get(&self->rpm, cands[i], false, &r, &ack));
			EXPECT_STREQ("held", state_name(r.state)) TH_LOG("a failed park must keep the hold");
			rpm_unpark(&self->rpm, cands[i], &ack);
			continue;
		}
		ASSERT_EQ(0, rpm_region_get(&self->rpm, cands[i], false, &r, &ack));
		EXPECT_STREQ("parked", state_name(r.state));
		EXPECT_EQ(0UL, r.held);
		ASSERT_EQ(0, rpm_unpark(&self->rpm, cands[i], &ack));
		break;
	}
	EXPECT_GT(ncand, i) TH_LOG("no held region could be parked with the park flag");
	check_data(_metadata, self, &anon, "clean", nfiles, FILL_CHUNK, 100, "after hold and park");
out:
	if (anon.p)
		munmap(anon.p, anon.len);
	regions_free(&rs);
}

/* Only the owner may use a held region; its socket's close ends the hold. */
TEST_F_TIMEOUT(regionpm, hold_owner_only_and_close_releases, 600)
{
	struct rpm_compact_res res;
	struct compact_req rq = { .mode = REGIONPM_COMPACT_MODE_BOTH, .budget = 512 };
	struct rpm_region r;
	struct rpm_event e;
	struct rpm_ack ack;
	struct rpm a, b, ev;
	uint32_t id;
	int64_t memfree_held, memfree_back;
	int err, ms;
	bool got;

	if (empty_regions(_metadata, self, &id, 1) < 1)
		SKIP(return, "needs a completely free region");
	ASSERT_EQ(0, rpm_events_open(&ev, &ack)) TH_LOG("events listener: %s", ack.msg);
	ASSERT_EQ(0, rpm_open(&a, &ack)) TH_LOG("socket A: %s", ack.msg);
	ASSERT_EQ(0, rpm_open(&b, &ack)) TH_LOG("socket B: %s", ack.msg);
	rq.id = id;

	err = rpm_hold(&a, id, &r, &ack);
	ASSERT_EQ(0, err) TH_LOG("A holds %u: %s \"%s\"", id, strerror(-err), ack.msg);
	EXPECT_EQ(a.portid, r.owner);

	err = rpm_hold(&b, id, &r, &ack);
	EXPECT_EQ(-EBUSY, err) TH_LOG("B holds A's region: %d \"%s\"", err, ack.msg);
	EXPECT_NE(0, ack.msg[0]) TH_LOG("EBUSY without an extack message");
	err = rpm_compact(&b, &rq, &res, &ack);
	EXPECT_EQ(-EBUSY, err) TH_LOG("B compacts A's held region: %d \"%s\"", err, ack.msg);
	EXPECT_NE(0, ack.msg[0]);
	err = rpm_park(&b, id, false, &res, &ack);
	EXPECT_EQ(-EBUSY, err) TH_LOG("B parks A's held region: %d \"%s\"", err, ack.msg);
	err = rpm_park(&b, id, true, &res, &ack);
	EXPECT_EQ(-EBUSY, err) TH_LOG("B parks (park flag) A's held region: %d \"%s\"", err, ack.msg);
	err = rpm_unpark(&b, id, &ack);
	EXPECT_EQ(-EBUSY, err) TH_LOG("B unparks A's held region: %d \"%s\"", err, ack.msg);
	EXPECT_NE(0, ack.msg[0]);

	/* The owner renews and compacts; the region stays held by A. */
	err = rpm_hold(&a, id, &r, &ack);
	EXPECT_EQ(0, err) TH_LOG("A renews: %s \"%s\"", strerror(-err), ack.msg);
	err = rpm_compact(&a, &rq, &res, &ack);
	EXPECT_EQ(0, err) TH_LOG("A compacts its held region: %s \"%s\"", strerror(-err), ack.msg);
	ASSERT_EQ(0, rpm_region_get(&self->rpm, id, false, &r, &ack));
	EXPECT_STREQ("held", state_name(r.state));
	EXPECT_EQ(a.portid, r.owner);
	EXPECT_EQ(r.spanned, r.held);

	memfree_held = meminfo_kb("MemFree");
	rpm_close(&a);
	ms = wait_region_state(&self->rpm, id, REGIONPM_REGION_STATE_ACTIVE, RELEASE_WAIT_MS, &r);
	EXPECT_LE(0, ms) TH_LOG("region %u still %s after its owner socket was closed", id,
				state_name(r.state));
	got = wait_release(&ev, id, REGIONPM_RELEASE_REASON_OWNER_CLOSED, RELEASE_WAIT_MS, &e);
	EXPECT_TRUE(got) {
		TH_LOG("no region-release-ntf {id %u, reason owner-closed}", id);
		log_events(_metadata, &ev);
	}
	memfree_back = meminfo_kb("MemFree");
	TH_LOG("MemFree held %" PRId64 " kB, after close %" PRId64 " kB (region free %" PRIu64 " pages)",
	       memfree_held, memfree_back, r.free);
	EXPECT_GE(memfree_back, memfree_held + (int64_t)(r.free * self->pgsz / 1024) * 9 / 10)
		TH_LOG("MemFree did not get the held free pages back");
	EXPECT_EQ(0UL, r.held);

	/* B may hold it now. */
	err = rpm_hold(&b, id, &r, &ack);
	EXPECT_EQ(0, err) TH_LOG("B holds the released region: %s \"%s\"", strerror(-err), ack.msg);
	rpm_close(&b);
	rpm_close(&ev);
}

/* A hold that is not renewed ends by itself after hold_timeout_ms. */
TEST_F_TIMEOUT(regionpm, hold_timeout_releases, 300)
{
	struct rpm_region r;
	struct rpm_event e;
	struct rpm_ack ack;
	struct rpm ev;
	int64_t saved;
	uint64_t t0, waited;
	uint32_t id;
	int err;
	bool got;

	saved = param_get(HOLD_TIMEOUT_PARAM);
	ASSERT_LT(0, saved) TH_LOG("no %s", HOLD_TIMEOUT_PARAM);
	EXPECT_EQ(60000, saved) TH_LOG("default hold_timeout_ms");
	EXPECT_NE(0, param_set(HOLD_TIMEOUT_PARAM, 0)) TH_LOG("hold_timeout_ms=0 must be refused");
	EXPECT_EQ(saved, param_get(HOLD_TIMEOUT_PARAM));
	if (empty_regions(_metadata, self, &id, 1) < 1)
		SKIP(return, "needs a completely free region");
	ASSERT_EQ(0, rpm_events_open(&ev, &ack)) TH_LOG("events listener: %s", ack.msg);

	/* A shorter timeout applies to a hold taken before the change. */
	err = rpm_hold(&self->rpm, id, &r, &ack);
	ASSERT_EQ(0, err) TH_LOG("hold %u: %s \"%s\"", id, strerror(-err), ack.msg);
	t0 = now_ms();
	ASSERT_EQ(0, param_set(HOLD_TIMEOUT_PARAM, 3000));
	sleep_ms(1500);
	err = rpm_hold(&self->rpm, id, &r, &ack);	/* renew: expires at 1.5 + 3 s */
	EXPECT_EQ(0, err) TH_LOG("renewing: %s \"%s\"", strerror(-err), ack.msg);
	sleep_ms(2000);
	ASSERT_EQ(0, rpm_region_get(&self->rpm, id, false, &r, &ack));
	EXPECT_STREQ("held", state_name(r.state)) TH_LOG("the renewal did not restart the timeout");
	got = wait_release(&ev, id, REGIONPM_RELEASE_REASON_TIMEOUT, 10000, &e);
	waited = now_ms() - t0;
	param_set(HOLD_TIMEOUT_PARAM, saved);
	EXPECT_TRUE(got) {
		TH_LOG("no region-release-ntf {id %u, reason timeout}", id);
		log_events(_metadata, &ev);
	}
	TH_LOG("released %" PRIu64 " ms after the hold (renewed at 1500 ms, timeout 3000 ms)", waited);
	EXPECT_LE(4400UL, waited) TH_LOG("released before the renewed hold expired");
	if (got)
		EXPECT_EQ(r.held, e.pages);
	ASSERT_EQ(0, rpm_region_get(&self->rpm, id, false, &r, &ack));
	EXPECT_STREQ("active", state_name(r.state));
	EXPECT_EQ(0UL, r.held);
	EXPECT_EQ(saved, param_get(HOLD_TIMEOUT_PARAM));
	rpm_close(&ev);
}

/*
 * Memory offline of a block whose region is held: offline_pages() ends
 * the hold before it isolates the block (reason hotplug), where the
 * isolation used to fail with EBUSY on the held pageblocks for as long as
 * the hold was renewed.  Online again, the region is active and unheld.
 */
TEST_F_TIMEOUT(regionpm, offline_ends_hold, 300)
{
	struct rpm_region r, h;
	struct rpm_event e;
	struct rpm_ack ack;
	struct rpm ev;
	uint32_t ids[8];
	char dir[128];
	uint64_t mt0, ms;
	int n, i, err = -ENOENT;
	bool got;

	n = empty_regions(_metadata, self, ids, ARRAY_SIZE(ids));
	for (i = 0; i < n && err; i++) {
		ASSERT_EQ(0, rpm_region_get(&self->rpm, ids[i], false, &r, &ack));
		err = memory_block_of(self, &r, dir, sizeof(dir));
	}
	if (err == -EINVAL)
		SKIP(return, "memory blocks and regions differ in size");
	if (err)
		SKIP(return, "needs a completely free region with a memory block (found %d free)", n);
	ASSERT_EQ(0, rpm_events_open(&ev, &ack)) TH_LOG("events listener: %s", ack.msg);
	mt0 = memtotal_pages();

	err = rpm_hold(&self->rpm, r.id, &h, &ack);
	ASSERT_EQ(0, err) TH_LOG("hold %u: %s \"%s\"", r.id, strerror(-err), ack.msg);
	ASSERT_STREQ("held", state_name(h.state));
	ASSERT_LT(0UL, h.held);
	TH_LOG("offlining %s while region %u is held (%" PRIu64 " pages)", dir, r.id, h.held);
	err = set_block_state(dir, "offline", OFFLINE_BOUND_S, &ms);
	EXPECT_EQ(0, err) TH_LOG("offlining %s with region %u held: %s", dir, r.id,
				 strerror(-err));
	got = wait_release(&ev, r.id, REGIONPM_RELEASE_REASON_HOTPLUG, EVENT_WAIT_MS, &e);
	EXPECT_TRUE(got) {
		TH_LOG("no region-release-ntf {id %u, reason hotplug}", r.id);
		log_events(_metadata, &ev);
	}
	if (got)
		EXPECT_EQ(h.held, e.pages) TH_LOG("release event pages vs held-pages");
	if (!err) {
		err = set_block_state(dir, "online", OFFLINE_BOUND_S, &ms);
		ASSERT_EQ(0, err) TH_LOG("onlining %s again: %s", dir, strerror(-err));
	} else {
		rpm_unpark(&self->rpm, r.id, &ack);
	}
	ASSERT_EQ(0, rpm_region_get(&self->rpm, r.id, false, &r, &ack));
	EXPECT_STREQ("active", state_name(r.state));
	EXPECT_EQ(0UL, r.held);
	EXPECT_FALSE(HAS(&r, REGIONPM_A_REGION_OWNER_PORTID));
	EXPECT_EQ(mt0, memtotal_pages()) TH_LOG("MemTotal not back after offline and online");
	rpm_close(&ev);
}

/*
 * The lowmem reserves follow parked memory as they follow memory hotplug:
 * a zone's protection against allocations for the zones above it is their
 * managed pages over its lowmem_reserve_ratio.  Left at their old values,
 * with ZONE_MOVABLE mostly parked, ZONE_NORMAL kept a region's worth free
 * that movable allocations could not use and regionpm could not park.
 */
#define ZP_MAX_ZONES	8

struct zone_prot {
	int node, idx;
	char name[16];
	int64_t managed, prot[ZP_MAX_ZONES];
};

/* Every zone of /proc/zoneinfo, populated or not, in index order per node. */
static int read_zone_prot(struct zone_prot *z, int max)
{
	char line[512], name[16];
	int n = 0, node = -1, cur, i;
	FILE *f = fopen("/proc/zoneinfo", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " ");
		long long v;

		if (sscanf(line, "Node %d, zone %15s", &cur, name) == 2) {
			if (n == max)
				break;
			z[n] = (struct zone_prot){
				.node = cur, .idx = n && cur == node ? z[n - 1].idx + 1 : 0,
			};
			snprintf(z[n].name, sizeof(z[n].name), "%s", name);
			node = cur;
			n++;
			continue;
		}
		if (!n)
			continue;
		if (!strncmp(s, "managed ", 8) && sscanf(s, "managed %lld", &v) == 1) {
			z[n - 1].managed = v;
		} else if (!strncmp(s, "protection: (", 13)) {
			char *p = s + 13;

			for (i = 0; i < ZP_MAX_ZONES && *p && *p != ')'; i++) {
				z[n - 1].prot[i] = strtoll(p, &p, 10);
				p += strspn(p, ", ");
			}
		}
	}
	fclose(f);
	return n;
}

static int read_lowmem_ratios(int64_t *ratio, int max)
{
	char buf[256], *p = buf, *end;
	int n = 0;

	if (read_text("/proc/sys/vm/lowmem_reserve_ratio", buf, sizeof(buf)) < 0)
		return -1;
	while (n < max) {
		long long v = strtoll(p, &end, 10);

		if (end == p)
			break;
		ratio[n++] = v;
		p = end;
	}
	return n;
}

/*
 * Zones whose protection differs from what setup_per_zone_lowmem_reserve()
 * computes from today's managed pages; logged when @log.
 */
static int prot_mismatches(struct __test_metadata *_metadata, const struct zone_prot *z,
			   int n, const int64_t *ratio, int nratio, bool log)
{
	int bad = 0, i, j;

	for (i = 0; i < n; i++) {
		int64_t r = z[i].idx < nratio ? ratio[z[i].idx] : 0, upper = 0;
		bool clear = r < 1 || !z[i].managed;

		for (j = i + 1; j < n && z[j].node == z[i].node; j++) {
			int64_t want;

			if (z[j].idx >= ZP_MAX_ZONES)
				break;
			upper += z[j].managed;
			want = clear ? 0 : upper / r;
			if (z[i].prot[z[j].idx] == want)
				continue;
			bad++;
			if (log)
				TH_LOG("node %d %s: protection against %s is %" PRId64
				       ", the managed pages above (%" PRId64 ") over %" PRId64
				       " give %" PRId64, z[i].node, z[i].name, z[j].name,
				       z[i].prot[z[j].idx], upper, r, want);
		}
	}
	return bad;
}

/* Poll until the reserves agree with the managed pages (a work item sets them). */
static int wait_prot_agrees(struct __test_metadata *_metadata, struct zone_prot *z,
			    int *nz, const int64_t *ratio, int nratio)
{
	uint64_t deadline = now_ms() + 10000;
	int bad;

	do {
		*nz = read_zone_prot(z, 64);
		bad = *nz < 0 ? -1 : prot_mismatches(_metadata, z, *nz, ratio, nratio, false);
		if (!bad)
			return 0;
		sleep_ms(50);
	} while (now_ms() < deadline);
	if (*nz > 0)
		prot_mismatches(_metadata, z, *nz, ratio, nratio, true);
	return bad;
}

TEST_F_TIMEOUT(regionpm, park_updates_lowmem_reserve, 300)
{
	struct zone_prot before[64], parked[64], after[64];
	struct rpm_compact_res res;
	struct rpm_ack ack;
	int64_t ratio[ZP_MAX_ZONES];
	uint32_t ids[8], id;
	int n, nb, np, na, nratio, i, idx, err, lowered = 0, below = 0;

	nratio = read_lowmem_ratios(ratio, ZP_MAX_ZONES);
	ASSERT_LT(0, nratio) TH_LOG("cannot read /proc/sys/vm/lowmem_reserve_ratio");
	n = empty_regions(_metadata, self, ids, ARRAY_SIZE(ids));
	if (!n)
		SKIP(return, "needs a completely free region to park");
	nb = read_zone_prot(before, ARRAY_SIZE(before));
	ASSERT_LT(0, nb);

	idx = park_first(_metadata, &self->rpm, ids, n, &res);
	ASSERT_LE(0, idx) TH_LOG("none of %d free regions could be parked", n);
	id = ids[idx];
	EXPECT_EQ(0, wait_prot_agrees(_metadata, parked, &np, ratio, nratio))
		TH_LOG("with region %u parked the lowmem reserves kept old values", id);
	ASSERT_EQ(nb, np);
	/*
	 * Not vacuous: the parked zone lost managed pages, and every zone
	 * below it with a ratio protects itself less.
	 */
	for (i = 0; i < np; i++) {
		int j;

		if (parked[i].managed >= before[i].managed)
			continue;
		for (j = 0; j < i; j++) {
			if (parked[j].node != parked[i].node || !parked[j].managed ||
			    parked[j].idx >= nratio || ratio[parked[j].idx] < 1 ||
			    (before[i].managed - parked[i].managed) < ratio[parked[j].idx])
				continue;
			below++;
			if (parked[j].prot[parked[i].idx] < before[j].prot[parked[i].idx])
				lowered++;
			TH_LOG("node %d %s against %s: %" PRId64 " -> %" PRId64 " pages",
			       parked[j].node, parked[j].name, parked[i].name,
			       before[j].prot[parked[i].idx], parked[j].prot[parked[i].idx]);
		}
	}
	EXPECT_EQ(below, lowered) TH_LOG("a zone below the parked memory kept its protection");

	err = rpm_unpark(&self->rpm, id, &ack);
	ASSERT_EQ(0, err) TH_LOG("unpark %u: %s \"%s\"", id, strerror(-err), ack.msg);
	if (!below)
		SKIP(return, "no zone with a lowmem_reserve_ratio below region %u's zone", id);
	EXPECT_EQ(0, wait_prot_agrees(_metadata, after, &na, ratio, nratio))
		TH_LOG("after unparking region %u the lowmem reserves kept the parked values", id);
}

/* ZONE_DMA is never held; holds count against max_parked_pct. */
TEST_F(regionpm, hold_refusals)
{
	struct regions rs = { 0 };
	struct rpm_region r;
	struct rpm_ack ack;
	int64_t saved;
	uint32_t id;
	int i, err, dma = -1;

	ASSERT_EQ(0, regions_dump(&self->rpm, false, &rs, &ack));
	for (i = 0; i < rs.n && dma < 0; i++)
		if (region_in_zone(&rs.r[i], "DMA"))
			dma = rs.r[i].id;
	if (dma >= 0) {
		err = rpm_hold(&self->rpm, dma, &r, &ack);
		EXPECT_EQ(-EPERM, err) TH_LOG("holding ZONE_DMA region %d: %d \"%s\"", dma, err,
					      ack.msg);
		EXPECT_NE(0, ack.msg[0]);
		fprintf(stderr, "#   hold of ZONE_DMA region %d: %d \"%s\"\n", dma, err, ack.msg);
	} else {
		TH_LOG("no ZONE_DMA region here, that case is not checked");
	}
	regions_free(&rs);

	if (empty_regions(_metadata, self, &id, 1) < 1)
		SKIP(return, "needs a completely free region");
	saved = param_get(MAX_PARKED_PARAM);
	ASSERT_LE(0, saved);
	ASSERT_EQ(0, param_set(MAX_PARKED_PARAM, 1));
	err = rpm_hold(&self->rpm, id, &r, &ack);
	param_set(MAX_PARKED_PARAM, saved);
	EXPECT_EQ(-ENOSPC, err) TH_LOG("hold with max_parked_pct=1: %d \"%s\"", err, ack.msg);
	EXPECT_NE(NULL, strstr(ack.msg, "max_parked_pct"));
	fprintf(stderr, "#   hold with max_parked_pct=1: %d \"%s\"\n", err, ack.msg);
	ASSERT_EQ(0, rpm_region_get(&self->rpm, id, false, &r, &ack));
	EXPECT_STREQ("active", state_name(r.state));
}

/*
 * max_parked_pct counts ZONE_MOVABLE with the node's zones below it: every
 * allocation that may use ZONE_MOVABLE falls back to them.  Booted with
 * movablecore=, the regions wholly in ZONE_MOVABLE are parked (emptied
 * first) at the default cap without a refusal, past 80 % of that zone if
 * enough of them can be emptied (before, the cap was the zone's alone and
 * refused the park that went past it); with the cap at 25 % the parks stop
 * at a quarter of the node, not of the zone.
 */
static int park_movable(struct __test_metadata *_metadata, FIXTURE_DATA(regionpm) *self,
			const uint32_t *ids, int n, bool *parked, uint64_t *parked_pages,
			struct rpm_ack *ack)
{
	struct rpm_compact_res res;
	int i, err = 0;

	*parked_pages = 0;
	for (i = 0; i < n; i++) {
		err = rpm_park(&self->rpm, ids[i], true, &res, ack);
		if (err == -ENOSPC)
			return err;
		if (err) {
			TH_LOG("region %u not parked: %d \"%s\"", ids[i], err, ack->msg);
			continue;
		}
		parked[i] = true;
		*parked_pages += self->region_pages;
	}
	return 0;
}

static void unpark_all(struct rpm *s, const uint32_t *ids, int n, bool *parked)
{
	struct rpm_ack ack;
	int i;

	for (i = 0; i < n; i++)
		if (parked[i] && !rpm_unpark(s, ids[i], &ack))
			parked[i] = false;
}

TEST_F_TIMEOUT(regionpm, park_movable_zone_whole, 600)
{
	struct regions rs = { 0 };
	struct rpm_ack ack;
	uint32_t ids[256];
	bool parked[256] = { false };
	uint64_t node_total = 0, zone_total = 0, pages;
	int64_t saved;
	int i, n = 0, err;

	ASSERT_EQ(0, regions_dump(&self->rpm, false, &rs, &ack));
	for (i = 0; i < rs.n; i++) {
		struct rpm_region *r = &rs.r[i];

		if (r->node != 0)
			continue;
		node_total += r->managed + r->parked;
		if (r->nzones != 1 || strcmp(r->zones[0], "Movable"))
			continue;
		zone_total += r->managed + r->parked;
		if (r->state == REGIONPM_REGION_STATE_ACTIVE && n < (int)ARRAY_SIZE(ids))
			ids[n++] = r->id;
	}
	regions_free(&rs);
	if (!n)
		SKIP(return, "no active region wholly in ZONE_MOVABLE on node 0 (boot with movablecore=)");
	TH_LOG("node 0: %" PRIu64 " pages, %d regions of %" PRIu64 " in ZONE_MOVABLE (%" PRIu64
	       " pages)", node_total, n, self->region_pages, zone_total);
	saved = param_get(MAX_PARKED_PARAM);
	ASSERT_LE(0, saved);
	ASSERT_EQ(0, param_set(MAX_PARKED_PARAM, 80));

	err = park_movable(_metadata, self, ids, n, parked, &pages, &ack);
	fprintf(stderr, "#   cap 80 %%: parked %" PRIu64 " of ZONE_MOVABLE's %" PRIu64
		" pages, %d \"%s\"\n", pages, zone_total, err, err ? ack.msg : "");
	EXPECT_EQ(0, err) TH_LOG("refused at %" PRIu64 " parked pages: \"%s\"", pages, ack.msg);
	if (pages * 100 <= zone_total * 80)
		TH_LOG("only %" PRIu64 " pages could be emptied: the zone's own 80 %% not passed",
		       pages);
	unpark_all(&self->rpm, ids, n, parked);

	ASSERT_EQ(0, param_set(MAX_PARKED_PARAM, 25));
	err = park_movable(_metadata, self, ids, n, parked, &pages, &ack);
	fprintf(stderr, "#   cap 25 %%: parked %" PRIu64 " pages (node %" PRIu64 ", zone %" PRIu64
		"), %d \"%s\"\n", pages, node_total, zone_total, err, err ? ack.msg : "");
	unpark_all(&self->rpm, ids, n, parked);
	param_set(MAX_PARKED_PARAM, saved);
	if (pages * 100 > zone_total * 25 || err) {
		/* Refused at a quarter of the node: the last park would pass it. */
		EXPECT_LE(pages * 100, node_total * 25);
		if (err) {
			EXPECT_EQ(-ENOSPC, err);
			EXPECT_GT((pages + self->region_pages) * 100, node_total * 25);
			EXPECT_NE(NULL, strstr(ack.msg, "Movable and below")) TH_LOG("\"%s\"",
											ack.msg);
		}
		EXPECT_GT(pages * 100, zone_total * 25)
			TH_LOG("the cap counted ZONE_MOVABLE alone");
	} else {
		TH_LOG("too few regions could be emptied to pass a quarter of the zone");
	}
	for (i = 0; i < n; i++)
		EXPECT_FALSE(parked[i]) TH_LOG("region %u still parked", ids[i]);
}

/*
 * The run of pages from @pfn on that hold a memory block's own memmap
 * (memory_hotplug.memmap_on_memory), as /proc/kpageflags shows them:
 * PG_vmemmap_self_hosted is PG_owner_priv_1 (KPF_OWNER_PRIVATE), on a
 * page that is nothing else.  At most @max pages are read.
 */
static uint64_t kpf_memmap_run(uint64_t pfn, uint64_t max)
{
	const uint64_t other = BIT64(KPF_LRU) | BIT64(KPF_SLAB) | BIT64(KPF_BUDDY) |
			       BIT64(KPF_ANON) | BIT64(KPF_MMAP) | BIT64(KPF_PGTABLE) |
			       BIT64(KPF_RESERVED) | BIT64(KPF_NOPAGE);
	uint64_t *flags = calloc(max, sizeof(*flags)), n = 0;
	int fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (fd >= 0 && flags) {
		got = pread(fd, flags, max * sizeof(*flags), pfn * sizeof(*flags));
		while (got > 0 && n < (uint64_t)got / sizeof(*flags) &&
		       (flags[n] & BIT64(KPF_OWNER_PRIVATE)) && !(flags[n] & other))
			n++;
	}
	if (fd >= 0)
		close(fd);
	free(flags);
	return n;
}

/*
 * memory_hotplug.memmap_on_memory: a hotplugged memory block (an ACPI
 * DIMM in suite daemon-dimm-memmap) holds its own memmap at its start,
 * in use for as long as the block is present.  The kernel's breakdown of
 * the region counts those pages as reserved, and park and hold refuse the
 * region at once, saying why, instead of compacting it and failing on its
 * first pageblock (the daemon tried the DIMM's emptied regions again and
 * again).
 */
TEST_F_TIMEOUT(regionpm, memmap_on_memory_region_pinned, 300)
{
	uint64_t block_pages, memmap, in_region;
	struct regions rs = { 0 };
	struct rpm_compact_res res;
	struct rpm_region r, h;
	struct rpm_ack ack;
	int i, found = 0, err, last_block_id = -1;
	uint32_t last_id = 0;
	char buf[64];

	if (read_text("/sys/module/memory_hotplug/parameters/memmap_on_memory", buf,
		      sizeof(buf)) <= 0 || (buf[0] != 'Y' && strncmp(buf, "force", 5)))
		SKIP(return, "memory_hotplug.memmap_on_memory is off");
	ASSERT_LT(0, read_text("/sys/devices/system/memory/block_size_bytes", buf, sizeof(buf)));
	block_pages = strtoull(buf, NULL, 16) / self->pgsz;
	ASSERT_LT(0ULL, block_pages);
	ASSERT_EQ(0, regions_dump(&self->rpm, false, &rs, &ack));
	for (i = 0; i < rs.n; i++) {
		uint64_t start = rs.r[i].start_pfn, block = start - start % block_pages;
		uint32_t id = rs.r[i].id;

		if (rs.r[i].state != REGIONPM_REGION_STATE_ACTIVE || !rs.r[i].managed)
			continue;
		memmap = kpf_memmap_run(block, block_pages / 8);
		if (block + memmap <= start)
			continue;
		in_region = u64min(block + memmap, start + self->region_pages) - start;
		found++;
		if (block_pages == self->region_pages && start == block) {
			last_id = id;
			last_block_id = (int)(block / block_pages);
		}
		err = rpm_region_get(&self->rpm, id, true, &r, &ack);
		ASSERT_EQ(0, err) TH_LOG("REGION_GET %u: %s", id, ack.msg);
		EXPECT_LE(in_region, r.detail[REGIONPM_A_DETAIL_RESERVED])
			TH_LOG("region %u: %" PRIu64 " pages of its block's memmap, the breakdown "
			       "has %" PRIu64 " reserved and %" PRIu64 " other kernel pages", id,
			       in_region, (uint64_t)r.detail[REGIONPM_A_DETAIL_RESERVED],
			       (uint64_t)r.detail[REGIONPM_A_DETAIL_KERNEL_OTHER]);
		err = rpm_park(&self->rpm, id, false, &res, &ack);
		EXPECT_EQ(-EPERM, err) TH_LOG("park %u: %d \"%s\"", id, err, ack.msg);
		EXPECT_NE(NULL, strstr(ack.msg, "memmap_on_memory")) TH_LOG("\"%s\"", ack.msg);
		err = rpm_park(&self->rpm, id, true, &res, &ack);
		EXPECT_EQ(-EPERM, err) TH_LOG("park with compaction %u: %d \"%s\"", id, err,
					      ack.msg);
		EXPECT_EQ(0ULL, res.migrated + res.dropped) TH_LOG("moved pages before refusing");
		err = rpm_hold(&self->rpm, id, &h, &ack);
		EXPECT_EQ(-EPERM, err) TH_LOG("hold %u: %d \"%s\"", id, err, ack.msg);
		if (!err)
			rpm_unpark(&self->rpm, id, &ack);
		if (found == 1)
			TH_LOG("region %u: %" PRIu64 " memmap pages, %" PRIu64 " reserved: \"%s\"",
			       id, in_region, (uint64_t)r.detail[REGIONPM_A_DETAIL_RESERVED],
			       ack.msg);
	}
	regions_free(&rs);
	if (!found)
		SKIP(return, "no memory block holds its own memmap (hotplug a DIMM with "
			     "memory_hotplug.memmap_on_memory=1)");
	TH_LOG("%d region(s) hold their block's memmap", found);

	/*
	 * Offline the last such block and online it again: the region's
	 * present pages follow (the notifier counts the memmap the
	 * hotplug code leaves out of its range), and it is refused again.
	 */
	if (last_block_id >= 0) {
		char path[128], zone[64] = "";
		int ok;

		snprintf(path, sizeof(path), "/sys/devices/system/memory/memory%d/state",
			 last_block_id);
		ok = write_text(path, "offline");
		TH_LOG("memory block %d offline: %s", last_block_id, ok ? strerror(-ok) : "done");
		if (!ok) {
			/* Gone from the table, or there with nothing managed. */
			err = rpm_region_get(&self->rpm, last_id, false, &r, &ack);
			if (err != -ENOENT) {
				EXPECT_EQ(0, err) TH_LOG("\"%s\"", ack.msg);
				EXPECT_EQ(0ULL, r.managed) TH_LOG("region %u offline, %" PRIu64
								  " managed pages", last_id, r.managed);
			}
			EXPECT_EQ(0, write_text(path, "online_movable"));
			snprintf(path, sizeof(path),
				 "/sys/devices/system/memory/memory%d/valid_zones", last_block_id);
			read_text(path, zone, sizeof(zone));
			EXPECT_EQ(0, strncmp(zone, "Movable", 7)) TH_LOG("back in \"%s\"", zone);
		}
		err = rpm_region_get(&self->rpm, last_id, true, &r, &ack);
		ASSERT_EQ(0, err);
		EXPECT_LE(block_pages / 64, r.detail[REGIONPM_A_DETAIL_RESERVED]);
		EXPECT_EQ(-EPERM, rpm_park(&self->rpm, last_id, false, &res, &ack))
			TH_LOG("\"%s\"", ack.msg);
	}
}

/*
 * Memory pressure ends holds before it releases any parked region: with
 * regions held and one parked, an allocation that the held free pages
 * cover gets them back through the shrinker, and the parked region stays
 * parked unless every hold is gone.
 */
TEST_F_TIMEOUT(regionpm, pressure_releases_holds_first, 900)
{
	struct regions rs = { 0 };
	struct rpm_compact_res res;
	struct rpm_region r;
	struct rpm_event e;
	struct rpm_ack ack;
	struct rpm ev;
	const uint32_t pressure = (1U << REGIONPM_RELEASE_REASON_SHRINKER) |
				  (1U << REGIONPM_RELEASE_REASON_OOM);
	struct ev_match m = { .cmd = REGIONPM_CMD_REGION_RELEASE_NTF, .reasons = pressure };
	uint32_t ids[64], held_ids[64];
	uint64_t held_free = 0, want, held = 0, failed = 0;
	int64_t free_pages, oom0;
	int n, nheld = 0, parked = -1, i, released = 0, still_held;
	char cmd[64];

	if (!alloc_test_ready())
		SKIP(return, "no %s (CONFIG_REGIONPM_ALLOC_TEST)", ALLOC_TEST);
	n = empty_regions(_metadata, self, ids, ARRAY_SIZE(ids));
	if (n < 2)
		SKIP(return, "needs two completely free regions (found %d)", n);
	ASSERT_EQ(0, rpm_events_open(&ev, &ack)) TH_LOG("events listener: %s", ack.msg);
	/* The lowest one is parked, the others held, keeping 256 MiB free. */
	if (!rpm_park(&self->rpm, ids[n - 1], false, &res, &ack))
		parked = ids[n - 1];
	for (i = 0; i < n - 1; i++) {
		if (meminfo_kb("MemFree") < 256 * 1024 + (int64_t)(self->region_pages * self->pgsz / 1024))
			break;
		if (rpm_hold(&self->rpm, ids[i], &r, &ack)) {
			TH_LOG("holding %u: \"%s\"", ids[i], ack.msg);
			continue;
		}
		held_ids[nheld++] = ids[i];
		held_free += r.free;
	}
	TH_LOG("held %d regions (%" PRIu64 " free pages), parked region %d", nheld, held_free,
	       parked);
	if (!nheld)
		SKIP(goto out, "nothing could be held");
	free_pages = zone_free_pages(-1, NULL);
	ASSERT_LE(0, free_pages);
	want = free_pages + held_free / 2;
	oom0 = vmstat_get("oom_kill");
	snprintf(cmd, sizeof(cmd), "any -1 %" PRIu64, want);
	ASSERT_EQ(0, write_text(ALLOC_TEST, cmd)) TH_LOG("writing \"%s\" to %s", cmd, ALLOC_TEST);
	ASSERT_EQ(0, alloc_test_state(&held, &failed));
	m.ids = held_ids;
	m.nids = nheld;
	while (!rpm_event_wait(&ev, released ? 200 : EVENT_WAIT_MS, &m, &e))
		released++;
	still_held = 0;
	for (i = 0; i < nheld; i++)
		if (!rpm_region_get(&self->rpm, held_ids[i], false, &r, &ack) &&
		    r.state == REGIONPM_REGION_STATE_HELD)
			still_held++;
	TH_LOG("asked %" PRIu64 " pages (%" PRId64 " free), got %" PRIu64 ", %" PRIu64
	       " failed; %d of %d holds released by pressure, %d still held", want, free_pages,
	       held, failed, released, nheld, still_held);
	EXPECT_EQ(0UL, failed) TH_LOG("allocations failed while held memory could serve them");
	EXPECT_EQ(oom0, vmstat_get("oom_kill")) TH_LOG("the OOM killer ran");
	EXPECT_LT(0, released) {
		TH_LOG("no hold released with reason shrinker or oom");
		log_events(_metadata, &ev);
	}
	if (parked >= 0) {
		ASSERT_EQ(0, rpm_region_get(&self->rpm, parked, false, &r, &ack));
		TH_LOG("parked region %d is %s", parked, state_name(r.state));
		EXPECT_TRUE(r.state == REGIONPM_REGION_STATE_PARKED || !still_held)
			TH_LOG("a parked region was released while holds were left");
	}
	ASSERT_EQ(0, write_text(ALLOC_TEST, "free"));
out:
	rpm_close(&ev);
	regions_free(&rs);
}

/*
 * Memory of kinds the other tests do not fill with: shmem (tmpfs, memfd,
 * SysV shared memory: databases' buffer pools, /tmp on tmpfs), mlocked
 * anonymous memory, transparent huge pages and hugetlb pages (VM hosts
 * back guests with them), in use and free in the pool.  All interleaved
 * in 32 MiB steps so that they share regions.
 *
 * Last in the file, so last in a run: it takes 40 % of memory through
 * mlock, shmem and the hugetlb pool, and what that leaves behind in the
 * low regions' pageblocks changed what the bias tests found there (in the
 * debug kernel, bias_fills_pinned_regions_first saw 7,652 claims outside
 * the pinned regions after it, against 3,270 without it and a limit of
 * 4,096).
 */
struct kinds_area {
	char *shm, *thp, *locked, *huge;
	uint64_t shm_len, thp_len, locked_len, huge_len;
	long huge_pages;	/* in use; the pool also has free ones */
};

#define KINDS_SEED_SHM		0x5113
#define KINDS_SEED_THP		0x7f19
#define KINDS_SEED_LOCKED	0x10c4
#define KINDS_SEED_HUGE		0x4a6e
#define HUGE_BYTES		(2 * MiB)

static char *kinds_map(uint64_t len, int flags, int fd)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* vm.nr_hugepages: the persistent pool (HugePages_Total adds surplus pages). */
static int64_t nr_hugepages(void)
{
	char buf[32];

	if (read_text("/proc/sys/vm/nr_hugepages", buf, sizeof(buf)) <= 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

/*
 * Grow the hugetlb pool by @n pages; the pages it got, or -errno.  Only
 * with 2 MiB default huge pages (the sizes below assume them): 0 otherwise.
 */
static long hugetlb_pool_grow(long n)
{
	char buf[32];
	int64_t before = nr_hugepages(), after;
	int err;

	if (before < 0)
		return -ENOENT;
	if (meminfo_kb("Hugepagesize") != (int64_t)(HUGE_BYTES >> 10))
		return 0;
	snprintf(buf, sizeof(buf), "%" PRId64, before + n);
	err = write_text("/proc/sys/vm/nr_hugepages", buf);
	if (err)
		return err;
	after = nr_hugepages();
	return after > before ? after - before : 0;
}

static int fill_kinds(FIXTURE_DATA(regionpm) *self, struct kinds_area *k, uint64_t each)
{
	uint64_t off, chunk = FILL_CHUNK, pool = 0;
	int memfd;

	k->shm_len = k->thp_len = k->locked_len = each - each % chunk;
	memfd = memfd_create("regionpm-test", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, k->shm_len))
		return -errno;
	k->shm = kinds_map(k->shm_len, MAP_SHARED, memfd);
	close(memfd);
	/* 2 MiB aligned, so that the kernel can back it with huge pages */
	k->thp = kinds_map(k->thp_len + HUGE_BYTES, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	k->locked = kinds_map(k->locked_len, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	if (!k->shm || !k->thp || !k->locked)
		return -ENOMEM;
	k->thp = (char *)(((uintptr_t)k->thp + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1));
	if (madvise(k->thp, k->thp_len, MADV_HUGEPAGE))
		return -errno;
	for (off = 0; off < k->shm_len; off += chunk) {
		long got;

		fill_pattern(k->shm + off, chunk, KINDS_SEED_SHM, off / self->pgsz);
		fill_pattern(k->thp + off, chunk, KINDS_SEED_THP, off / self->pgsz);
		fill_pattern(k->locked + off, chunk, KINDS_SEED_LOCKED, off / self->pgsz);
		if (mlock(k->locked + off, chunk))
			return -errno;
		/* the pool grows a chunk at a time too; 0 pages: no hugetlb */
		got = hugetlb_pool_grow(chunk / HUGE_BYTES);
		if (got > 0)
			pool += got;
	}
	if (!pool)
		return 0;
	/* Three quarters of the pool in use, the rest free in the pool. */
	k->huge_pages = pool * 3 / 4;
	k->huge_len = k->huge_pages * HUGE_BYTES;
	if (!k->huge_len)
		return 0;
	k->huge = kinds_map(k->huge_len, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1);
	if (!k->huge)
		return -errno;
	fill_pattern(k->huge, k->huge_len, KINDS_SEED_HUGE, 0);
	return 0;
}

static void check_kinds(struct __test_metadata *_metadata, FIXTURE_DATA(regionpm) *self,
			const struct kinds_area *k, const char *when)
{
	const struct {
		const char *name;
		const char *p;
		uint64_t len, seed;
	} area[] = {
		{ "shmem", k->shm, k->shm_len, KINDS_SEED_SHM },
		{ "THP anon", k->thp, k->thp_len, KINDS_SEED_THP },
		{ "mlocked anon", k->locked, k->locked_len, KINDS_SEED_LOCKED },
		{ "hugetlb", k->huge, k->huge_len, KINDS_SEED_HUGE },
	};
	int64_t bad;

	for (size_t i = 0; i < ARRAY_SIZE(area); i++) {
		if (!area[i].p || !area[i].len)
			continue;
		bad = check_pattern(area[i].p, area[i].len, area[i].seed, 0);
		EXPECT_EQ(-1, bad) TH_LOG("%s: %s page %" PRId64 " of %" PRIu64 " is corrupt",
					  when, area[i].name, bad, area[i].len / self->pgsz);
	}
}

/* Kernel pages that no compaction moves: slab, page tables, reserved. */
static uint64_t region_pinned_pages(const struct rpm_region *r)
{
	return r->detail[REGIONPM_A_DETAIL_SLAB] + r->detail[REGIONPM_A_DETAIL_PAGE_TABLE] +
	       r->detail[REGIONPM_A_DETAIL_RESERVED];
}

/* How many of the four kinds region @r holds (hugetlb: as huge pages). */
static int region_kinds(const struct rpm_region *r)
{
	return (r->detail[REGIONPM_A_DETAIL_SHMEM] >= 256) +
	       (r->detail[REGIONPM_A_DETAIL_ANON] >= 256) +
	       (r->detail[REGIONPM_A_DETAIL_UNEVICTABLE] >= 256) +
	       (r->detail[REGIONPM_A_DETAIL_KERNEL_OTHER] >= 512 &&
		r->detail[REGIONPM_A_DETAIL_HUGE] >= 512);
}

/*
 * Drop mode leaves shmem, anonymous, mlocked and hugetlb memory alone (a
 * dropped shmem page is data lost: it has no file behind it); migrate mode
 * moves all of them out, their data intact, with
 * vm.compact_unevictable_allowed=1 (the default) for the mlocked ones;
 * and what stays in the region is never one of them.  The hugetlb pool
 * keeps its size through it all, and through a park and an unpark of the
 * region.
 */
TEST_F_TIMEOUT(regionpm, compact_moves_shmem_thp_mlocked_hugetlb, 900)
{
	struct kinds_area k = { 0 };
	struct regions rs = { 0 };
	struct rpm_region before, after;
	struct rpm_compact_res res;
	struct rpm_ack ack;
	struct compact_req rq = { .id = 0 };
	uint64_t avail, tol, moved_kinds;
	int64_t huge_total, huge_free, mt0;
	int i, best = -1, best_kinds = 0, err;
	uint32_t id;

	err = read_text("/proc/sys/vm/compact_unevictable_allowed", self->unevictable_saved,
			sizeof(self->unevictable_saved));
	ASSERT_LT(0, err) TH_LOG("reading vm.compact_unevictable_allowed: %s", strerror(-err));
	ASSERT_EQ(0, write_text("/proc/sys/vm/compact_unevictable_allowed", "1"));
	self->unevictable_set = true;
	self->hugepages_saved = nr_hugepages();
	avail = (uint64_t)meminfo_kb("MemAvailable") * 1024;
	/* a tenth each: shmem, THP, mlocked, and a hugetlb pool as big */
	err = fill_kinds(self, &k, avail / 10);
	ASSERT_EQ(0, err) TH_LOG("filling memory: %s", strerror(-err));
	huge_total = meminfo_kb("HugePages_Total");
	huge_free = meminfo_kb("HugePages_Free");
	TH_LOG("%" PRIu64 " MiB each of shmem, THP anon (AnonHugePages %" PRId64
	       " kB), mlocked anon (Mlocked %" PRId64 " kB); hugetlb pool %" PRId64
	       " pages, %" PRId64 " free", k.shm_len / MiB, meminfo_kb("AnonHugePages"),
	       meminfo_kb("Mlocked"), huge_total, huge_free);
	if (!k.huge_len)
		TH_LOG("note: no hugetlb pool could be made; hugetlb is not covered");
	check_kinds(_metadata, self, &k, "after filling");

	/* the highest region with the most of the kinds and no slab */
	err = regions_dump(&self->rpm, true, &rs, &ack);
	ASSERT_EQ(0, err) TH_LOG("dump: %s", ack.msg);
	for (i = rs.n - 1; i >= 0; i--) {
		const struct rpm_region *r = &rs.r[i];
		int n = region_kinds(r);

		if (r->state != REGIONPM_REGION_STATE_ACTIVE || !r->has_detail ||
		    r->managed * 2 < r->spanned || region_pinned_pages(r) > r->managed / 100)
			continue;
		if (n > best_kinds) {
			best = i;
			best_kinds = n;
		}
	}
	if (best < 0) {
		for (i = 0; i < rs.n; i++)
			log_region(_metadata, "", &rs.r[i]);
		ASSERT_LE(0, best) TH_LOG("no region holds any of the four kinds without slab");
	}
	id = rs.r[best].id;
	TH_LOG("region %u holds %d of the four kinds", id, best_kinds);

	/* Drop mode: nothing of these kinds is dropped, none of it moves. */
	ASSERT_EQ(0, region_get_detail(_metadata, &self->rpm, id, &before));
	log_region(_metadata, "dropping", &before);
	rq.id = id;
	rq.mode = REGIONPM_COMPACT_MODE_DROP;
	err = rpm_compact(&self->rpm, &rq, &res, &ack);
	ASSERT_EQ(0, err) TH_LOG("REGION_COMPACT %u mode drop: %s, extack \"%s\"",
				 id, strerror(-err), ack.msg);
	log_compact_res(_metadata, "drop", &res, ack.msg);
	ASSERT_EQ(0, region_get_detail(_metadata, &self->rpm, id, &after));
	log_region(_metadata, "after drop", &after);
	EXPECT_EQ(0UL, res.migrated) TH_LOG("mode drop must not migrate anything");
	tol = u64max(64, before.detail[REGIONPM_A_DETAIL_SHMEM] / 50);
	EXPECT_LE(before.detail[REGIONPM_A_DETAIL_SHMEM],
		  after.detail[REGIONPM_A_DETAIL_SHMEM] + tol)
		TH_LOG("shmem pages went from %" PRIu64 " to %" PRIu64 " in drop mode",
		       before.detail[REGIONPM_A_DETAIL_SHMEM], after.detail[REGIONPM_A_DETAIL_SHMEM]);
	EXPECT_EQ(huge_total, meminfo_kb("HugePages_Total"));
	check_kinds(_metadata, self, &k, "after the drop");

	/* Migrate mode: all of them leave, intact. */
	before = after;
	rq.mode = REGIONPM_COMPACT_MODE_MIGRATE;
	err = rpm_compact(&self->rpm, &rq, &res, &ack);
	ASSERT_EQ(0, err) TH_LOG("REGION_COMPACT %u mode migrate: %s, extack \"%s\"",
				 id, strerror(-err), ack.msg);
	log_compact_res(_metadata, "migrate", &res, ack.msg);
	ASSERT_EQ(0, region_get_detail(_metadata, &self->rpm, id, &after));
	log_region(_metadata, "after migrate", &after);
	moved_kinds = before.detail[REGIONPM_A_DETAIL_SHMEM] + before.detail[REGIONPM_A_DETAIL_ANON] +
		      before.detail[REGIONPM_A_DETAIL_UNEVICTABLE];
	EXPECT_LT(0UL, res.migrated) TH_LOG("nothing migrated out of a region with %" PRIu64
					  " shmem, anon and mlocked pages", moved_kinds);
	tol = 64;
	EXPECT_GE(tol, after.detail[REGIONPM_A_DETAIL_SHMEM]) TH_LOG("shmem stayed");
	EXPECT_GE(tol, after.detail[REGIONPM_A_DETAIL_ANON]) TH_LOG("anonymous (THP) memory stayed");
	EXPECT_GE(tol, after.detail[REGIONPM_A_DETAIL_UNEVICTABLE]) TH_LOG("mlocked memory stayed");
	EXPECT_NE((uint32_t)REGIONPM_OBSTACLE_UNEVICTABLE, res.obstacle);
	EXPECT_NE((uint32_t)REGIONPM_OBSTACLE_MODE, res.obstacle);
	EXPECT_EQ(huge_total, meminfo_kb("HugePages_Total"))
		TH_LOG("the hugetlb pool changed size in a compaction");
	/*
	 * Free pool pages are replaced by fresh ones outside the region (the
	 * pool keeps its free count), unless none could be had, which the
	 * result says.  Before, they stayed and only a park's contiguous
	 * allocation moved them, or failed with the pages "still in use".
	 */
	EXPECT_EQ(huge_free, meminfo_kb("HugePages_Free"))
		TH_LOG("the free hugetlb pages changed in a compaction");
	if (res.obstacle != REGIONPM_OBSTACLE_HUGETLB && res.obstacle != REGIONPM_OBSTACLE_NO_ROOM)
		EXPECT_GE(512UL, after.detail[REGIONPM_A_DETAIL_HUGE])
			TH_LOG("%" PRIu64 " pages of huge pages stayed in region %u",
			       after.detail[REGIONPM_A_DETAIL_HUGE], id);
	check_kinds(_metadata, self, &k, "after migrating");

	/*
	 * Park it (compacting again first): free hugetlb pool pages are not
	 * free pages, and the park's contiguous allocation must move them
	 * rather than shrink the pool.  Whatever else stops the park must
	 * not be one of our kinds.
	 */
	mt0 = memtotal_pages();
	err = rpm_park(&self->rpm, id, true, &res, &ack);
	if (err) {
		TH_LOG("park %u: %s, obstacle %s at pfn %#" PRIx64 ", extack \"%s\"", id,
		       strerror(-err), obstacle_name(res.obstacle), res.obstacle_pfn, ack.msg);
		log_refused(_metadata, &self->rpm, id);
		EXPECT_NE((uint32_t)REGIONPM_OBSTACLE_UNEVICTABLE, res.obstacle);
		EXPECT_NE((uint32_t)REGIONPM_OBSTACLE_MODE, res.obstacle);
	} else {
		TH_LOG("parked region %u, MemTotal %" PRId64 " -> %" PRIu64 " pages", id, mt0,
		       memtotal_pages());
		EXPECT_EQ(huge_total, meminfo_kb("HugePages_Total"))
			TH_LOG("parking shrank the hugetlb pool");
		check_kinds(_metadata, self, &k, "with the region parked");
		err = rpm_unpark(&self->rpm, id, &ack);
		EXPECT_EQ(0, err) TH_LOG("REGION_UNPARK %u: %s, extack \"%s\"", id, strerror(-err),
					 ack.msg);
		EXPECT_EQ((uint64_t)mt0, memtotal_pages()) TH_LOG("MemTotal not restored after unpark");
	}
	EXPECT_EQ(huge_total, meminfo_kb("HugePages_Total"));
	EXPECT_EQ(huge_free, meminfo_kb("HugePages_Free"))
		TH_LOG("free hugetlb pages changed: %" PRId64 " -> %" PRId64, huge_free,
		       meminfo_kb("HugePages_Free"));
	check_kinds(_metadata, self, &k, "at the end");
	regions_free(&rs);
	/* the mappings go with the test's process; the pool in the teardown */
}

/* ------------------------------------------------------------------------
 * An alloc_contig_range() that cannot succeed gives nothing back.  When the
 * range also holds, outside the parked region, pages isolation refuses for
 * certain (reserved, slab, page tables), the call fails with EBUSY whatever
 * regionpm does; and a gigantic huge page is looked for range after range
 * over a whole zone, so giving back before such a call undid every park
 * in the zone for nothing.  The range here is a parked region plus the
 * regions up to the nearest one (same zone and node, within 1 GiB) that
 * holds such pages: the region must stay parked, no release event,
 * MemTotal unchanged.  Then the same call over the parked region alone
 * still gets it back.
 */
#define PIN_FLAGS (BIT64(KPF_RESERVED) | BIT64(KPF_SLAB) | BIT64(KPF_PGTABLE))

static uint64_t region_pinning(const struct rpm_region *r)
{
	return r->detail[REGIONPM_A_DETAIL_SLAB] + r->detail[REGIONPM_A_DETAIL_PAGE_TABLE] +
	       r->detail[REGIONPM_A_DETAIL_RESERVED];
}

/*
 * The pfn of @r nearest its low end (@from_low) or its high end that
 * /proc/kpageflags shows as reserved -- boot memory stays so -- else as
 * slab or page table; 0 if none.  Nearest the parked neighbour, so the
 * range claimed crosses no firmware hole at @r's far end.
 */
static uint64_t pinned_pfn(const struct rpm_region *r, bool from_low)
{
	uint64_t *flags = calloc(r->spanned, sizeof(*flags)), reserved = 0, other = 0, i;
	size_t len = r->spanned * sizeof(*flags);
	int fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && flags &&
	    pread(fd, flags, len, r->start_pfn * sizeof(*flags)) == (ssize_t)len) {
		for (i = 0; i < r->spanned && !reserved; i++) {
			uint64_t j = from_low ? i : r->spanned - 1 - i;

			if (flags[j] & BIT64(KPF_RESERVED))
				reserved = r->start_pfn + j;
			else if (!other && (flags[j] & PIN_FLAGS))
				other = r->start_pfn + j;
		}
	}
	if (fd >= 0)
		close(fd);
	free(flags);
	return reserved ? reserved : other;
}

/* Is @r online memory of @p's one zone and node (active or parked)? */
static bool same_zone(const struct rpm_region *r, const struct rpm_region *p)
{
	return r && r->nzones == 1 && !strcmp(r->zones[0], p->zones[0]) && r->node == p->node &&
	       (r->state == REGIONPM_REGION_STATE_ACTIVE ||
		r->state == REGIONPM_REGION_STATE_PARKED);
}

/*
 * The active region nearest @p, at most @max_dist regions away, that holds
 * such pages, with every region from @p to it in @p's one zone and node
 * (so one claim can span them); NULL if none.
 */
static const struct rpm_region *pinned_near(const struct regions *rs,
					    const struct rpm_region *p, uint32_t max_dist)
{
	const struct rpm_region *r = NULL;
	uint32_t d;
	int dir;

	if (!p || p->nzones != 1)
		return NULL;
	for (d = 1; d <= max_dist; d++) {
		for (dir = -1; dir <= 1; dir += 2) {
			uint32_t k;

			if (dir < 0 && d > p->id)
				continue;
			for (k = 1; k <= d; k++) {
				r = region_find(rs, (uint32_t)(p->id + dir * (int64_t)k));
				if (!same_zone(r, p))
					break;
			}
			if (k <= d || !r)
				continue;	/* another zone, a hole or the end between */
			/* kpageflags must show one (a block's own memmap counts as reserved only in the dump) */
			if (r->state == REGIONPM_REGION_STATE_ACTIVE && r->has_detail &&
			    region_pinning(r) && pinned_pfn(r, r->id > p->id))
				return r;
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(regionpm, contig_alloc_that_must_fail_keeps_parked, 600)
{
	struct regions rs = { 0 };
	struct rpm_compact_res res;
	struct rpm_region p, now;
	const struct rpm_region *nb = NULL;
	struct rpm_ack ack;
	struct rpm ev;
	uint32_t cands[16], with_nb[16];
	uint64_t mt0, parked, pin, first, last, claim_max;
	uint32_t max_dist;
	int ncand, n = 0, i, idx, err;

	if (!alloc_test_ready())
		SKIP(return, "no %s (CONFIG_REGIONPM_ALLOC_TEST)", ALLOC_TEST);
	/* The test interface claims at most 1 GiB: the regions that fit in it. */
	claim_max = (1ULL << 30) / self->pgsz;
	/* region sizes are powers of two: at least 1 either way */
	max_dist = self->region_pages < claim_max ? claim_max / self->region_pages - 1 : 1;
	ncand = contig_candidates(_metadata, self, &rs, cands, ARRAY_SIZE(cands));
	ASSERT_LE(0, ncand);
	for (i = 0; i < ncand; i++)
		if (pinned_near(&rs, region_find(&rs, cands[i]), max_dist))
			with_nb[n++] = cands[i];
	if (!n) {
		/* Slab, page tables or boot memory within 1 GiB of some candidate: nearly always. */
		SKIP(regions_free(&rs); return,
		     "none of %d park candidates has reserved, slab or page-table pages within %u regions in its zone",
		     ncand, max_dist);
	}
	ASSERT_EQ(0, rpm_events_open(&ev, &ack)) TH_LOG("events listener: %s", ack.msg);
	mt0 = memtotal_pages();
	idx = park_first(_metadata, &self->rpm, with_nb, n, &res);
	ASSERT_LE(0, idx) TH_LOG("none of %d candidate regions could be parked", n);
	ASSERT_EQ(0, rpm_region_get(&self->rpm, with_nb[idx], false, &p, &ack));
	parked = p.parked;
	nb = pinned_near(&rs, region_find(&rs, p.id), max_dist);
	ASSERT_NE(NULL, nb);

	pin = pinned_pfn(nb, nb->id > p.id);
	ASSERT_NE(0UL, pin) TH_LOG("region %u: the dump counts %" PRIu64
				   " reserved/slab/page-table pages, /proc/kpageflags none",
				   nb->id, region_pinning(nb));
	/* All of the parked region, unless that makes more than the 1 GiB allowed. */
	if (nb->id < p.id) {
		first = pin & ~(self->pageblock - 1);
		last = p.start_pfn + p.spanned;
		if (last - first > claim_max)
			last = p.start_pfn + CONTIG_TAKE;
	} else {
		first = p.start_pfn;
		last = (pin | (self->pageblock - 1)) + 1;
		if (last - first > claim_max)
			first = p.start_pfn + p.spanned - CONTIG_TAKE;
	}
	if (last - first > claim_max) {
		/* Regions of 1 GiB and more: the nearest pinned page is still too far. */
		rpm_close(&ev);
		SKIP(regions_free(&rs); return,
		     "region %u's pinned page at pfn %#" PRIx64 " is more than 1 GiB from parked region %u",
		     nb->id, pin, p.id);
	}
	TH_LOG("region %u parked (%" PRIu64 " pages); region %u holds %" PRIu64
	       " reserved/slab/page-table pages, one at pfn %#" PRIx64 "; claiming [%#" PRIx64
	       ", %#" PRIx64 ")", p.id, parked, nb->id, region_pinning(nb), pin, first, last);
	err = alloc_test_contig(first, last - first);
	ASSERT_NE(-EINVAL, err) TH_LOG("the test interface refused the range (not one zone?)");
	EXPECT_NE(0, err) {
		TH_LOG("alloc_contig_range() over reserved/slab/page-table pages succeeded");
		EXPECT_EQ(0, write_text(ALLOC_TEST, "free"));
	}
	EXPECT_EQ(-ETIMEDOUT, rpm_event_wait(&ev, 1000, &(struct ev_match){
		.cmd = REGIONPM_CMD_REGION_RELEASE_NTF, .ids = &p.id, .nids = 1 }, NULL)) {
		TH_LOG("region %u was given back for a claim that failed (%s)", p.id,
		       strerror(-err));
		log_events(_metadata, &ev);
	}
	ASSERT_EQ(0, rpm_region_get(&self->rpm, p.id, false, &now, &ack));
	EXPECT_STREQ("parked", state_name(now.state));
	EXPECT_EQ(parked, now.parked);
	EXPECT_EQ(mt0 - parked, memtotal_pages()) TH_LOG("MemTotal changed");

	/* The parked region alone: still given back (reason range-claimed). */
	if (!strcmp("parked", state_name(now.state)))
		contig_takes_back(_metadata, &self->rpm, &ev, p.id, "parked", parked);
	EXPECT_EQ(mt0, memtotal_pages()) TH_LOG("MemTotal not restored");
	rpm_close(&ev);
	regions_free(&rs);
}

/* ------------------------------------------------------------------------
 * main: the harness, plus --count-regions for ynl-cli.sh
 */
static int count_regions(void)
{
	struct regions rs = { 0 };
	struct rpm_ack ack;
	struct rpm s;
	int err;

	err = rpm_open(&s, &ack);
	if (!err)
		err = regions_dump(&s, false, &rs, &ack);
	if (err) {
		fprintf(stderr, "regionpm: %s (%s)\n", strerror(-err), ack.msg);
		return 1;
	}
	printf("%d\n", rs.n);
	regions_free(&rs);
	rpm_close(&s);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--count-regions"))
		return count_regions();
	return test_harness_run(argc, argv);
}
