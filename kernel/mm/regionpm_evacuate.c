// SPDX-License-Identifier: GPL-2.0
/*
 * regionpm evacuation: empty a pfn range (migrate movable pages or drop
 * clean page cache), park an empty region so nothing is allocated from it,
 * and give parked memory back -- on request, when the owning socket goes
 * away, under memory pressure (shrinker), before an OOM kill, and before
 * the memory is offlined.
 *
 * Parking follows virtio-mem's "fake offline": the pages are taken with
 * alloc_contig_range(), marked PageOffline and removed from the managed
 * page count, so MemTotal shows them gone and the allocator never sees them.
 */
#define pr_fmt(fmt) "regionpm: " fmt

#include <linux/memory.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/oom.h>
#include <linux/page-isolation.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/shrinker.h>
#include <linux/swap.h>

#include "internal.h"
#include "regionpm_internal.h"

#define BATCH_PAGES 256

struct evac {
	const struct regionpm_compact_req *req;
	struct regionpm_compact_res *res;
	struct list_head migrate, drop;
	unsigned long nr_migrate, handled;
};

static void note_obstacle(struct evac *ev, unsigned long pfn,
			  enum regionpm_obstacle kind)
{
	if (ev->res->obstacle != REGIONPM_OBSTACLE_NONE)
		return;
	ev->res->obstacle = kind;
	ev->res->obstacle_pfn = pfn;
}

/* Why could this in-use page not be moved?  Best effort, for the report. */
static enum regionpm_obstacle classify(struct page *page)
{
	if (PageReserved(page))
		return REGIONPM_OBSTACLE_RESERVED;
	if (PageSlab(page))
		return REGIONPM_OBSTACLE_SLAB;
	if (PageTable(page))
		return REGIONPM_OBSTACLE_PAGE_TABLE;
	if (PageHuge(page))
		return REGIONPM_OBSTACLE_HUGETLB;
	if (PageLRU(page)) {
		switch (regionpm_peek_lru(page)) {
		case REGIONPM_LRU_UNEVICTABLE:
			return REGIONPM_OBSTACLE_UNEVICTABLE;
		case REGIONPM_LRU_WRITEBACK:
			return REGIONPM_OBSTACLE_WRITEBACK;
		case REGIONPM_LRU_DIRTY:
			return REGIONPM_OBSTACLE_DIRTY;
		default:
			return REGIONPM_OBSTACLE_PINNED;
		}
	}
	return REGIONPM_OBSTACLE_KERNEL;
}

static void flush_batch(struct evac *ev)
{
	struct migration_target_control mtc = {
		.nid = NUMA_NO_NODE,
		.gfp_mask = GFP_USER | __GFP_MOVABLE | __GFP_RETRY_MAYFAIL,
		.reason = MR_CONTIG_RANGE,
	};
	unsigned int succeeded = 0;

	if (!list_empty(&ev->drop))
		ev->res->dropped += reclaim_pages(&ev->drop);
	if (!list_empty(&ev->migrate)) {
		migrate_pages(&ev->migrate, alloc_migration_target, NULL,
			      (unsigned long)&mtc, MIGRATE_SYNC, MR_CONTIG_RANGE,
			      &succeeded);
		putback_movable_pages(&ev->migrate);
		ev->res->migrated += succeeded;
		ev->res->failed += ev->nr_migrate - min_t(unsigned long, succeeded,
							   ev->nr_migrate);
	}
	ev->nr_migrate = 0;
}

/*
 * One in-use page: drop it if it is clean page cache and the mode allows,
 * else queue it for migration if the mode allows.  Returns the pages the
 * folio spans from @pfn on, so the caller can skip its tail pages.
 */
static unsigned long evacuate_page(struct evac *ev, unsigned long pfn,
				   struct page *page)
{
	enum regionpm_compact_mode mode = ev->req->mode;
	struct folio *folio = page_folio(page);
	unsigned long nr = 1;
	bool droppable;

	if (!folio_try_get(folio))
		return 1;
	if (page_folio(page) != folio)
		goto put;
	nr = folio_nr_pages(folio) - folio_page_idx(folio, page);
	ev->res->scanned += nr;

