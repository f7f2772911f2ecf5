// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * regionpmd manager: event sources and state.  The decisions are made by
 * policy_decide() (policy.c, pure); this file only observes, executes and
 * reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <libcgroup.h>
#include <limits.h>
#include <linux/regionpm.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "idle-sampler.h"
#include "metrics.h"
#include "power-model.h"
#include "log.h"
#include "manager.h"
#include "fs-checkpoint.h"
#include "procfs-util.h"
#include "psi-monitor.h"
#include "reclaim-watch.h"

#define MAX_ACTIONS 64
#define KPF_LRU		5
#define KPF_ANON	12
#define KPF_NOPAGE	20

static usec_t_ now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (usec_t_)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void report(struct manager *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(struct manager *m, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_info("%s", line);
	if (m->report) {
		fprintf(m->report, "%s\n", line);
		fflush(m->report);
	}
}

/*
 * Regions are kept sorted by id (manager_dump() sorts the kernel's dump),
 * and ids are usually dense, so the lookup is O(1) or a binary search:
 * hosts with tens of thousands of regions call this per action and event.
 */
static struct rpm_region *find_region(struct manager *m, uint32_t id)
{
	size_t lo = 0, hi = m->n_regions;

	if (id < m->n_regions && m->regions[id].id == id)
		return &m->regions[id];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->regions[mid].id == id)
			return &m->regions[mid];
		if (m->regions[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int region_id_cmp(const void *a, const void *b)
{
	const struct rpm_region *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int note_error(struct manager *m, int r);
static bool release_awaited(const struct rpm_region *reg);
static uint64_t next_pass_usec(struct manager *m);
static void wake_pass(struct manager *m, uint64_t after_usec);

static void note(struct manager *m, enum manager_note what, uint32_t id, uint32_t arg)
{
	if (m->notify)
		m->notify(m, what, id, arg);
}

/* Copy the kernel view of @src into @dst, keeping the daemon view. */
static void merge_kernel_view(struct manager *m, struct rpm_region *dst,
			      const struct rpm_region *src)
{
	bool was_ours = dst->ours;

	dst->id = src->id;
	dst->start_pfn = src->start_pfn;
	dst->spanned_pages = src->spanned_pages;
	dst->managed_pages = src->managed_pages;
	dst->free_pages = src->free_pages;
	dst->node = src->node;
	memcpy(dst->zones, src->zones, sizeof(dst->zones));
	dst->no_park = src->no_park;
	dst->state = src->state;
	dst->owner_portid = src->owner_portid;
	dst->parked_pages = src->parked_pages;
	if (src->detail.valid)
		dst->detail = src->detail;
	dst->ours = (src->state == RPM_REGION_PARKED || src->state == RPM_REGION_HELD) &&
		    src->owner_portid == m->backend->ops->owner(m->backend);
	/*
	 * Ours until now, and we did not give it back (an unpark clears ours
	 * first): the kernel did, and a dump between its release and our read
	 * of the event saw it.  The event must still count it, with its reason.
	 */
	if (was_ours && !dst->ours)
		dst->release_unseen = now_usec();
	else if (dst->ours)
		dst->release_unseen = 0;
	if (!(dst->ours && src->state == RPM_REGION_HELD))
		dst->hold_since = 0;
}

/* ---- observing ------------------------------------------------------------ */

struct dump_ctx {
	struct manager *m;
	struct rpm_region *v;
	size_t n, cap;
};

static int dump_cb(const struct rpm_region *r, void *userdata)
{
	struct dump_ctx *d = userdata;

	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		struct rpm_region *v = realloc(d->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n++] = *r;
	return 0;
}

/*
 * Regions ours in the last dump and absent from this one (@v, sorted by
 * id): their memory was removed (virtio-mem unplug, hot-remove), which the
 * kernel releases them for first.  Their release events may still be on
 * the way, but will find no region to count: count them here.
 */
static void note_vanished(struct manager *m, const struct rpm_region *v, size_t n)
{
	for (size_t i = 0; i < m->n_regions; i++) {
		const struct rpm_region *old = &m->regions[i];

		if (!old->ours && !release_awaited(old))
			continue;
		if (bsearch(old, v, n, sizeof(*v), region_id_cmp))
			continue;
		m->released_by_kernel++;
		log_notice("region %u: released by the kernel (its memory was removed)", old->id);
	}
}

static int manager_dump(struct manager *m)
{
	struct dump_ctx d = { .m = m };
	int r;

	r = m->backend->ops->dump(m->backend, dump_cb, &d);
	if (r < 0) {
		free(d.v);
		log_warning("region dump failed: %s%s%s", strerror(-r),
			    *backend_error(m->backend) ? ": " : "", backend_error(m->backend));
		return r;
	}
	qsort(d.v, d.n, sizeof(*d.v), region_id_cmp);
	for (size_t i = 0; i < d.n; i++) {
		struct rpm_region fresh = d.v[i], *old = find_region(m, fresh.id);

		if (old) {
			struct rpm_region keep = *old;

			merge_kernel_view(m, &keep, &fresh);
			d.v[i] = keep;
		} else {
			memset(&d.v[i], 0, sizeof(d.v[i]));
			merge_kernel_view(m, &d.v[i], &fresh);
			d.v[i].last_action = "none";
		}
	}
	note_vanished(m, d.v, d.n);
	free(m->regions);
	m->regions = d.v;
	m->n_regions = d.n;
	m->need_dump = false;
	return 0;
}

static int refresh_region(struct manager *m, struct rpm_region *reg, bool scan)
{
	struct rpm_region fresh;
	int r;

	memset(&fresh, 0, sizeof(fresh));
	r = m->backend->ops->region_get(m->backend, reg->id, scan, &fresh);
	if (r < 0) {
		log_debug("region-get %u: %s%s%s", reg->id, strerror(-r),
			  *backend_error(m->backend) ? ": " : "", backend_error(m->backend));
		return r;
	}
	merge_kernel_view(m, reg, &fresh);
	if (scan && fresh.detail.valid) {
		const struct rpm_region_detail *d = &fresh.detail;

		log_debug("region %u detail: free %" PRIu64 " anon %" PRIu64 " file %" PRIu64
			  "+%" PRIu64 " dirty wb %" PRIu64 " shmem %" PRIu64 " unevictable %" PRIu64
			  " slab %" PRIu64 " page-table %" PRIu64 " reserved %" PRIu64
			  " kernel-other %" PRIu64 " offline %" PRIu64, reg->id, d->free, d->anon,
			  d->file_clean, d->file_dirty, d->writeback, d->shmem, d->unevictable,
			  d->slab, d->page_table, d->reserved, d->kernel_other, d->offline);
	}
	return 0;
}

int manager_read_meminfo(const char *root, uint64_t page_size,
			 uint64_t *total, uint64_t *available, uint64_t *free_pages)
{
	struct rpm_meminfo mi;
	int r = procfs_read_meminfo(root, &mi);

	if (r < 0)
		return r;
	*total = procfs_kb_to_pages(mi.mem_total_kb, page_size);
	*available = procfs_kb_to_pages(mi.mem_available_kb, page_size);
	*free_pages = procfs_kb_to_pages(mi.mem_free_kb, page_size);
	return 0;
}

/* ---- protected cgroups ---------------------------------------------------- */

static struct manager *nftw_manager;

static int prot_walk(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct manager *m = nftw_manager;

	(void)path;
	(void)ftw;
	if (type != FTW_D)
		return 0;
	if (m->n_prot_ino == m->cap_prot_ino) {
		size_t cap = m->cap_prot_ino ? m->cap_prot_ino * 2 : 256;
		uint64_t *v;

		if (cap > MANAGER_MAX_PROT_INO)
			return 1;
		v = realloc(m->prot_ino, cap * sizeof(*v));
		if (!v)
			return 1;
		m->prot_ino = v;
		m->cap_prot_ino = cap;
	}
	m->prot_ino[m->n_prot_ino++] = st->st_ino;
	return 0;
}

/*
 * Resolve [Protect] Cgroup= with libcgroup: collect the inode of each cgroup
 * and of every descendant (what /proc/kpagecgroup reports).  Called before
 * every decision that could drop page cache, not only at start and reload:
 * a restarted service gets a new cgroup with a new inode.  Whatever cannot
 * be resolved completely makes m->prot_unknown true, and then no page cache
 * is dropped at all (migrated instead) rather than maybe a protected page.
 * A cgroup that does not exist (its service is stopped) has no pages.
 */
static void resolve_protected(struct manager *m)
{
	char *mnt = NULL;
	size_t total = 0;
	int r;

	m->n_prot_ino = 0;
	m->prot_unknown = false;
	m->prot_resolved_pass = m->passes;
	if (!m->config.n_protected)
		return;
	r = cgroup_init();
	if (r) {
		log_warning("protected cgroups: libcgroup: %s; no page cache is dropped",
			    cgroup_strerror(r));
		m->prot_unknown = true;
		return;
	}
	if (cgroup_get_subsys_mount_point("memory", &mnt) || !mnt) {
		free(mnt);
		mnt = strdup("/sys/fs/cgroup");
		if (!mnt) {
			m->prot_unknown = true;
			return;
		}
	}
	for (size_t i = 0; i < m->config.n_protected; i++) {
		const char *name = m->config.protected_cgroups[i];
		char path[PATH_MAX + 64];
		size_t before = m->n_prot_ino;
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", mnt, name[0] == '/' ? name + 1 : name);
		if (stat(path, &st) < 0) {
			log_debug("protected cgroup %s: %s (not running?)", name, strerror(errno));
			continue;
		}
		nftw_manager = m;
		r = nftw(path, prot_walk, 16, FTW_PHYS);
		if (r != 0) {
			log_warning("protected cgroup %s: walk stopped after %zu cgroups (%s); "
				    "no page cache is dropped", name, m->n_prot_ino,
				    r < 0 ? strerror(errno) : "too many cgroups");
			m->prot_unknown = true;
		}
		log_debug("protected cgroup %s (%s): %zu cgroup inode(s)", name, path,
			  m->n_prot_ino - before);
		total += m->n_prot_ino - before;
	}
	if (total != m->prot_logged) {
		log_info("protecting the page cache of %zu cgroup(s) from %zu configured",
			 total, m->config.n_protected);
		m->prot_logged = total;
	}
	free(mnt);
}

static bool ino_protected(const struct manager *m, uint64_t ino)
{
	for (size_t i = 0; i < m->n_prot_ino; i++)
		if (m->prot_ino[i] == ino)
			return true;
	return false;
}

/* Does the region hold page cache charged to a protected cgroup? */
static bool region_has_protected_file(struct manager *m, const struct rpm_region *reg)
{
	char p1[4096], p2[4096];
	uint64_t flags[1024], ino[1024];
	bool found = false;
	int kf, kc;

	if (m->prot_resolved_pass != m->passes || m->passes == 0)
		resolve_protected(m);
	if (m->prot_unknown)
		return true;
	if (!m->n_prot_ino)
		return false;
	snprintf(p1, sizeof(p1), "%s/proc/kpageflags", m->root);
	snprintf(p2, sizeof(p2), "%s/proc/kpagecgroup", m->root);
	kf = open(p1, O_RDONLY | O_CLOEXEC);
	kc = open(p2, O_RDONLY | O_CLOEXEC);
	if (kf < 0 || kc < 0) {
		/* cannot tell: protect (migrate only) rather than drop */
		found = true;
		goto out;
	}
	for (uint64_t pfn = reg->start_pfn; pfn < reg->start_pfn + reg->spanned_pages && !found;) {
		uint64_t left = reg->start_pfn + reg->spanned_pages - pfn;
		size_t want = left < 1024 ? left : 1024;
		ssize_t a = pread(kf, flags, want * 8, (off_t)pfn * 8);
		ssize_t b = pread(kc, ino, want * 8, (off_t)pfn * 8);
		size_t n;

		if (a <= 0 || b <= 0)
			break;
		n = (size_t)(a < b ? a : b) / 8;
		for (size_t i = 0; i < n; i++) {
			if ((flags[i] & (1ULL << KPF_NOPAGE)) || !(flags[i] & (1ULL << KPF_LRU)) ||
			    (flags[i] & (1ULL << KPF_ANON)))
				continue;
			if (ino[i] && ino_protected(m, ino[i])) {
				found = true;
				break;
			}
		}
		pfn += n;
	}
out:
	if (kf >= 0)
		close(kf);
	if (kc >= 0)
		close(kc);
	return found;
}

/* ---- acting --------------------------------------------------------------- */

static const char *extack_sep(struct manager *m)
{
	return *backend_error(m->backend) ? ": " : "";
}

static int write_bias(struct manager *m)
{
	char path[4096];
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/sys/module/regionpm/parameters/bias", m->root);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) != 1)
		r = -errno;
	close(fd);
	return r;
}

static void on_sample_done(struct idle_sample *s, int error,
			   const struct idle_counts *c, void *userdata)
{
	struct manager *m = userdata;

	for (size_t i = 0; i < MANAGER_MAX_SAMPLES; i++) {
		struct rpm_region *reg;

		if (m->samples[i] != s)
			continue;
		m->samples[i] = NULL;
		reg = find_region(m, m->sample_region[i]);
		if (!reg)
			return;
		reg->idle_sampling = false;
		if (error < 0) {
			rpm_log_errno(LOG_DEBUG, error, "idle sample of region %u", reg->id);
			reg->idle_valid = false;
			return;
		}
		reg->idle_valid = true;
		reg->idle_when = now_usec();
		reg->idle_file_pages = c->idle_file;
		reg->idle_anon_pages = c->idle_anon;
		reg->sampled_pages = c->lru;
		log_debug("region %u idle: %" PRIu64 " of %" PRIu64 " LRU pages idle (%" PRIu64
			  " file, %" PRIu64 " anon)", reg->id, c->idle_file + c->idle_anon,
			  c->lru, c->idle_file, c->idle_anon);
		if (!m->once && m->pass_timer)	/* the policy can use it now */
			sd_event_source_set_time_relative(m->pass_timer, 0);
		if (m->once && !m->exiting) {
			bool pending = false;

			for (size_t j = 0; j < MANAGER_MAX_SAMPLES; j++)
				pending |= m->samples[j] != NULL;
			if (!pending)
				sd_event_exit(m->event, 0);
		}
		return;
	}
}

/* Can another idle sample start ([Idle] MaxRegions=)? */
static bool samplers_busy(const struct manager *m)
{
	size_t busy = 0, max = m->config.idle_max_regions ? m->config.idle_max_regions : 1;

	for (size_t i = 0; i < MANAGER_MAX_SAMPLES; i++)
		busy += m->samples[i] != NULL;
	return busy >= max || busy >= MANAGER_MAX_SAMPLES;
}

static void start_sample(struct manager *m, struct rpm_region *reg)
{
	size_t slot = MANAGER_MAX_SAMPLES;
	int r;

	if (reg->idle_sampling || samplers_busy(m))
		return;
	for (size_t i = 0; i < MANAGER_MAX_SAMPLES && slot == MANAGER_MAX_SAMPLES; i++)
		if (!m->samples[i])
			slot = i;
	r = idle_sample_start(m->event, m->root, reg->start_pfn, reg->spanned_pages,
			      m->config.idle_sample_sec, on_sample_done, m, &m->samples[slot]);
	if (r < 0) {
		rpm_log_errno(LOG_DEBUG, r, "idle sample of region %u", reg->id);
		return;
	}
	m->sample_region[slot] = reg->id;
	reg->idle_sampling = true;
}

/*
 * A parked region has no pages to sample: the count at the end would walk
 * its bitmap for nothing and wake a pass to use a result nobody needs.
 */
static void cancel_sample(struct manager *m, struct rpm_region *reg)
{
	for (size_t i = 0; i < MANAGER_MAX_SAMPLES; i++) {
		if (!m->samples[i] || m->sample_region[i] != reg->id)
			continue;
		idle_sample_cancel(m->samples[i]);
		m->samples[i] = NULL;
		reg->idle_sampling = false;
		log_debug("region %u: parked: its idle sample is dropped", reg->id);
	}
}

static bool checkpoint_journals(struct manager *m, struct rpm_region *reg, usec_t_ now);
static void do_park(struct manager *m, struct rpm_region *reg, const struct rpm_action *a,
		    usec_t_ now);

/*
 * The headroom as the policy counts it (a share of MemTotal plus what is
 * parked, on a sliding scale for HeadroomPercent=auto), and MemAvailable,
 * in pages.
 */
static int headroom_now(struct manager *m, uint64_t *headroom, uint64_t *avail)
{
	uint64_t total, free_pages;
	int r = manager_read_meminfo(m->root, m->page_size, &total, avail, &free_pages);

	if (r < 0)
		return r;
	*headroom = policy_headroom_pages(&m->config.policy, total, m->page_size,
					  m->regions, m->n_regions);
	return 0;
}

/* May all of @reg leave the allocator now? */
static bool park_fits(struct manager *m, const struct rpm_region *reg)
{
	uint64_t headroom, avail;

	if (headroom_now(m, &headroom, &avail) < 0)
		return false;
	return avail >= reg->spanned_pages + headroom;
}

/*
 * A backend that cannot migrate without parking (stock: offlining a memory
 * block is how its pages move) got a MIGRATE or BOTH compaction: park the
 * region instead, which empties it in one call, if parking is on and the
 * whole region may leave MemAvailable.
 */
static void compact_by_parking(struct manager *m, struct rpm_region *reg,
			       const struct rpm_action *a, usec_t_ now)
{
	struct rpm_action pa = *a;

	policy_note_compact(&m->pstate, reg, now, 0, 0, 0, 0);	/* budget unused */
	if (!m->config.policy.park || !park_fits(m, reg)) {
		log_debug("region %u: %s backend migrates only by parking, and parking it "
			  "now would go below the headroom (or Park=no)", reg->id,
			  backend_name(m->backend));
		reg->last_action = "needs park";
		return;
	}
	pa.kind = RPM_ACT_PARK;
	pa.reason = "empty it by parking (the backend cannot migrate otherwise)";
	do_park(m, reg, &pa, now);
}

static void do_compact(struct manager *m, struct rpm_region *reg, const struct rpm_action *a,
		       usec_t_ now)
{
	struct rpm_compact_result res;
	uint32_t mode = a->mode;
	int r;

	if (mode != RPM_COMPACT_MIGRATE && m->config.n_protected &&
	    region_has_protected_file(m, reg)) {
		log_info("region %u holds page cache of a protected cgroup: migrate, never drop",
			 reg->id);
		mode = RPM_COMPACT_MIGRATE;
		m->protected_forced++;
	}
	if (m->dry_run) {
		report(m, "region %u: would compact (mode %s, budget %" PRIu64 "): %s", reg->id,
		       rpm_compact_mode_name(mode), a->budget, a->reason ? a->reason : "");
		return;
	}
	r = m->backend->ops->compact(m->backend, reg->id, mode, a->budget, &res);
	if (r == -EOPNOTSUPP && !(backend_caps(m->backend) & RPM_CAP_MIGRATE)) {
		compact_by_parking(m, reg, a, now);
		return;
	}
	if (r < 0) {
		log_warning("region %u: compact (mode %s) failed: %s%s%s", reg->id,
			    rpm_compact_mode_name(mode), strerror(-r), extack_sep(m),
			    backend_error(m->backend));
		policy_note_compact(&m->pstate, reg, now, 0, 0, 0, r);
		m->errors++;
		reg->last_action = "compact failed";
		m->last_error = r;
		snprintf(m->last_extack, sizeof(m->last_extack), "%s", backend_error(m->backend));
		return;
	}
	m->compacts++;
	m->migrated += res.migrated;
	m->dropped += res.dropped;
	m->failed += res.failed;
	report(m, "region %u: compacted (mode %s, budget %" PRIu64 "): migrated %" PRIu64
	       " dropped %" PRIu64 " failed %" PRIu64 " skipped %" PRIu64 ", %" PRIu64
	       " free, %.1f ms%s%s%s", reg->id, rpm_compact_mode_name(mode), a->budget,
	       res.migrated, res.dropped, res.failed, res.skipped, res.free_pages,
	       res.elapsed_ns / 1e6, res.obstacle ? ", obstacle " : "",
	       res.obstacle ? rpm_obstacle_name(res.obstacle) : "",
	       *backend_error(m->backend) ? " (kernel says so)" : "");
	if (*backend_error(m->backend))
		log_debug("region %u: kernel: %s", reg->id, backend_error(m->backend));
	policy_note_compact(&m->pstate, reg, now, res.migrated, res.dropped, res.failed, 0);
	reg->last_action = "compacted";
	policy_note_obstacle(&m->config.policy, reg, now, res.obstacle, res.migrated + res.dropped);
	if (res.migrated + res.dropped)
		m->progress = true;
	/* a fresh breakdown (one region, O(its pages)): the policy must not
	 * plan the next call from what the region held before this one */
	refresh_region(m, reg, true);
	note(m, MANAGER_NOTE_COMPACTED, reg->id, 0);
}

static void do_park(struct manager *m, struct rpm_region *reg, const struct rpm_action *a,
		    usec_t_ now)
{
	struct rpm_compact_result res = { 0 };
	uint32_t mode = a->mode;
	bool stuck;
	int r;

	if (m->dry_run) {
		report(m, "region %u: would park%s: %s", reg->id,
		       a->compact_first ? " after compacting" : "", a->reason ? a->reason : "");
		return;
	}
	if (a->compact_first && mode != RPM_COMPACT_MIGRATE && m->config.n_protected &&
	    region_has_protected_file(m, reg)) {
		log_info("region %u holds page cache of a protected cgroup: migrate, never drop",
			 reg->id);
		mode = RPM_COMPACT_MIGRATE;
		m->protected_forced++;
	}
	{
		uint64_t headroom = 0, avail;

		/* a park that migrates gives up when memory gets short */
		if (headroom_now(m, &headroom, &avail) < 0)
			headroom = 0;
		m->backend->guard_available_pages = headroom;
	}
	r = m->backend->ops->park(m->backend, reg->id, a->compact_first, mode, a->budget, &res);
	if (a->compact_first) {
		/* The compaction ran even if the park then failed. */
		m->compacts++;
		m->migrated += res.migrated;
		m->dropped += res.dropped;
		m->failed += res.failed;
		policy_note_compact(&m->pstate, reg, now, res.migrated, res.dropped, res.failed,
				    r < 0 && !(res.migrated + res.dropped) ? r : 0);
		if (r >= 0)
			policy_note_obstacle(&m->config.policy, reg, now, res.obstacle,
					     res.migrated + res.dropped);
		if (res.migrated + res.dropped)
			m->progress = true;
	}
	/*
	 * Stopped before the kernel's marks: not an error and nothing in the
	 * way, the keep set lacks free memory now; the policy waits for room.
	 */
	if (r == -EBUSY && res.obstacle == REGIONPM_OBSTACLE_NO_ROOM) {
		log_info("region %u: emptying stopped after %" PRIu64 " pages: no free memory "
			 "above the kernel's watermarks", reg->id, res.migrated + res.dropped);
		refresh_region(m, reg, true);
		policy_note_obstacle(&m->config.policy, reg, now, res.obstacle,
				     res.migrated + res.dropped);
		return;
	}
	if (r < 0) {
		log_info("region %u: park%s refused: %s%s%s", reg->id,
			 a->compact_first ? " with compaction" : "", strerror(-r),
			 extack_sep(m), backend_error(m->backend));
		m->errors++;
		reg->last_action = "park refused";
		m->last_error = r;
		snprintf(m->last_extack, sizeof(m->last_extack), "%s", backend_error(m->backend));
		/*
		 * Full of what the region holds now: plan the next call from
		 * it.  A region that looked empty gets its breakdown too: what
		 * kept it is not managed (reserved memory, the memmap of a
		 * hotplugged block), and only the breakdown shows that, so
		 * that the plan stops counting it as spare.
		 */
		refresh_region(m, reg, a->compact_first || r == -ETIMEDOUT ||
			       !region_used_pages(reg));
		/*
		 * Refused for good (ZONE_DMA, max_parked_pct), pages that would
		 * not move (fileserver: ext4 metadata and kernel pages left
		 * four regions that the daemon held, compacted and released
		 * every 30 s to the end, each call moving a few dozen pages of
		 * cache that had come back), or a backend whose park migrates
		 * (stock: offline) failed: back off (doubling) instead of
		 * asking again every pass.  The obstacle code only has to be
		 * non-zero.
		 */
		stuck = policy_park_stuck(r, res.migrated + res.dropped, region_used_pages(reg));
		/*
		 * Buffers the journals pinned can move after a checkpoint: try
		 * again, at once or after the next checkpoint allowed.  The
		 * stock backend's offline does not refuse such a page, it
		 * retries it until killed: its timeout is the same refusal
		 * (CI saw an offline spend its 5 s on one bdev page with
		 * buffers, refcount 3, that jbd2 held).
		 */
		if (((stuck && r == -EBUSY) || r == -ETIMEDOUT) &&
		    checkpoint_journals(m, reg, now))
			return;
		if (stuck || !(backend_caps(m->backend) & RPM_CAP_MIGRATE))
			policy_note_obstacle(&m->config.policy, reg, now,
					     res.obstacle ? res.obstacle : REGIONPM_OBSTACLE_KERNEL, 0);
		else if (a->compact_first)
			policy_note_obstacle(&m->config.policy, reg, now, res.obstacle,
					     res.migrated + res.dropped);
		return;
	}
	if (a->compact_first)
		report(m, "region %u: emptied (mode %s, budget %" PRIu64 "): migrated %" PRIu64
		       " dropped %" PRIu64 " failed %" PRIu64 ", %.1f ms", reg->id,
		       rpm_compact_mode_name(mode), a->budget, res.migrated, res.dropped,
		       res.failed, res.elapsed_ns / 1e6);
	m->parks++;
	m->progress = true;
	/* parking that migrates (stock: offline) says how much moved; a
	 * compacting park was counted above */
	if (!a->compact_first) {
		m->migrated += res.migrated;
		m->pstate.total_migrated += res.migrated;
		reg->pages_migrated += res.migrated;
	}
	refresh_region(m, reg, false);
	reg->ours = true;
	reg->release_unseen = 0;
	reg->state = RPM_REGION_PARKED;
	cancel_sample(m, reg);
	policy_note_parked(&m->pstate, reg, now);
	reg->last_action = "parked";
	report(m, "region %u: parked (%" PRIu64 " pages held, %" PRIu64 " migrated, %.1f ms): %s",
	       reg->id, reg->parked_pages, res.migrated, res.elapsed_ns / 1e6,
	       a->reason ? a->reason : "");
	note(m, MANAGER_NOTE_PARKED, reg->id, 0);
}

/*
 * A park was refused with page cache left in the region that would not
 * move: if CheckpointJournals= allows, checkpoint every ext4 journal
 * (fs-checkpoint.h says why that frees such pages), or have the region
 * wait for the next checkpoint allowed (policy_checkpoint_step() says
 * when).  Returns true if the region is to be tried again rather than
 * backed off: a journal was checkpointed, or it waits for that.
 */
static bool checkpoint_journals(struct manager *m, struct rpm_region *reg, usec_t_ now)
{
	unsigned failed = 0;
	usec_t_ until = 0;
	int n;

	if (!m->config.policy.checkpoint_journals || !reg->detail.valid ||
	    !(reg->detail.file_clean + reg->detail.file_dirty))
		return false;
	switch (policy_checkpoint_step(reg, now, m->last_checkpoint, &until)) {
	case RPM_CHECKPOINT_NO:
		return false;
	case RPM_CHECKPOINT_WAIT:
		reg->backoff_until = until;
		reg->last_action = "waits for a journal checkpoint";
		return true;
	case RPM_CHECKPOINT_NOW:
		break;
	}
	m->last_checkpoint = now;
	reg->checkpoint_tries++;
	n = fs_checkpoint_ext4(m->root, &failed);
	if (n < 0) {
		log_info("cannot read the mount table to checkpoint ext4 journals: %s", strerror(-n));
		return false;
	}
	log_info("region %u: page cache would not move: checkpointed %d ext4 journal%s"
		 " (%u refused) so that the metadata buffers they pinned can move",
		 reg->id, n, n == 1 ? "" : "s", failed);
	return n > 0;
}

/* A numeric parameter of the regionpm module; 0 when it cannot be read. */
static uint64_t read_module_param(const struct manager *m, const char *name)
{
	char path[4096], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/sys/module/regionpm/parameters/%s", m->root, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoull(buf, NULL, 10);
}

/* The kernel's hold timeout (regionpm.hold_timeout_ms); 0 without holds. */
static usec_t_ read_hold_timeout(struct manager *m)
{
	return (usec_t_)read_module_param(m, "hold_timeout_ms") * 1000;
}

static void do_hold(struct manager *m, struct rpm_region *reg, const struct rpm_action *a,
		    usec_t_ now)
{
	bool renew = reg->state == RPM_REGION_HELD && reg->ours;
	int r;

	if (m->dry_run) {
		report(m, "region %u: would hold: %s", reg->id, a->reason ? a->reason : "");
		return;
	}
	r = m->backend->ops->hold ? m->backend->ops->hold(m->backend, reg->id) : -EOPNOTSUPP;
	if (r == -EOPNOTSUPP || r == -ENOENT) {
		/* an older kernel: work without holds */
		log_info("the kernel cannot hold regions (%s): working without", strerror(-r));
		m->hold_supported = false;
		return;
	}
	if (r < 0) {
		log_info("region %u: hold refused: %s%s%s", reg->id, strerror(-r), extack_sep(m),
			 backend_error(m->backend));
		m->errors++;
		reg->last_action = "hold refused";
		refresh_region(m, reg, false);
		/* Refused for good (a hole, ZONE_DMA, max_parked_pct, busy): back off. */
		policy_note_obstacle(&m->config.policy, reg, now, REGIONPM_OBSTACLE_KERNEL, 0);
		return;
	}
	refresh_region(m, reg, false);
	reg->ours = true;
	reg->release_unseen = 0;
	reg->state = RPM_REGION_HELD;
	reg->hold_since = now;
	reg->last_action = "held";
	if (!renew)
		report(m, "region %u: held (%" PRIu64 " free pages out of use): %s", reg->id,
		       reg->free_pages, a->reason ? a->reason : "");
}

static int unpark(struct manager *m, struct rpm_region *reg, const char *why)
{
	bool held = reg->state == RPM_REGION_HELD;
	int r;

	if (m->dry_run) {
		report(m, "region %u: would unpark: %s", reg->id, why);
		return 0;
	}
	r = m->backend->ops->unpark(m->backend, reg->id);
	if (r < 0) {
		note_error(m, r);
		refresh_region(m, reg, false);
		/*
		 * The kernel gave it back meanwhile (shrinker, OOM, timeout):
		 * its release event is on the way, nothing went wrong.
		 */
		if (r == -EINVAL && reg->state == RPM_REGION_ACTIVE) {
			log_debug("region %u: already given back by the kernel", reg->id);
			m->last_error = 0;
			return 0;
		}
		m->errors++;
		log_warning("region %u: unpark failed: %s%s%s", reg->id, strerror(-r),
			    m->last_extack[0] ? ": " : "", m->last_extack);
		return r;
	}
	policy_note_given(&m->pstate, reg);
	reg->ours = false;
	reg->state = RPM_REGION_ACTIVE;
	reg->hold_since = 0;
	if (held) {
		reg->last_action = "hold ended";
		report(m, "region %u: hold ended: %s", reg->id, why);
	} else {
		m->unparks++;
		policy_note_released(&m->pstate, reg, now_usec(), REGIONPM_RELEASE_REASON_UNPARK);
		reg->last_action = "unparked";
		report(m, "region %u: unparked: %s", reg->id, why);
	}
	refresh_region(m, reg, false);
	return 0;
}

static void execute(struct manager *m, const struct rpm_action *a, usec_t_ now)
{
	struct rpm_region *reg = a->kind == RPM_ACT_ENABLE_BIAS ? NULL : find_region(m, a->region);
	int r;

	static const char *const kinds[] = { "none", "enable-bias", "scan", "sample-idle",
					     "compact", "park", "unpark", "hold" };

	log_debug("  %s region %u (mode %s, budget %" PRIu64 "): %s",
		  (unsigned)a->kind < 8 ? kinds[a->kind] : "?", a->region,
		  rpm_compact_mode_name(a->mode), a->budget, a->reason ? a->reason : "");
	if (a->kind != RPM_ACT_ENABLE_BIAS && a->kind != RPM_ACT_NONE && !reg) {
		log_debug("action %d for unknown region %u ignored", a->kind, a->region);
		return;
	}
	/*
	 * A pass may plan several calls for one region; a backend that empties
	 * only by parking (stock) parks it on the first, and the rest would
	 * only be refused.  An idle sample of a region parked earlier in the
	 * pass would count nothing.
	 */
	if ((a->kind == RPM_ACT_COMPACT || a->kind == RPM_ACT_PARK || a->kind == RPM_ACT_HOLD ||
	     a->kind == RPM_ACT_SAMPLE_IDLE) && reg->state == RPM_REGION_PARKED) {
		log_debug("region %u: parked already in this pass, %s skipped", reg->id,
			  kinds[a->kind]);
		return;
	}
	if (m->paused && (a->kind == RPM_ACT_COMPACT || a->kind == RPM_ACT_PARK ||
			  a->kind == RPM_ACT_SCAN || a->kind == RPM_ACT_SAMPLE_IDLE ||
			  a->kind == RPM_ACT_HOLD))
		return;		/* Pause(): releases only */
	switch (a->kind) {
	case RPM_ACT_NONE:
		break;
	case RPM_ACT_ENABLE_BIAS:
		if (!(backend_caps(m->backend) & RPM_CAP_BIAS)) {
			m->pstate.bias_enabled = true;	/* nothing to enable here */
			break;
		}
		if (m->dry_run) {
			report(m, "would enable the allocation bias");
			break;
		}
		r = write_bias(m);
		if (r < 0) {
			rpm_log_errno(LOG_WARNING, r, "enabling the allocation bias");
			break;
		}
		m->pstate.bias_enabled = true;
		report(m, "allocation bias enabled");
		break;
	case RPM_ACT_SCAN:
		if (refresh_region(m, reg, true) == 0) {
			policy_note_scan(reg);
			m->progress = true;
		}
		break;
	case RPM_ACT_SAMPLE_IDLE:
		start_sample(m, reg);
		break;
	case RPM_ACT_COMPACT:
		do_compact(m, reg, a, now);
		break;
	case RPM_ACT_PARK:
		do_park(m, reg, a, now);
		break;
	case RPM_ACT_UNPARK:
		unpark(m, reg, a->reason ? a->reason : "policy");
		break;
	case RPM_ACT_HOLD:
		do_hold(m, reg, a, now);
		break;
	}
}

void manager_status(const struct manager *m, char *buf, size_t len)
{
	unsigned ours = 0, parked = 0, empty = 0;

	for (size_t i = 0; i < m->n_regions; i++) {
		const struct rpm_region *r = &m->regions[i];

		ours += r->ours;
		parked += r->state == RPM_REGION_PARKED;
		empty += (r->state == RPM_REGION_ACTIVE || r->state == RPM_REGION_HELD) &&
			 r->managed_pages && r->free_pages >= r->managed_pages;
	}
	snprintf(buf, len, "%zu regions, %u parked (%u by us), %u empty; keep set %u, %u to empty%s; "
		 "migrated %" PRIu64 ", dropped %" PRIu64 " pages%s", m->n_regions, parked, ours,
		 empty, m->pstate.plan.keep, m->pstate.plan.targets,
		 m->pstate.plan.converged ? " (converged)" : "",
		 m->migrated, m->dropped, m->dry_run ? " (dry run)" : "");
}

void manager_metrics(const struct manager *m, struct rpm_metrics *mx)
{
	memset(mx, 0, sizeof(*mx));
	for (size_t i = 0; i < m->n_regions; i++) {
		const struct rpm_region *r = &m->regions[i];

		if (r->state == RPM_REGION_PARKED)
			mx->regions_parked++;
		else if (r->state == RPM_REGION_BUSY)
			mx->regions_busy++;
		else if (r->managed_pages && r->free_pages >= r->managed_pages)
			mx->regions_empty++;
		else
			mx->regions_in_use++;
	}
	mx->region_size_bytes = m->info.region_size;
	mx->pages_migrated = m->migrated;
	mx->pages_dropped = m->dropped;
	mx->pages_failed = m->failed;
	mx->compactions = m->compacts;
	mx->parks = m->parks;
	mx->unparks = m->unparks;
	mx->released_by_kernel = m->released_by_kernel;
	mx->errors = m->errors;
	power_model_regions(m->regions, m->n_regions, m->page_size, &mx->modelled_power_mw,
			    &mx->power_down_ratio);
	mx->paused = m->paused;
	mx->dry_run = m->dry_run;
}

/* MetricsFile=: rewritten after every pass and at exit.  A failure is
 * logged when it starts or changes, not at every pass. */
static void write_metrics(struct manager *m)
{
	struct rpm_metrics mx;
	int r;

	if (!m->config.metrics_file)
		return;
	manager_metrics(m, &mx);
	r = metrics_write(m->config.metrics_file, &mx);
	if (r < 0 && r != m->metrics_error)
		rpm_log_errno(LOG_WARNING, r, "writing the metrics to %s", m->config.metrics_file);
	else if (r == 0 && m->metrics_error)
		log_info("metrics written to %s again", m->config.metrics_file);
	m->metrics_error = r;
}

/*
 * Every RECLAIM_WATCH_USEC while we keep memory back: a converged daemon
 * sleeps up to IdleIntervalSec=, and a fill of the page cache after an
 * idle spell had reclaim evict for that long before the daemon noticed.
 */
#define RECLAIM_WATCH_USEC	(2 * 1000000ULL)
/*
 * With first-allocation events a quiet system is read less often, down to
 * every RECLAIM_WATCH_MAX_USEC: memory that fills gets into an empty region
 * and the event hurries the watch back to RECLAIM_WATCH_USEC, as do
 * releases, PSI triggers and passes that acted.  Without events (the stock
 * backend) the period stays short.
 */
#define RECLAIM_WATCH_MAX_USEC	(16 * 1000000ULL)

static void on_reclaim_watch(struct reclaim_watch *w, uint64_t pages, void *userdata)
{
	struct manager *m = userdata;

	if (pages)
		log_debug("reclaim watch: %" PRIu64 " pages evicted or refaulted in %.1f s: deciding now",
			  pages, reclaim_watch_period(w) / 1e6);
	else if (reclaim_watch_fell_below(w))
		log_debug("reclaim watch: free memory fell below %" PRIu64
			  " pages while memory is parked: deciding now",
			  m->pstate.low_free_pages);
	else
		log_debug("reclaim watch: free memory reached the plan's mark of %" PRIu64
			  " pages: deciding now", m->pstate.plan.wake_free_pages);
	m->reclaim_watch_pages += pages;
	wake_pass(m, 0);
}

static void arm_reclaim_watch(struct manager *m)
{
	bool ours = false;

	for (size_t i = 0; i < m->n_regions && !ours; i++)
		ours = m->regions[i].ours;
	if (!m->reclaim_watch && ours && !m->once &&
	    reclaim_watch_new(m->event, m->root, RECLAIM_WATCH_USEC, on_reclaim_watch, m,
			      &m->reclaim_watch) < 0) {
		log_warning("cannot set up the reclaim watch: parked memory comes back on passes only");
		return;
	}
	reclaim_watch_set_max_period(m->reclaim_watch,
				     backend_caps(m->backend) & RPM_CAP_EVENTS ?
				     RECLAIM_WATCH_MAX_USEC : RECLAIM_WATCH_USEC);
	reclaim_watch_arm(m->reclaim_watch, ours && !m->exiting,
			  m->config.policy.reclaim_unpark_pages_per_sec);
	reclaim_watch_wake_at_free(m->reclaim_watch, m->pstate.plan.wake_free_pages);
	reclaim_watch_wake_below_free(m->reclaim_watch, m->pstate.low_free_pages);
}

int manager_pass(struct manager *m)
{
	struct rpm_action acts[MAX_ACTIONS];
	struct rpm_system sys = { .page_size = m->page_size };
	struct rpm_kernel_info info;
	struct rpm_zoneinfo zi;
	struct rpm_vmstat vm;
	char status[256], plan[96] = "";
	size_t n;
	int r;

	if (m->exiting)
		return 0;
	m->passes++;
	/*
	 * A pass that fails before the policy decides must not leave the
	 * last plan's recheck time behind: once past, next_pass_usec()
	 * would retry every millisecond.
	 */
	m->pstate.plan.recheck_at = 0;
	r = manager_dump(m);
	if (r < 0)
		return r;
	if (m->backend->ops->info(m->backend, &info) == 0)
		m->info = info;
	sys.now = now_usec();
	sys.idle_samplers_busy = samplers_busy(m);
	r = manager_read_meminfo(m->root, m->page_size, &sys.mem_total_pages,
				 &sys.mem_available_pages, &sys.mem_free_pages);
	if (r < 0)
		return rpm_log_errno(LOG_WARNING, r, "reading meminfo");
	psi_read_avg10(m->root, &sys.psi_some_avg10, &sys.psi_full_avg10);
	if (procfs_read_vmstat(m->root, &vm) == 0) {
		sys.vmstat_valid = true;
		sys.file_pages = vm.nr_file_pages;
		sys.anon_pages = vm.nr_anon_pages;
		sys.refault_file = vm.workingset_refault_file;
		sys.pgsteal = vm.pgsteal_kswapd + vm.pgsteal_direct;
	}
	if (procfs_read_zoneinfo(m->root, &zi) == 0 && zi.marks) {
		sys.marks_valid = true;
		sys.kernel_reserve_pages = zi.reserve_pages;
		sys.free_above_marks = zi.free_above_marks;
		sys.low_reserve_pages = zi.low_reserve_pages;
		sys.low_free_above_marks = zi.low_free_above_marks;
	}
	if (m->hold_supported) {
		sys.hold_timeout = read_hold_timeout(m);
		sys.can_hold = sys.hold_timeout > 0;
	}
	/* The stock backend offlines blocks: no such cap there. */
	if (backend_caps(m->backend) & RPM_CAP_MIGRATE) {
		uint64_t pct = read_module_param(m, "max_parked_pct");

		sys.max_parked_pct = pct < 100 ? (unsigned)pct : 0;
	}
	sys.psi_event = m->psi_event;
	m->psi_event = false;
	sys.no_kernel_release = !(backend_caps(m->backend) & RPM_CAP_KERNEL_RELEASE);
	sys.reclaim_watch_pages = m->reclaim_watch_pages;
	m->reclaim_watch_pages = 0;
	if (m->info.bias)
		m->pstate.bias_enabled = true;

	n = policy_decide(&m->config.policy, &m->pstate, &sys, m->regions, m->n_regions,
			  acts, MAX_ACTIONS);
	/* The keep set's figures: what a converged plan's wake mark is made of. */
	if (m->pstate.plan.planned)
		snprintf(plan, sizeof(plan), "; keep set %u regions, %" PRIu64 " pages for %" PRIu64
			 " needed", m->pstate.plan.keep, m->pstate.plan.keep_capacity,
			 m->pstate.plan.need_pages);
	log_debug("pass %u at %.1fs: MemAvailable %" PRIu64 "/%" PRIu64 " pages, MemFree %" PRIu64
		  " (%" PRIu64 " above the kernel's marks of %" PRIu64 "), PSI some %u.%02u%%, "
		  "%zu action(s)%s%s",
		  m->passes, (sys.now - m->started) / 1e6, sys.mem_available_pages, sys.mem_total_pages,
		  sys.mem_free_pages, sys.free_above_marks, sys.kernel_reserve_pages,
		  sys.psi_some_avg10 / 100, sys.psi_some_avg10 % 100, n,
		  m->pstate.plan.converged ? ", converged" : "", plan);
	for (size_t i = 0; i < n && !m->exiting; i++)
		execute(m, &acts[i], sys.now);
	m->idle_passes = n ? 0 : m->idle_passes + 1;
	if (m->pstate.plan.converged && !m->converged) {
		usec_t_ at = m->pstate.plan.recheck_at;
		char when[64];

		if (at)
			snprintf(when, sizeof(when), "in %.1f s (a back-off or the cache room ends)",
				 at > sys.now ? (at - sys.now) / 1e6 : 0.0);
		else
			snprintf(when, sizeof(when), "within IdleIntervalSec=%u",
				 m->config.idle_interval_sec);
		log_info("plan reached: %u regions kept (%u for max_parked_pct, %u for the "
			 "pages of the zones below ZONE_MOVABLE), %u parked; "
			 "next pass on an event, at %" PRIu64 " free pages, or %s",
			 m->pstate.plan.keep, m->pstate.plan.capped, m->pstate.plan.low_kept,
			 m->pstate.plan.parked, m->pstate.plan.wake_free_pages, when);
	}
	m->converged = m->pstate.plan.converged;
	arm_reclaim_watch(m);
	if (n)
		reclaim_watch_hurry(m->reclaim_watch);

	manager_status(m, status, sizeof(status));
	sd_notifyf(false, "STATUS=%s", status);
	if (m->once && m->report)
		fprintf(m->report, "pass: %zu action(s); %s\n", n, status);
	note(m, MANAGER_NOTE_PASS, 0, 0);
	write_metrics(m);
	return 0;
}

/* ---- event sources -------------------------------------------------------- */

/*
 * A release event normally comes within milliseconds of the dump that saw
 * the release; one that comes later is not the one awaited (that one was
 * lost: ENOBUFS, or the kernel could not allocate it) and must not be
 * counted as ours.
 */
#define RELEASE_EVENT_WAIT_USEC	(10 * 1000000ULL)

static bool release_awaited(const struct rpm_region *reg)
{
	return reg->release_unseen && now_usec() - reg->release_unseen < RELEASE_EVENT_WAIT_USEC;
}

static void on_event(const struct rpm_event *ev, void *userdata)
{
	struct manager *m = userdata;
	struct rpm_region *reg = find_region(m, ev->id);

	switch (ev->kind) {
	case RPM_EVENT_ALLOC:
		if (!reg)
			break;
		log_debug("region %u: first allocation", ev->id);
		reclaim_watch_hurry(m->reclaim_watch);
		refresh_region(m, reg, false);
		if (reg->last_vacated)
			policy_note_refill(&m->config.policy, &m->pstate, reg, now_usec());
		/* An empty region fills: the plan may change. */
		wake_pass(m, 1000000);
		break;
	case RPM_EVENT_RELEASE:
		note(m, MANAGER_NOTE_RELEASED, ev->id, ev->reason);
		reclaim_watch_hurry(m->reclaim_watch);
		if (!reg) {
			m->need_dump = true;
			break;
		}
		if (reg->ours || release_awaited(reg)) {
			/* not our own unpark (that cleared ours already) */
			m->released_by_kernel++;
			reg->ours = false;
			reg->release_unseen = 0;
			reg->state = RPM_REGION_ACTIVE;
			policy_note_released(&m->pstate, reg, now_usec(), (int)ev->reason);
			reg->last_action = "released";
			log_notice("region %u: released by the kernel (%s, %" PRIu64 " pages)",
				   ev->id, rpm_release_reason_name(ev->reason), ev->pages);
		}
		reg->hold_since = 0;
		refresh_region(m, reg, false);
		wake_pass(m, 0);
		break;
	case RPM_EVENT_COMPACT:
		log_debug("region %u: compaction: migrated %" PRIu64 " dropped %" PRIu64, ev->id,
			  ev->compact.migrated, ev->compact.dropped);
		break;
	}
}

static int on_genl_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct manager *m = userdata;
	int r;

	(void)s;
	(void)fd;
	(void)revents;
	r = m->backend->ops->read_events(m->backend, on_event, m);
	if (r == -ENOBUFS) {
		log_notice("events were lost (ENOBUFS): dumping all regions again");
		m->need_dump = true;
		manager_dump(m);
	} else if (r < 0) {
		rpm_log_errno(LOG_WARNING, r, "reading regionpm events");
	}
	note(m, MANAGER_NOTE_PASS, 0, 0);
	return 0;
}

static int on_pass_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;

	(void)usec;
	m->progress = false;
	manager_pass(m);
	sd_event_source_set_time_relative(s, next_pass_usec(m));
	return 0;
}

/*
 * While work goes on (a compaction moved pages, a region was parked or
 * scanned), decide again after a second: the policy's token bucket, not
 * the timer, paces the work.  A pass without any action waits
 * IntervalSec=; once the plan is reached, each idle pass doubles the wait
 * up to IdleIntervalSec=: a converged daemon wakes for events
 * (first allocations, releases, PSI triggers) and rarely otherwise.
 * While memory is short, passes come every RPM_POLICY_SHORT_POLL_MSEC
 * until one finds enough available again.
 */
static uint64_t next_pass_usec(struct manager *m)
{
	uint64_t base = (uint64_t)m->config.interval_sec * 1000000, max, t;
	unsigned shift;

	if (m->pstate.plan.short_of_memory)
		return RPM_POLICY_SHORT_POLL_MSEC * 1000;
	if (m->progress && m->config.interval_sec > 1)
		return 1000000;
	if (!m->pstate.plan.converged)
		return base;
	max = (uint64_t)m->config.idle_interval_sec * 1000000;
	shift = m->idle_passes < 16 ? m->idle_passes : 16;
	t = base << shift;
	if (t > max)
		t = max;
	if (t < base)
		t = base;
	/* No later than the plan's clock allows something new (a back-off ends). */
	if (m->pstate.plan.recheck_at) {
		usec_t_ now = now_usec(), at = m->pstate.plan.recheck_at;

		if (at <= now)
			return 1000;
		if (at - now + 1000 < t)
			t = at - now + 1000;
	}
	return t;
}

/* Something changed that the plan must see: decide again soon. */
static void wake_pass(struct manager *m, uint64_t after_usec)
{
	uint64_t next;

	m->idle_passes = 0;
	if (m->once || !m->pass_timer || m->exiting)
		return;
	if (sd_event_source_get_time(m->pass_timer, &next) >= 0) {
		uint64_t now;

		if (sd_event_now(m->event, CLOCK_MONOTONIC, &now) >= 0 && next <= now + after_usec)
			return;	/* due sooner anyway */
	}
	sd_event_source_set_time_relative(m->pass_timer, after_usec);
	sd_event_source_set_enabled(m->pass_timer, SD_EVENT_ON);
}

static void on_psi(struct psi_monitor *p, void *userdata)
{
	struct manager *m = userdata;

	(void)p;
	log_debug("memory pressure trigger");
	m->psi_event = true;
	reclaim_watch_hurry(m->reclaim_watch);
	manager_pass(m);	/* the policy unparks first when pressure builds */
	if (m->pstate.plan.short_of_memory)
		wake_pass(m, RPM_POLICY_SHORT_POLL_MSEC * 1000);
}

void manager_release_all(struct manager *m)
{
	for (size_t i = 0; i < m->n_regions; i++)
		if (m->regions[i].ours)
			unpark(m, &m->regions[i], "shutting down");
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct manager *m = userdata;

	(void)s;
	sd_notify(false, "STOPPING=1\nSTATUS=Releasing parked regions");
	log_info("signal %s: releasing parked regions and exiting", strsignal(si->ssi_signo));
	m->exiting = true;
	for (size_t i = 0; i < MANAGER_MAX_SAMPLES; i++) {
		idle_sample_cancel(m->samples[i]);
		m->samples[i] = NULL;
	}
	manager_release_all(m);
	write_metrics(m);	/* the final state: everything given back */
	sd_event_exit(m->event, 0);
	return 0;
}

static int setup_psi(struct manager *m)
{
	int r;

	m->psi = psi_monitor_free(m->psi);
	r = psi_monitor_new(m->event, m->root, m->config.psi_stall_usec,
			    m->config.psi_window_usec, 2, on_psi, m, &m->psi);
	if (r < 0)
		rpm_log_errno(LOG_WARNING, r, "memory pressure monitor");
	else
		log_info("memory pressure trigger: %u us of stall in %u us",
			 m->config.psi_stall_usec, m->config.psi_window_usec);
	return r;
}

/* Re-reads the configuration and re-arms what depends on it.  Returns
 * -errno if it could not be read: the previous configuration stays. */
static int reload(struct manager *m)
{
	unsigned warnings = 0;
	int r;

	sd_notifyf(false, "RELOADING=1\nSTATUS=Reloading configuration\nMONOTONIC_USEC=%" PRIu64,
		   (uint64_t)now_usec());
	r = manager_load_config(m, &warnings);
	if (r < 0)
		rpm_log_errno(LOG_ERR, r, "reloading the configuration, keeping the previous one");
	else
		log_info("configuration reloaded (%u warning(s))", warnings);
	manager_config_changed(m, NULL);
	note(m, MANAGER_NOTE_RELOADED, 0, 0);
	sd_notify(false, "READY=1\nSTATUS=Configuration reloaded");
	return r;
}

static int on_hup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)s;
	(void)si;
	reload(userdata);
	return 0;
}

