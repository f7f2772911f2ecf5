// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The stock backend (backend.h): regionpmd on a kernel without the
 * regionpm patch.
 *
 *   regions    memory blocks (block_size_bytes), id = block number
 *   occupancy  /proc/kpageflags scans (kpf-scan.c), cached per block; a
 *              dump rescans at most STOCK_DUMP_SCAN_PAGES pages, stalest
 *              first, a region-get with scan always rescans its block
 *   drop       DAMON paddr pageout of the block's range, anon filtered out
 *              (damon-sysfs.c)
 *   migrate    not possible without offlining: -EOPNOTSUPP, park instead
 *   park       offline the block (memblock-sysfs.c): the kernel migrates
 *              what is left and takes the block out of the allocator;
 *              recorded first in /run/regionpmd/offlined-blocks
 *              (offline-state.c); the write runs in a child killed after
 *              STOCK_OFFLINE_TIMEOUT_MS (offline retries until a fatal
 *              signal)
 *              a block at an end of ZONE_DMA32 is never offlined: online
 *              again it would join ZONE_NORMAL (memblock_returns_to_zone())
 *   unpark     online it again into the zone it had (online_movable or
 *              online_kernel), only blocks in the record: a block someone
 *              else offlined shows as busy and is never touched
 *   release    nothing in the kernel: SIGTERM unparks, ExecStopPost= runs
 *              regionpmd --restore, and open() onlines what a previous
 *              instance left in the record
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "damon-sysfs.h"
#include "kpf-scan.h"
#include "log.h"
#include "memblock-sysfs.h"
#include "offline-state.h"
#include "procfs-util.h"

#define STOCK_RESCAN_USEC		(10 * 1000000ULL)	/* occupancy older than this is stale */
#define STOCK_DUMP_SCAN_PAGES		(128 * 1024)		/* 512 MiB of 4 KiB pages per dump */
#define STOCK_OFFLINE_TIMEOUT_MS	5000
#define STOCK_OFFLINE_POLL_MS		100			/* MemAvailable guard while offlining */
#define STOCK_DROP_MIN_AGE_US		1000000			/* DAMON: not accessed for 1 s */
#define STOCK_DROP_TIMEOUT_MS		3000

struct stock_cache {
	bool valid;
	bool zone_edge;		/* from the last dump: offlined it would change zone */
	usec_t_ when;
	uint64_t present;
	struct rpm_region_detail detail;
};

struct backend_stock {
	struct rpm_backend b;
	char root[PATH_MAX];
	uint64_t block_bytes, page_size, block_pages;
	uint32_t owner;
	struct stock_cache *cache;
	size_t n_cache;
	struct offline_state st;
	char err[256];
};

#define S(b) ((struct backend_stock *)(b))

static usec_t_ now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (usec_t_)ts.tv_sec * 1000000 + (usec_t_)ts.tv_nsec / 1000;
}