	droppable = folio_test_lru(folio) && !folio_test_anon(folio) &&
		    !folio_test_swapbacked(folio) && !folio_test_dirty(folio) &&
		    !folio_test_writeback(folio) && !folio_test_unevictable(folio);
	if (droppable && mode != REGIONPM_COMPACT_MODE_MIGRATE) {
		if (folio_isolate_lru(folio)) {
			list_add(&folio->lru, &ev->drop);
			ev->handled += nr;
			goto put;
		}
	} else if (mode != REGIONPM_COMPACT_MODE_DROP &&
		   (folio_test_lru(folio) || __folio_test_movable(folio) ||
		    folio_test_hugetlb(folio))) {
		if (isolate_folio_to_list(folio, &ev->migrate)) {
			ev->nr_migrate += folio_nr_pages(folio);
			ev->handled += nr;
			goto put;
		}
	}
	ev->res->skipped += nr;
	note_obstacle(ev, pfn, classify(page));
put:
	folio_put(folio);
	return nr;
}

static int evacuate_pageblock(struct evac *ev, unsigned long start)
{
	unsigned long pfn = start, end = start + pageblock_nr_pages;

	while (pfn < end) {
		struct page *page = pfn_to_online_page(pfn);

		if (fatal_signal_pending(current))
			return -EINTR;
		if (ev->handled >= ev->req->budget)
			return 0;
		if (!page) {
			pfn++;
			continue;
		}
		if (PageBuddy(page)) {
			unsigned int order = buddy_order_unsafe(page);

			pfn += order <= MAX_PAGE_ORDER ? 1UL << order : 1;
			continue;
		}
		if (PageOffline(page) || PageReserved(page)) {
			ev->res->skipped++;
			note_obstacle(ev, pfn, classify(page));
			pfn++;
			continue;
		}
		pfn += evacuate_page(ev, pfn, page);
		if (ev->nr_migrate >= BATCH_PAGES) {
			flush_batch(ev);
			cond_resched();
		}
	}
	flush_batch(ev);
	return 0;
}

/* First in-use page of a pageblock that isolation refused, for the report. */
static void report_unmovable(struct evac *ev, unsigned long start)
{
	unsigned long pfn;

	for (pfn = start; pfn < start + pageblock_nr_pages; pfn++) {
		struct page *page = pfn_to_online_page(pfn);

		if (!page || PageBuddy(page))
			continue;
		ev->res->skipped++;
		note_obstacle(ev, pfn, classify(page));
	}
	ev->res->scanned += pageblock_nr_pages;
}

static int compact_range(const struct regionpm_compact_req *req,
			 struct regionpm_compact_res *res,
			 struct netlink_ext_ack *extack)
{
	struct evac ev = { .req = req, .res = res };
	unsigned long pfn;
	unsigned long nr_blocks = req->nr_pages / pageblock_nr_pages, i;
	unsigned long *isolated;
	u64 t0 = local_clock();
	int ret = 0;

	INIT_LIST_HEAD(&ev.migrate);
	INIT_LIST_HEAD(&ev.drop);
	isolated = bitmap_zalloc(nr_blocks, GFP_KERNEL);
	if (!isolated)
		return -ENOMEM;

	/*
	 * Isolate first, so migration targets and pages freed meanwhile cannot
	 * land in the range; pageblocks that refuse (unmovable pages) are only
	 * reported.
	 */
	for (i = 0; i < nr_blocks; i++) {
		pfn = req->start_pfn + i * pageblock_nr_pages;
		if (!pfn_to_online_page(pfn) || !pfn_to_online_page(pfn + pageblock_nr_pages - 1))
			continue;
		if (!start_isolate_page_range(pfn, pfn + pageblock_nr_pages,
					      MIGRATE_MOVABLE, 0, GFP_KERNEL))
			__set_bit(i, isolated);
	}
	/* Pages on per-cpu LRU batches are invisible to isolation. */
	lru_add_drain_all();
	drain_all_pages(NULL);

	for (i = 0; i < nr_blocks && !ret; i++) {
		pfn = req->start_pfn + i * pageblock_nr_pages;
		if (test_bit(i, isolated))
			ret = evacuate_pageblock(&ev, pfn);
		else
			report_unmovable(&ev, pfn);
		cond_resched();
	}
	flush_batch(&ev);
	drain_all_pages(NULL);