/*
 * What HeadroomPercent= and HysteresisPercent= come to on this machine:
 * with auto the share is not a round number, and an operator reading
 * "10" in the defaults should see what is kept.
 */
static void log_headroom(struct manager *m)
{
	const struct rpm_policy_config *cfg = &m->config.policy;
	uint64_t total, avail, free_pages, all, headroom, limit;
	double mib = (double)m->page_size / (1 << 20);

	if (!m->backend || manager_read_meminfo(m->root, m->page_size, &total, &avail,
						&free_pages) < 0)
		return;
	headroom = policy_headroom_pages(cfg, total, m->page_size, m->regions, m->n_regions);
	limit = policy_park_limit_pages(cfg, total, m->page_size, m->regions, m->n_regions);
	all = policy_all_memory(total, m->regions, m->n_regions);
	log_info("headroom%s: MemAvailable kept at %.0f MiB or more (%.1f %% of %.0f MiB), "
		 "parking only above %.0f MiB", cfg->headroom_percent == RPM_HEADROOM_AUTO ?
		 " (auto)" : "", (double)headroom * mib,
		 all ? 100.0 * (double)headroom / (double)all : 0.0, (double)all * mib,
		 (double)limit * mib);
}

void manager_config_changed(struct manager *m, const char *key)
{
	bool all = !key;

	if (!m->config.interval_sec)
		m->config.interval_sec = 1;
	if (all || strstr(key, "Cgroup"))
		resolve_protected(m);
	if (!m->once && m->event && (all || strstr(key, "StallUSec") || strstr(key, "WindowUSec")))
		setup_psi(m);
	if (m->pass_timer && (all || strstr(key, "IntervalSec")))
		sd_event_source_set_time_relative(m->pass_timer,
						  (uint64_t)m->config.interval_sec * 1000000);
	if (all || strstr(key, "HeadroomPercent") || strstr(key, "HysteresisPercent"))
		log_headroom(m);
}