static int set_err(struct backend_stock *s, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int set_err(struct backend_stock *s, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return r;
}

static int stock_probe(const char *root)
{
	char path[PATH_MAX];
	uint64_t bytes;
	int r = memblock_block_size(root, &bytes);

	if (r < 0)
		return -ENOENT;	/* no memory hotplug: nothing to offline */
	snprintf(path, sizeof(path), "%s" RPM_PROC_KPAGEFLAGS, root ? root : "");
	if (access(path, R_OK) < 0)
		return -ENOENT;
	return 0;
}

static struct stock_cache *cache_of(struct backend_stock *s, uint32_t id)
{
	if (id >= s->n_cache) {
		size_t n = (size_t)id + 64;
		struct stock_cache *c = realloc(s->cache, n * sizeof(*c));

		if (!c)
			return NULL;
		memset(c + s->n_cache, 0, (n - s->n_cache) * sizeof(*c));
		s->cache = c;
		s->n_cache = n;
	}
	return &s->cache[id];
}

static int scan_block(struct backend_stock *s, uint32_t id)
{
	struct stock_cache *c = cache_of(s, id);
	int r;

	if (!c)
		return -ENOMEM;
	r = kpf_scan(s->root, (uint64_t)id * s->block_pages, s->block_pages, &c->detail,
		     &c->present);
	if (r < 0) {
		c->valid = false;
		return set_err(s, r, "reading /proc/kpageflags: %s", strerror(-r));
	}
	c->valid = true;
	c->when = c->detail.when = now_usec();
	return 0;
}

/* Kernel view of one block, from sysfs and the cached scan. */
static void fill_region(struct backend_stock *s, const struct memblock *b, bool detail,
			struct rpm_region *r)
{
	struct stock_cache *c = cache_of(s, b->id);
	bool ours = offline_state_zone(&s->st, b->id) != NULL;

	memset(r, 0, sizeof(*r));
	r->id = b->id;
	r->start_pfn = (uint64_t)b->id * s->block_pages;
	r->spanned_pages = s->block_pages;
	r->node = b->node;
	snprintf(r->zones, sizeof(r->zones), "%s", b->zones);
	for (char *p = r->zones; *p; p++)
		if (*p == ' ')
			*p = ',';
	if (b->state == MEMBLOCK_ONLINE) {
		r->state = RPM_REGION_ACTIVE;
		r->no_park = c && c->zone_edge;
		if (c && c->valid) {
			r->managed_pages = c->present;
			r->free_pages = c->detail.free;
			if (detail)
				r->detail = c->detail;
		} else {
			/* not scanned yet: looks full, the policy asks for a scan */
			r->managed_pages = s->block_pages;
		}
	} else if (b->state == MEMBLOCK_OFFLINE && ours) {
		r->state = RPM_REGION_PARKED;
		r->owner_portid = s->owner;
		r->parked_pages = s->block_pages;
	} else {
		/* offline by someone else, or on its way: not ours to touch */
		r->state = RPM_REGION_BUSY;
	}
}

static int stock_open(struct rpm_backend **ret, const char *root, FILE *debug)
{
	struct backend_stock *s = calloc(1, sizeof(*s));
	unsigned failed = 0;
	int r;

	(void)debug;
	if (!s)
		return -ENOMEM;
	s->b.ops = &rpm_backend_stock;
	snprintf(s->root, sizeof(s->root), "%s", root ? root : "");
	s->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	s->owner = (uint32_t)getpid();
	r = memblock_block_size(s->root, &s->block_bytes);
	if (r < 0 || s->block_bytes % s->page_size) {
		free(s);
		return r < 0 ? -ENOENT : -EINVAL;
	}
	s->block_pages = s->block_bytes / s->page_size;
	r = offline_state_load(&s->st, s->root);
	if (r < 0)
		rpm_log_errno(LOG_WARNING, r, "reading %s", s->st.path);
	if (s->st.n) {
		/* A previous regionpmd died without giving its blocks back. */
		log_notice("%zu memory block(s) left offline by a previous regionpmd: onlining them",
			   s->st.n);
		r = offline_state_restore(&s->st, s->root, &failed);
		if (failed)
			log_warning("%u recorded memory block(s) could not be onlined; they stay "
				    "in %s and are tried again", failed, s->st.path);
	}
	*ret = &s->b;
	return 0;
}

static void stock_close(struct rpm_backend *b)
{
	struct backend_stock *s = S(b);

	if (s->st.n)
		log_warning("%zu memory block(s) still offline at exit; recorded in %s for "
			    "regionpmd --restore", s->st.n, s->st.path);
	free(s->cache);
	free(s);
}

static unsigned stock_caps(const struct rpm_backend *b)
{
	(void)b;
	return RPM_CAP_DROP | RPM_CAP_PARK | RPM_CAP_BUDGET;
}

static int stock_info(struct rpm_backend *b, struct rpm_kernel_info *info)
{
	struct backend_stock *s = S(b);
	struct memblock *v;
	size_t n;
	int r = memblock_list(s->root, &v, &n);

	if (r < 0)
		return set_err(s, r, "listing memory blocks: %s", strerror(-r));
	memset(info, 0, sizeof(*info));
	info->region_size = s->block_bytes;
	info->region_count = n ? v[n - 1].id + 1 : 0;
	info->parked_pages = s->st.n * s->block_pages;
	free(v);
	return 0;
}

/* The stalest online block due for a rescan (or none). */
static const struct memblock *stalest(struct backend_stock *s, const struct memblock *v,
				      size_t n, usec_t_ now)
{
	const struct memblock *best = NULL;
	usec_t_ best_when = 0;

	for (size_t i = 0; i < n; i++) {
		struct stock_cache *c = cache_of(s, v[i].id);
		usec_t_ when = c && c->valid ? c->when : 0;

		if (v[i].state != MEMBLOCK_ONLINE || !c)
			continue;
		if (c->valid && now - when < STOCK_RESCAN_USEC)
			continue;
		if (!best || when < best_when) {
			best = &v[i];
			best_when = when;
		}
	}
	return best;
}

static int cmp_block_id(const void *key, const void *elem)
{
	uint32_t id = *(const uint32_t *)key, other = ((const struct memblock *)elem)->id;

	return id < other ? -1 : id > other;
}

/*
 * Drop the records of blocks that are no longer ours to give back: a block
 * that vanished (virtio-mem or ACPI removed its memory) and one that is
 * online again (onlined by someone else: a replugged block onlined by
 * memhp_default_state, or an operator).  Kept, a record would make a block
 * re-added offline look parked by us, so we would online what its owner
 * left offline, and the exit would count blocks "still offline" that are
 * not.  A dump never runs during a park (the daemon is single-threaded),
 * so an online block with a record is not one being offlined right now.
 */
static void forget_lost_blocks(struct backend_stock *s, const struct memblock *v, size_t n)
{
	size_t kept = 0, had = s->st.n;
	int r;

	for (size_t i = 0; i < had; i++) {
		uint32_t id = s->st.v[i].id;
		const struct memblock *m = bsearch(&id, v, n, sizeof(*v), cmp_block_id);

		if (m && m->state != MEMBLOCK_ONLINE) {
			s->st.v[kept++] = s->st.v[i];
			continue;
		}
		log_notice("memory block %" PRIu32 ", offlined by regionpmd, %s: no longer ours "
			   "to online", id, m ? "is online again" : "was removed");
	}
	if (kept == had)
		return;
	/* One write for all of them: an unplug removes several blocks at once. */
	s->st.n = kept;
	r = offline_state_save(&s->st);
	if (r < 0)
		rpm_log_errno(LOG_WARNING, r, "writing %s", s->st.path);
}

static int stock_dump(struct rpm_backend *b, rpm_region_cb cb, void *userdata)
{
	struct backend_stock *s = S(b);
	uint64_t budget = STOCK_DUMP_SCAN_PAGES;
	usec_t_ now = now_usec();
	const struct memblock *due;
	struct memblock *v;
	size_t n;
	int r = memblock_list(s->root, &v, &n);

	if (r < 0)
		return set_err(s, r, "listing memory blocks: %s", strerror(-r));
	forget_lost_blocks(s, v, n);
	/* bounded: a few blocks per dump, the stalest first */
	while (budget >= s->block_pages && (due = stalest(s, v, n, now))) {
		if (scan_block(s, due->id) < 0)
			break;
		budget -= s->block_pages;
	}
	for (size_t i = 0; i < n; i++) {
		struct stock_cache *c = v[i].state == MEMBLOCK_ONLINE ? cache_of(s, v[i].id) : NULL;

		if (c)
			c->zone_edge = !memblock_returns_to_zone(v, n, i);
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		struct rpm_region reg;

		fill_region(s, &v[i], false, &reg);
		r = cb(&reg, userdata);
	}
	free(v);
	return r;
}

static int stock_region_get(struct rpm_backend *b, uint32_t id, bool scan, struct rpm_region *reg)
{
	struct backend_stock *s = S(b);
	struct memblock m;
	int r = memblock_read(s->root, id, &m);

	if (r < 0)
		return set_err(s, r, "memory block %" PRIu32 ": %s", id, strerror(-r));
	if (scan && m.state == MEMBLOCK_ONLINE) {
		r = scan_block(s, id);
		if (r < 0)
			return r;
	}
	fill_region(s, &m, scan, reg);
	return 0;
}

static int stock_compact(struct rpm_backend *b, uint32_t id, uint32_t mode, uint64_t budget,
			 struct rpm_compact_result *res)
{
	struct backend_stock *s = S(b);
	struct damon_pageout p = {
		.start = (uint64_t)id * s->block_bytes,
		.end = ((uint64_t)id + 1) * s->block_bytes,
		.min_age_us = STOCK_DROP_MIN_AGE_US,
		.quota_bytes = budget * s->page_size,
		.timeout_ms = STOCK_DROP_TIMEOUT_MS,
	};
	usec_t_ t0 = now_usec();
	struct memblock m;
	uint64_t applied = 0;
	int r;

	s->err[0] = '\0';
	memset(res, 0, sizeof(*res));
	res->id = id;
	if (mode != 1 /* RPM_COMPACT_DROP */)
		return set_err(s, -EOPNOTSUPP, "a stock kernel migrates a range only by "
			       "offlining it: park instead");
	r = memblock_read(s->root, id, &m);
	if (r < 0 || m.state != MEMBLOCK_ONLINE)
		return set_err(s, r < 0 ? r : -EBUSY, "memory block %" PRIu32 " is not online", id);
	r = damon_sysfs_pageout(s->root, &p, &applied, s->err, sizeof(s->err));
	if (r < 0)
		return r;
	res->dropped = applied / s->page_size;
	res->scanned = s->block_pages;
	if (scan_block(s, id) == 0)
		res->free_pages = s->cache[id].detail.free;
	res->elapsed_ns = (now_usec() - t0) * 1000;
	return 0;
}

static bool memory_short(struct backend_stock *s)
{
	struct rpm_meminfo mi;

	if (!s->b.guard_available_pages || procfs_read_meminfo(s->root, &mi) < 0)
		return false;
	return procfs_kb_to_pages(mi.mem_available_kb, s->page_size) < s->b.guard_available_pages;
}

/*
 * Offline in a child: the kernel retries an offline until a fatal signal
 * (a page that will not migrate keeps it busy for ever), so the child is
 * killed, and the offline rolled back, after the timeout or as soon as
 * MemAvailable falls below the guard: the daemon must be free to give
 * memory back.
 */
static int offline_block(struct backend_stock *s, uint32_t id)
{
	usec_t_ deadline;
	pid_t pid;
	int status, pfd, r;

	pid_t parent = getpid();

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/*
		 * A daemon killed with SIGKILL cannot kill us: die with it (and
		 * in any case after twice the timeout), or the orphaned offline
		 * keeps the hotplug lock and the next regionpmd's --restore
		 * waits for it (seen in daemon-stock under load).
		 */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(ECHILD);
		alarm(2 * STOCK_OFFLINE_TIMEOUT_MS / 1000);
		r = memblock_write_state(s->root, id, "offline");

		_exit(r < 0 ? -r : 0);
	}
	/*
	 * Sleep on a pidfd until the child ends, waking every
	 * STOCK_OFFLINE_POLL_MS for the guard: a 10 ms waitpid() loop woke
	 * the daemon 100 times a second for as long as an offline took
	 * (seconds each under load: 1,474 wakeups a minute on fragment at
	 * 8 GiB while it parked).
	 */
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	deadline = now_usec() + STOCK_OFFLINE_TIMEOUT_MS * 1000ULL;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		bool late;

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			r = -errno;
			if (pfd >= 0)
				close(pfd);
			return r;
		}
		late = now_usec() >= deadline;
		if (late || memory_short(s)) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			if (pfd >= 0)
				close(pfd);
			return late ? -ETIMEDOUT : -EAGAIN;
		}
		if (pfd >= 0) {
			struct pollfd pf = { .fd = pfd, .events = POLLIN };

			poll(&pf, 1, STOCK_OFFLINE_POLL_MS);
		} else {
			/* No pidfd (kernel before 5.3): poll the child. */
			struct timespec ts = { .tv_nsec = STOCK_OFFLINE_POLL_MS * 1000000L };

			nanosleep(&ts, NULL);
		}
	}
	if (pfd >= 0)
		close(pfd);
	if (WIFEXITED(status))
		return -WEXITSTATUS(status);
	return -EINTR;
}