	for_each_set_bit(i, isolated, nr_blocks) {
		pfn = req->start_pfn + i * pageblock_nr_pages;
		undo_isolate_page_range(pfn, pfn + pageblock_nr_pages, MIGRATE_MOVABLE);
	}
	bitmap_free(isolated);

	res->free_pages = regionpm_range_free(req->start_pfn, req->nr_pages);
	res->elapsed_ns = local_clock() - t0;
	if (ret == -EINTR)
		NL_SET_ERR_MSG(extack, "interrupted by a fatal signal");
	else if (res->obstacle != REGIONPM_OBSTACLE_NONE)
		NL_SET_ERR_MSG_FMT(extack, "first obstacle at pfn %#lx: %s",
				   res->obstacle_pfn,
				   res->obstacle == REGIONPM_OBSTACLE_RESERVED ? "reserved" :
				   res->obstacle == REGIONPM_OBSTACLE_SLAB ? "slab" :
				   res->obstacle == REGIONPM_OBSTACLE_PAGE_TABLE ? "page table" :
				   res->obstacle == REGIONPM_OBSTACLE_HUGETLB ? "hugetlb" :
				   res->obstacle == REGIONPM_OBSTACLE_UNEVICTABLE ? "unevictable" :
				   res->obstacle == REGIONPM_OBSTACLE_WRITEBACK ? "writeback" :
				   res->obstacle == REGIONPM_OBSTACLE_DIRTY ? "dirty" :
				   res->obstacle == REGIONPM_OBSTACLE_PINNED ? "pinned" :
				   "unmovable kernel page");
	if (!ret)
		regionpm_nl_notify_compact(req->id, res);
	return ret;
}

/* ACTIVE -> BUSY under park_lock, so a release never sees a half state. */
static bool set_busy(struct regionpm_region *r)
{
	bool ok;

	mutex_lock(&regionpm.park_lock);
	ok = r->state == REGIONPM_REGION_STATE_ACTIVE;
	if (ok)
		WRITE_ONCE(r->state, REGIONPM_REGION_STATE_BUSY);
	mutex_unlock(&regionpm.park_lock);
	return ok;
}

static void set_state(struct regionpm_region *r, u8 state)
{
	mutex_lock(&regionpm.park_lock);
	WRITE_ONCE(r->state, state);
	mutex_unlock(&regionpm.park_lock);
}

int regionpm_compact(const struct regionpm_compact_req *req,
		     struct regionpm_compact_res *res,
		     struct netlink_ext_ack *extack)
{
	struct regionpm_region *r = &regionpm.regions[req->id];
	int ret;

	if (mutex_lock_killable(&regionpm.lock))
		return -EINTR;
	/* Busy: no first-allocation events for our own shuffling. */
	if (!set_busy(r)) {
		NL_SET_ERR_MSG(extack, "region is parked or busy");
		ret = -EBUSY;
	} else {
		ret = compact_range(req, res, extack);
		set_state(r, REGIONPM_REGION_STATE_ACTIVE);
	}
	mutex_unlock(&regionpm.lock);
	return ret;
}

/* Call @fn for each maximal run of pfns in one zone; holes fail with -EBUSY. */
static int walk_zone_runs(unsigned long start, unsigned long end,
			  int (*fn)(unsigned long, unsigned long, void *),
			  void *arg, unsigned long *hole)
{
	unsigned long pfn = start;

	while (pfn < end) {
		struct page *page = pfn_to_online_page(pfn);
		unsigned long run_end;
		int ret;

		if (!page) {
			*hole = pfn;
			return -EBUSY;
		}
		run_end = min(end, zone_end_pfn(page_zone(page)));
		ret = fn(pfn, run_end, arg);
		if (ret)
			return ret;
		pfn = run_end;
	}
	return 0;
}

static int take_run(unsigned long start, unsigned long end, void *arg)
{
	unsigned long *taken = arg, pfn;
	int ret;

	ret = alloc_contig_range(start, end, MIGRATE_MOVABLE,
				 GFP_KERNEL | __GFP_NOWARN);
	if (ret)
		return ret;
	page_offline_begin();
	for (pfn = start; pfn < end; pfn++)
		__folio_set_offline(pfn_folio(pfn));
	page_offline_end();
	adjust_managed_page_count(pfn_to_page(start), -(long)(end - start));
	*taken = end;
	return 0;
}