/* ---- life cycle ----------------------------------------------------------- */

int manager_new(struct manager **ret)
{
	struct manager *m = calloc(1, sizeof(*m));
	int r;

	if (!m)
		return -ENOMEM;
	m->root = "";
	m->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	m->started = now_usec();
	conf_defaults(&m->config);
	policy_state_init(&m->pstate);
	r = sd_event_default(&m->event);
	if (r < 0) {
		manager_free(m);
		return r;
	}
	*ret = m;
	return 0;
}

int manager_load_config(struct manager *m, unsigned *n_warnings)
{
	struct rpm_config c;
	int r;

	conf_defaults(&c);
	*n_warnings = 0;
	const char *dirs[] = { m->dropin_dir, NULL };

	r = conf_load(&c, m->config_path ? m->config_path : RPM_CONF_PATH,
		      m->dropin_dir ? dirs : conf_default_dropin_dirs, rpm_log_conf, m, n_warnings);
	if (r < 0) {
		conf_free(&c);
		return r;
	}
	conf_free(&m->config);
	m->config = c;
	if (!m->config.interval_sec)
		m->config.interval_sec = 1;
	return 0;
}

int manager_start(struct manager *m)
{
	int r;

	r = backend_open(m->config.backend, m->root, m->packet_dump ? stderr : NULL, &m->backend);
	if (r < 0)
		return r;
	r = m->backend->ops->info(m->backend, &m->info);
	if (r < 0)
		return rpm_log_errno(LOG_ERR, r, "%s info%s%s", backend_name(m->backend),
				     extack_sep(m), backend_error(m->backend));
	r = manager_dump(m);
	if (r < 0)
		return r;
	m->hold_supported = m->backend->ops->hold && read_hold_timeout(m) > 0;
	log_debug("%s backend: %u regions of %" PRIu64 " MiB, %zu with memory, bias %s, owner %u%s",
		  backend_name(m->backend), m->info.region_count, m->info.region_size >> 20,
		  m->n_regions, m->info.bias ? "on" : "off", m->backend->ops->owner(m->backend),
		  m->hold_supported ? ", holds" : "");
	resolve_protected(m);
	log_headroom(m);

	/* The stock backend has no events: the decision timer alone drives it. */
	if (m->backend->ops->event_fd(m->backend) >= 0) {
		r = sd_event_add_io(m->event, &m->genl_io, m->backend->ops->event_fd(m->backend),
				    EPOLLIN, on_genl_io, m);
		if (r < 0)
			return r;
		sd_event_source_set_description(m->genl_io, "regionpm-events");
	}
	r = sd_event_add_time_relative(m->event, &m->pass_timer, CLOCK_MONOTONIC,
				       0 /* first pass at once */, 10000, on_pass_timer, m);
	if (r < 0)
		return r;
	sd_event_source_set_description(m->pass_timer, "decision-pass");
	sd_event_source_set_enabled(m->pass_timer, m->once ? SD_EVENT_OFF : SD_EVENT_ON);

	r = sd_event_add_signal(m->event, &m->sig_term, SIGTERM, on_exit_signal, m);
	if (r >= 0) {
		sd_event_source_set_description(m->sig_term, "sigterm");
		r = sd_event_add_signal(m->event, &m->sig_int, SIGINT, on_exit_signal, m);
	}
	if (r >= 0) {
		sd_event_source_set_description(m->sig_int, "sigint");
		r = sd_event_add_signal(m->event, &m->sig_hup, SIGHUP, on_hup, m);
	}
	if (r < 0)
		return r;
	sd_event_source_set_description(m->sig_hup, "sighup");
	if (!m->once)
		setup_psi(m);
	r = sd_event_set_watchdog(m->event, true);
	if (r < 0)
		rpm_log_errno(LOG_WARNING, r, "watchdog");
	return 0;
}