static uint64_t migrated_so_far(struct backend_stock *s)
{
	struct rpm_vmstat vs;

	return procfs_read_vmstat(s->root, &vs) == 0 ? vs.pgmigrate_success : 0;
}

/*
 * The online block @m can be offlined and come back in its zone (see
 * memblock_returns_to_zone()); else -EBUSY with the reason.
 */
static int zone_kept(struct backend_stock *s, const struct memblock *m)
{
	struct memblock *v;
	size_t n, i;
	bool ok;
	int r = memblock_list(s->root, &v, &n);

	if (r < 0)
		return set_err(s, r, "listing memory blocks: %s", strerror(-r));
	for (i = 0; i < n && v[i].id != m->id; i++)
		;
	ok = i < n && memblock_returns_to_zone(v, n, i);
	free(v);
	if (ok)
		return 0;
	if (i < n && s->cache && m->id < s->n_cache)
		s->cache[m->id].zone_edge = true;
	if (strchr(m->zones, ' ') || !strcmp(m->zones, "none"))
		return set_err(s, -EBUSY, "memory block %" PRIu32 " spans zones (%s): the "
			       "kernel cannot offline it", m->id, m->zones);
	return set_err(s, -EBUSY, "memory block %" PRIu32 " is at an end of zone %s on node "
		       "%" PRIu32 ": online again it would join zone Normal", m->id, m->zones,
		       m->node);
}