static int give_run(unsigned long start, unsigned long end, void *arg)
{
	unsigned long pfn;

	page_offline_begin();
	for (pfn = start; pfn < end; pfn++)
		__folio_clear_offline(pfn_folio(pfn));
	page_offline_end();
	adjust_managed_page_count(pfn_to_page(start), end - start);
	free_contig_range(start, end - start);
	return 0;
}

int regionpm_park(const struct regionpm_compact_req *req, bool compact_first,
		  struct regionpm_sock *owner, u32 portid,
		  struct regionpm_compact_res *res,
		  struct netlink_ext_ack *extack)
{
	struct regionpm_region *r = &regionpm.regions[req->id];
	unsigned long start = req->start_pfn, end = start + req->nr_pages;
	unsigned long taken = start, hole = 0;
	long in_use;
	int ret;

	if (mutex_lock_killable(&regionpm.lock))
		return -EINTR;
	if (!set_busy(r)) {
		NL_SET_ERR_MSG(extack, "region is already parked or busy");
		ret = -EBUSY;
		goto unlock;
	}
	if (compact_first) {
		ret = compact_range(req, res, extack);
		if (ret)
			goto restore;
	} else {
		drain_all_pages(NULL);
		in_use = atomic_long_read(&r->managed) - atomic_long_read(&r->free);
		if (in_use > 0) {
			NL_SET_ERR_MSG_FMT(extack, "region is not empty: %ld pages in use", in_use);
			ret = -EBUSY;
			goto restore;
		}
	}
	ret = walk_zone_runs(start, end, take_run, &taken, &hole);
	if (ret) {
		/* Give back what the runs before the failing one took. */
		if (taken > start)
			walk_zone_runs(start, taken, give_run, NULL, &hole);
		if (hole)
			NL_SET_ERR_MSG_FMT(extack, "region has a hole at pfn %#lx", hole);
		else if (res->obstacle != REGIONPM_OBSTACLE_NONE)
			NL_SET_ERR_MSG_FMT(extack, "cannot empty the region: obstacle at pfn %#lx",
					   res->obstacle_pfn);
		else
			NL_SET_ERR_MSG(extack, "cannot take the region's pages (still in use)");
		ret = -EBUSY;
		goto restore;
	}
	mutex_lock(&regionpm.park_lock);
	r->parked = end - start;
	r->owner = owner;
	r->owner_portid = portid;
	list_add(&r->owner_node, &owner->parked);
	regionpm.parked_pages += r->parked;
	WRITE_ONCE(r->state, REGIONPM_REGION_STATE_PARKED);
	mutex_unlock(&regionpm.park_lock);
	res->free_pages = 0;
	mutex_unlock(&regionpm.lock);
	return 0;

restore:
	set_state(r, REGIONPM_REGION_STATE_ACTIVE);
unlock:
	mutex_unlock(&regionpm.lock);
	return ret;
}

/* Caller holds regionpm.park_lock; @r is parked. */
static unsigned long release_locked(struct regionpm_region *r,
				    enum regionpm_release_reason reason)
{
	unsigned long id = regionpm_id(r), start = regionpm_start_pfn(id);
	unsigned long pages = r->parked, hole = 0;

	WRITE_ONCE(r->state, REGIONPM_REGION_STATE_BUSY);
	walk_zone_runs(start, start + pages, give_run, NULL, &hole);
	list_del_init(&r->owner_node);
	r->owner = NULL;
	r->owner_portid = 0;
	r->parked = 0;
	regionpm.parked_pages -= pages;
	WRITE_ONCE(r->state, REGIONPM_REGION_STATE_ACTIVE);
	regionpm_nl_notify_release(id, reason, pages);
	return pages;
}

int regionpm_unpark(unsigned long id, struct netlink_ext_ack *extack)
{
	struct regionpm_region *r = &regionpm.regions[id];
	int ret = 0;

	mutex_lock(&regionpm.park_lock);
	if (r->state != REGIONPM_REGION_STATE_PARKED) {
		NL_SET_ERR_MSG(extack, "region is not parked");
		ret = -EINVAL;
	} else {
		release_locked(r, REGIONPM_RELEASE_REASON_UNPARK);
	}
	mutex_unlock(&regionpm.park_lock);
	return ret;
}