int manager_run(struct manager *m)
{
	if (m->once) {
		bool pending = false;
		int r = manager_pass(m);

		if (r < 0)
			return r;
		for (size_t j = 0; j < MANAGER_MAX_SAMPLES; j++)
			pending |= m->samples[j] != NULL;
		if (!pending)
			return 0;
	}
	return sd_event_loop(m->event);
}

struct manager *manager_free(struct manager *m)
{
	if (!m)
		return NULL;
	for (size_t i = 0; i < MANAGER_MAX_SAMPLES; i++)
		idle_sample_cancel(m->samples[i]);
	psi_monitor_free(m->psi);
	reclaim_watch_free(m->reclaim_watch);
	sd_event_source_disable_unref(m->genl_io);
	sd_event_source_disable_unref(m->pass_timer);
	sd_event_source_disable_unref(m->sig_hup);
	sd_event_source_disable_unref(m->sig_term);
	sd_event_source_disable_unref(m->sig_int);
	/* netlink: closing the socket makes the kernel release whatever is
	 * still ours; a backend without that (stock) gives it back here */
	if (m->backend && !(backend_caps(m->backend) & RPM_CAP_KERNEL_RELEASE) && !m->exiting)
		manager_release_all(m);
	backend_close(m->backend);
	sd_event_unref(m->event);
	conf_free(&m->config);
	free(m->regions);
	free(m->prot_ino);
	free(m->config_path);
	free(m->dropin_dir);
	free(m);
	return NULL;
}