static int stock_park(struct rpm_backend *b, uint32_t id, bool compact_first, uint32_t mode,
		      uint64_t budget, struct rpm_compact_result *res)
{
	struct backend_stock *s = S(b);
	const struct rpm_region_detail *d;
	usec_t_ t0 = now_usec();
	uint64_t mig0;
	struct memblock m;
	int r;

	(void)compact_first;	/* offlining empties the block anyway */
	(void)mode;
	(void)budget;
	s->err[0] = '\0';
	if (res) {
		memset(res, 0, sizeof(*res));
		res->id = id;
	}
	r = memblock_read(s->root, id, &m);
	if (r < 0)
		return set_err(s, r, "memory block %" PRIu32 ": %s", id, strerror(-r));
	if (m.state != MEMBLOCK_ONLINE)
		return set_err(s, -EBUSY, "memory block %" PRIu32 " is %s", id,
			       memblock_state_name(m.state));
	r = zone_kept(s, &m);
	if (r < 0)
		return r;
	/* What the kernel would refuse at once, refused without a try. */
	r = scan_block(s, id);
	if (r < 0)
		return r;
	d = &s->cache[id].detail;
	if (d->slab + d->page_table + d->reserved)
		return set_err(s, -EBUSY, "memory block %" PRIu32 " holds unmovable pages "
			       "(%" PRIu64 " slab, %" PRIu64 " page table, %" PRIu64 " reserved)",
			       id, d->slab, d->page_table, d->reserved);
	/* Recorded before it is offline: a crash in between leaves a record
	 * of an online block, which --restore skips. */
	r = offline_state_add(&s->st, id, m.zones);
	if (r < 0)
		return set_err(s, r, "recording in %s: %s", s->st.path, strerror(-r));
	mig0 = migrated_so_far(s);
	r = offline_block(s, id);
	if (r < 0) {
		offline_state_remove(&s->st, id);
		scan_block(s, id);
		return set_err(s, r, "offlining memory block %" PRIu32 ": %s", id,
			       r == -EBUSY ? "unmovable or pinned pages" :
			       r == -ETIMEDOUT ? "pages would not migrate in time" :
			       r == -EAGAIN ? "memory got short, given up" : strerror(-r));
	}
	s->cache[id].valid = false;
	if (res) {
		res->migrated = migrated_so_far(s) - mig0;
		res->scanned = s->block_pages;
		res->elapsed_ns = (now_usec() - t0) * 1000;
	}
	return 0;
}