/* The owning socket is being released (closed, or its owner died). */
void regionpm_release_owner(struct regionpm_sock *owner)
{
	struct regionpm_region *r, *tmp;

	mutex_lock(&regionpm.park_lock);
	list_for_each_entry_safe(r, tmp, &owner->parked, owner_node)
		release_locked(r, REGIONPM_RELEASE_REASON_OWNER_CLOSED);
	mutex_unlock(&regionpm.park_lock);
}

/*
 * Pressure.  Both paths can run inside an allocation made by a compaction
 * or a park in progress; that holds regionpm.lock but never park_lock,
 * which nothing holds across an allocation, so waiting for it is safe and
 * parked memory always comes back before the OOM killer runs.
 */
static unsigned long release_some(unsigned long want,
				  enum regionpm_release_reason reason)
{
	unsigned long id, freed = 0;

	mutex_lock(&regionpm.park_lock);
	for (id = regionpm.nr; id-- > 0 && freed < want;) {
		struct regionpm_region *r = &regionpm.regions[id];

		if (r->state == REGIONPM_REGION_STATE_PARKED)
			freed += release_locked(r, reason);
	}
	mutex_unlock(&regionpm.park_lock);
	return freed;
}

static unsigned long shrink_count(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long parked = READ_ONCE(regionpm.parked_pages);

	return parked ? parked : SHRINK_EMPTY;
}

static unsigned long shrink_scan(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long freed = release_some(sc->nr_to_scan, REGIONPM_RELEASE_REASON_SHRINKER);

	return freed ? freed : SHRINK_STOP;
}

static int oom_notify(struct notifier_block *nb, unsigned long unused, void *arg)
{
	unsigned long *freed = arg;

	*freed += release_some(ULONG_MAX, REGIONPM_RELEASE_REASON_OOM);
	return NOTIFY_OK;
}

static struct notifier_block oom_nb = {
	.notifier_call = oom_notify,
};

/*
 * Memory onlined into a zone that was empty: start counting it.  Parked
 * pages would block offlining: give them back into the isolated range.
 */
static int regionpm_memory_notify(struct notifier_block *nb, unsigned long action, void *arg)
{
	struct memory_notify *mn = arg;
	unsigned long id, first, last;

	if (action == MEM_ONLINE) {
		regionpm_track_zone(page_zone(pfn_to_page(mn->start_pfn)));
		return NOTIFY_OK;
	}
	if (action != MEM_GOING_OFFLINE)
		return NOTIFY_OK;
	first = mn->start_pfn >> regionpm.shift;
	last = (mn->start_pfn + mn->nr_pages - 1) >> regionpm.shift;
	mutex_lock(&regionpm.park_lock);
	for (id = first; id <= last && id < regionpm.nr; id++)
		if (regionpm.regions[id].state == REGIONPM_REGION_STATE_PARKED)
			release_locked(&regionpm.regions[id], REGIONPM_RELEASE_REASON_HOTPLUG);
	mutex_unlock(&regionpm.park_lock);
	return NOTIFY_OK;
}

static struct notifier_block memory_nb = {
	.notifier_call = regionpm_memory_notify,
};

static struct shrinker *shrinker;

int regionpm_evacuate_init(void)
{
	int ret;

	shrinker = shrinker_alloc(0, "regionpm-parked");
	if (!shrinker)
		return -ENOMEM;
	shrinker->count_objects = shrink_count;
	shrinker->scan_objects = shrink_scan;
	shrinker->seeks = DEFAULT_SEEKS;
	shrinker_register(shrinker);

	ret = register_oom_notifier(&oom_nb);
	if (ret)
		goto err_shrinker;
	ret = register_memory_notifier(&memory_nb);
	if (ret)
		goto err_oom;
	return 0;

err_oom:
	unregister_oom_notifier(&oom_nb);
err_shrinker:
	shrinker_free(shrinker);
	return ret;
}

/* Undo regionpm_evacuate_init(); only before anything could be parked. */
void regionpm_evacuate_exit(void)
{
	unregister_memory_notifier(&memory_nb);
	unregister_oom_notifier(&oom_nb);
	shrinker_free(shrinker);
}