/* ---- requests from the bus ------------------------------------------------ */

struct rpm_region *manager_find_region(struct manager *m, uint32_t id)
{
	return find_region(m, id);
}

int manager_refresh_region(struct manager *m, struct rpm_region *reg, bool scan)
{
	return refresh_region(m, reg, scan);
}

int manager_compact_region(struct manager *m, struct rpm_region *reg, uint32_t mode,
			   uint64_t budget, const char *why)
{
	struct rpm_action a = { .kind = RPM_ACT_COMPACT, .region = reg->id, .mode = mode,
				.budget = budget, .reason = why };

	m->last_error = 0;
	do_compact(m, reg, &a, now_usec());
	return m->last_error;
}

int manager_park_region(struct manager *m, struct rpm_region *reg, const char *why)
{
	struct rpm_action a = { .kind = RPM_ACT_PARK, .region = reg->id, .reason = why };

	m->last_error = 0;
	do_park(m, reg, &a, now_usec());
	return m->last_error;
}

/* The kernel's message for the request that just failed, kept for the
 * D-Bus error reply (a refresh after the failure clears the socket's). */
static int note_error(struct manager *m, int r)
{
	m->last_error = r < 0 ? r : 0;
	if (r < 0)
		snprintf(m->last_extack, sizeof(m->last_extack), "%s", backend_error(m->backend));
	return r;
}

int manager_unpark_region(struct manager *m, struct rpm_region *reg, const char *why)
{
	m->last_error = 0;
	return unpark(m, reg, why);
}

int manager_reload(struct manager *m)
{
	return reload(m);
}

int manager_scan_region(struct manager *m, struct rpm_region *reg, const char *why)
{
	m->scans++;
	log_debug("region %u: page scan for %s (scan %" PRIu64 ")", reg->id, why, m->scans);
	m->last_error = 0;
	return note_error(m, refresh_region(m, reg, true));
}