static int stock_unpark(struct rpm_backend *b, uint32_t id)
{
	struct backend_stock *s = S(b);
	const char *zone = offline_state_zone(&s->st, id);
	struct offline_rec rec = { .id = id };
	struct memblock m;
	int r;

	s->err[0] = '\0';
	if (!zone)
		return set_err(s, -EPERM, "memory block %" PRIu32 " was not offlined by "
			       "regionpmd: left alone", id);
	snprintf(rec.zone, sizeof(rec.zone), "%s", zone);
	r = memblock_read(s->root, id, &m);
	if (r < 0)
		return set_err(s, r, "memory block %" PRIu32 ": %s", id, strerror(-r));
	if (m.state == MEMBLOCK_OFFLINE) {
		r = offline_state_online(s->root, &rec, m.zones);
		if (r < 0)
			return set_err(s, r, "onlining memory block %" PRIu32 ": %s", id,
				       strerror(-r));
	}
	offline_state_remove(&s->st, id);
	if (id < s->n_cache)
		s->cache[id].valid = false;
	return 0;
}

static int stock_event_fd(const struct rpm_backend *b)
{
	(void)b;
	return -1;
}

static int stock_read_events(struct rpm_backend *b, rpm_event_cb cb, void *userdata)
{
	(void)b;
	(void)cb;
	(void)userdata;
	return 0;
}

static uint32_t stock_owner(const struct rpm_backend *b)
{
	return ((const struct backend_stock *)b)->owner;
}

static const char *stock_error(const struct rpm_backend *b)
{
	return ((const struct backend_stock *)b)->err;
}

static void stock_set_debug(struct rpm_backend *b, FILE *debug)
{
	(void)b;
	(void)debug;
}

const struct rpm_backend_ops rpm_backend_stock = {
	.name = "stock",
	.probe = stock_probe,
	.open = stock_open,
	.close = stock_close,
	.caps = stock_caps,
	.info = stock_info,
	.dump = stock_dump,
	.region_get = stock_region_get,
	.compact = stock_compact,
	.park = stock_park,
	.unpark = stock_unpark,
	.event_fd = stock_event_fd,
	.read_events = stock_read_events,
	.owner = stock_owner,
	.error = stock_error,
	.set_debug = stock_set_debug,
};
