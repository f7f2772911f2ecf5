// SPDX-License-Identifier: GPL-2.0
/*
 * regionpm evacuation: empty a pfn range (migrate movable pages or drop
 * clean page cache), hold a region while it is being emptied, park an
 * empty region so nothing is allocated from it, and give held and parked
 * memory back -- on request, when the owning socket goes away, under
 * memory pressure (shrinker), before an OOM kill, before the memory is
 * offlined, and (holds only) when a hold is not renewed in time.
 *
 * A hold keeps the pageblocks of a region isolated (MIGRATE_ISOLATE)
 * between the requests of an evacuation, so that neither allocations nor
 * the migration targets of other compactions take its free pages, and a
 * region a compaction emptied is still empty when it is parked.  Parking
 * a held region takes its free pages straight from the isolated free
 * lists, so the allocator never sees them in between.  An isolated
 * pageblock would also make offline_pages() and alloc_contig_range() of
 * that range fail with -EBUSY before any memory notifier runs, so both
 * end the holds in their range first (__regionpm_release_holds(),
 * __regionpm_release_range()).
 *
 * Parking follows virtio-mem's "fake offline": the pages are taken with
 * alloc_contig_range(), marked PageOffline and removed from the managed
 * page count, so MemTotal shows them gone and the allocator never sees them.
 *
 * Memory hotplug: compact and park hold get_online_mems() from start to
 * end, so a memory block cannot go offline while its pages are being moved
 * or taken (an offline in the middle of take_run() would meet PageOffline
 * pages with a reference and retry forever under mem_hotplug_lock).  Once a
 * region is parked, MEM_GOING_OFFLINE gives it back.  Lock order:
 * mem_hotplug_lock (read) -> regionpm.lock -> regionpm.park_lock; the
 * hotplug notifier runs with mem_hotplug_lock held for write and takes only
 * park_lock.
 */
#define pr_fmt(fmt) "regionpm: " fmt

#include <linux/hugetlb.h>
#include <linux/memory.h>
#include <linux/memory_hotplug.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/moduleparam.h>
#include <linux/oom.h>
#include <linux/page-isolation.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/shrinker.h>
#include <linux/swap.h>
#include <linux/workqueue.h>

#include "internal.h"
#include "regionpm_internal.h"

/*
 * The parameters are regionpm.*, like those of regionpm.c, not
 * regionpm_evacuate.* as KBUILD_MODNAME would make them.
 */
#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "regionpm."

#define BATCH_PAGES 256

/*
 * regionpm.max_parked_pct=: parking stops short of this share of any zone
 * (managed plus parked pages), so a wrong or hostile policy cannot take a
 * node's or a zone's memory away; what is left always serves the kernel.
 * ZONE_MOVABLE counts with the node's zones below it (cap_share()).
 */
static unsigned int max_parked_pct = 80;
module_param(max_parked_pct, uint, 0644);
MODULE_PARM_DESC(max_parked_pct, "Most of a zone that may be parked or held (%, default 80)");

/* Held regions, so the release paths do not walk the whole table. */
static LIST_HEAD(held_regions);

static void hold_expire_workfn(struct work_struct *work);
static DECLARE_DELAYED_WORK(hold_expire_work, hold_expire_workfn);

/* Look at the held regions now: one may have expired, or be due earlier. */
static void hold_kick(void)
{
	if (!list_empty(&held_regions))
		mod_delayed_work(system_wq, &hold_expire_work, 0);
}

/*
 * regionpm.hold_timeout_ms=: a hold that is not renewed (region-hold
 * again) within this time ends by itself, so isolated pageblocks never
 * block a memory offline or a contiguous allocation for long, whatever
 * the daemon does.  A new value applies to the holds already taken.
 */
#define HOLD_TIMEOUT_MAX_MS	3600000
static unsigned int hold_timeout_ms = 60000;

static int hold_timeout_set(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;
	int ret = kstrtouint(val, 0, &ms);

	if (ret)
		return ret;
	if (!ms || ms > HOLD_TIMEOUT_MAX_MS)
		return -EINVAL;
	WRITE_ONCE(hold_timeout_ms, ms);
	hold_kick();
	return 0;
}

static const struct kernel_param_ops hold_timeout_ops = {
	.set = hold_timeout_set,
	.get = param_get_uint,
};
module_param_cb(hold_timeout_ms, &hold_timeout_ops, &hold_timeout_ms, 0644);
MODULE_PARM_DESC(hold_timeout_ms, "A hold not renewed for this long ends (ms, 1 to 3600000, default 60000)");

/* The pageblocks a hold isolated, and the type each had before. */
struct regionpm_hold {
	unsigned long held_at;		/* jiffies of the hold or its renewal */
	unsigned long *isolated;	/* bitmap of the region's pageblocks */
	u8 *before;
};

/*
 * Parked pages per zone, indexed by zone_slot(); under park_lock, read
 * without it by the shrinker's count.  The pressure paths use it to give
 * back memory in the zone and node that is short.
 */
static unsigned long *zone_parked;

/*
 * Pages in the pageblocks held regions isolated, per zone like
 * zone_parked, under park_lock; read without it by the shrinker's count
 * and by the limit checks.
 */
static unsigned long *zone_held;

/* Parked regions, so the release paths do not walk the whole table. */
static LIST_HEAD(parked_regions);

/*
 * Park and release change managed pages; the zone watermarks and the
 * lowmem reserves follow, as after memory hotplug (min_free_kbytes stays).
 * The reserves are sized from the managed pages of the zones above: with
 * ZONE_MOVABLE mostly parked, ZONE_NORMAL kept 1/32 of its boot size free
 * from movable allocations.  Always from a work item:
 * setup_per_zone_wmarks() takes pcp_batch_high_lock, which memory offline
 * holds across the memory notifiers, and those allocate
 * (slab_memory_callback) -- from the shrinker or the OOM notifier, inside
 * reclaim, that would deadlock.
 */
static void wmark_workfn(struct work_struct *work)
{
	/*
	 * Memory online and offline recompute both under mem_hotplug_lock
	 * (init_per_zone_wmark_min()); not at the same time as they do, or
	 * two sums of totalreserve_pages interleave.
	 */
	get_online_mems();
	setup_per_zone_wmarks();
	setup_per_zone_lowmem_reserve();
	put_online_mems();
}

static DECLARE_WORK(wmark_work, wmark_workfn);

static void update_wmarks(void)
{
	schedule_work(&wmark_work);
}

static inline unsigned int zone_slot(struct zone *zone)
{
	return zone_to_nid(zone) * MAX_NR_ZONES + zone_idx(zone);
}

/* Parked, held and all (managed plus parked) pages that max_parked_pct caps. */
struct cap_share {
	unsigned long parked, held, total;
};

/*
 * The memory max_parked_pct is a share of when pages of @zone are parked or
 * held: the zone's own, and for ZONE_MOVABLE the node's zones below it as
 * well.  Nothing allocates from ZONE_MOVABLE alone: whatever may use it
 * falls back to the kernel zones of its node (keeping their lowmem
 * reserve), so a ZONE_MOVABLE parked whole still leaves those allocations
 * the free memory below it.  Capped on its own, the last fifth of a
 * movablecore= zone could never be parked, however much the kernel zones
 * had free: a file server at 2 GiB with movablecore=50% kept a region of
 * 4,249 pages in use for it, next to 25,801 free in a region of DMA32 it
 * kept anyway.  The kernel zones keep their own cap: allocations limited
 * to DMA32 need DMA32.
 */
static void cap_share(struct zone *zone, struct cap_share *c)
{
	enum zone_type top = zone_idx(zone), i;

	*c = (struct cap_share) { };
	for (i = top == ZONE_MOVABLE ? 0 : top; i <= top; i++) {
		struct zone *z = &zone->zone_pgdat->node_zones[i];
		unsigned long parked = READ_ONCE(zone_parked[zone_slot(z)]);

		c->parked += parked;
		c->held += READ_ONCE(zone_held[zone_slot(z)]);
		c->total += zone_managed_pages(z) + parked;
	}
}

struct evac {
	const struct regionpm_compact_req *req;
	struct regionpm_compact_res *res;
	struct list_head migrate, drop;
	unsigned long nr_migrate, handled;
	bool no_room;		/* stopped: no free memory above the marks */
	bool dissolved;		/* free hugetlb folios replaced: their freeing may lag */
	bool hugetlb_moved;	/* hugetlb folios migrated: their old ones stay in the pool */
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

/*
 * The task migrating pages out of a region (compactions and parks run one
 * at a time, under regionpm.lock) and when its last batch ended.  A batch
 * is migrated only into free memory above the marks (batch_fits()), but
 * others allocate meanwhile and the last batch may reach below them, and
 * the shrinker must not answer the reclaim that follows by giving back
 * the parked regions the moves were meant to add to (daemon-movable saw a
 * region released that way a few seconds after it was parked).
 */
static struct task_struct *evacuator;
static unsigned long evacuated_at;

/*
 * Free pages that migration targets for pages of @zidx's zone may take
 * without going below the kernel's marks: per zone they may use, the free
 * pages above its high watermark (with its boost) and the lowmem reserve
 * it keeps from such allocations.  Below them, kswapd evicts whatever
 * page cache reclaim finds to restore them: a compaction that moves pages
 * into memory without free room pushes out cache someone may read again
 * (a file server's hot set at 8 GiB: 13.5 % of it read back from disk).
 * Targets are allocated as alloc_migration_target() does, highmem or
 * ZONE_MOVABLE only for pages from there; the source region is isolated,
 * so its own free pages are not counted.
 */
static unsigned long room_above_marks(enum zone_type zidx)
{
	enum zone_type highest = zidx == ZONE_MOVABLE || is_highmem_idx(zidx) ?
				 ZONE_MOVABLE : ZONE_NORMAL;
	unsigned long room = 0;
	struct zone *zone;

	for_each_populated_zone(zone) {
		long free = zone_page_state(zone, NR_FREE_PAGES);
		long keep = high_wmark_pages(zone) + zone->lowmem_reserve[highest];

		if (zone_idx(zone) <= highest && free > keep)
			room += free - keep;
	}
	return room;
}

/* No free memory above the marks for @nr pages at @pfn: stop, and say so. */
static void stop_no_room(struct evac *ev, unsigned long pfn, unsigned long nr)
{
	ev->no_room = true;
	ev->res->obstacle = REGIONPM_OBSTACLE_NO_ROOM;
	ev->res->obstacle_pfn = pfn;
	ev->res->skipped += nr;
}

/*
 * Before a batch is migrated: does it fit above the marks?  If not the
 * evacuation stops and says so (REGIONPM_OBSTACLE_NO_ROOM); the pages
 * stay where they are.  Checked per batch, so a compaction migrates until
 * the room is used up, never more than a batch past it.
 */
static bool batch_fits(struct evac *ev)
{
	struct folio *folio = list_first_entry(&ev->migrate, struct folio, lru);

	if (ev->nr_migrate <= room_above_marks(zone_idx(folio_zone(folio))))
		return true;
	stop_no_room(ev, folio_pfn(folio), ev->nr_migrate);
	putback_movable_pages(&ev->migrate);
	ev->nr_migrate = 0;
	return false;
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
	if (!list_empty(&ev->migrate) && batch_fits(ev)) {
		WRITE_ONCE(evacuator, current);
		migrate_pages(&ev->migrate, alloc_migration_target, NULL,
			      (unsigned long)&mtc, MIGRATE_SYNC, MR_CONTIG_RANGE,
			      &succeeded);
		WRITE_ONCE(evacuated_at, jiffies);
		WRITE_ONCE(evacuator, NULL);
		putback_movable_pages(&ev->migrate);
		ev->res->migrated += succeeded;
		ev->res->failed += ev->nr_migrate - min_t(unsigned long, succeeded,
							   ev->nr_migrate);
	}
	ev->nr_migrate = 0;
}

/* Does the sysctl vm.compact_unevictable_allowed let us move mlocked pages? */
static bool unevictable_movable(void)
{
	return !IS_ENABLED(CONFIG_COMPACTION) || compaction_unevictable_allowed();
}

/*
 * Clean page cache is dropped only when reclaim would drop it too: not
 * mapped (program text, libraries, mmapped data in use) and not on the
 * active list (read more than once recently).  Hot clean cache is migrated
 * like everything else, never thrown away to be read back.
 */
static bool folio_droppable(struct folio *folio)
{
	return folio_test_lru(folio) && !folio_test_anon(folio) &&
	       !folio_test_swapbacked(folio) && !folio_test_dirty(folio) &&
	       !folio_test_writeback(folio) && !folio_test_unevictable(folio) &&
	       !folio_test_active(folio) && !folio_mapped(folio);
}

/*
 * A free hugetlb pool folio has no reference to take, so it is neither a
 * free page nor one that migrates.  As alloc_contig_range() does, replace
 * it with a fresh huge page outside the range (isolated here) and free it,
 * so that the pool keeps its size and the region empties; a folio someone
 * took meanwhile is isolated for migration instead.  When no huge page can
 * be had elsewhere (no whole free pageblock: after a swap storm, slab and
 * page tables sat in most of them), say so: the park that follows would
 * only fail with the pages "still in use".
 */
static unsigned long evacuate_free_hugetlb(struct evac *ev, unsigned long pfn,
					   struct page *page, bool count)
{
	unsigned long nr = compound_nr(page);
	LIST_HEAD(taken);
	int err;

	ev->res->scanned += nr;
	if (ev->req->mode == REGIONPM_COMPACT_MODE_DROP) {
		ev->res->skipped += nr;
		note_obstacle(ev, pfn, REGIONPM_OBSTACLE_MODE);
		return nr;
	}
	/* The fresh folio takes free memory as a migration target does. */
	if (ev->nr_migrate + nr > room_above_marks(page_zonenum(page))) {
		stop_no_room(ev, pfn, nr);
		return nr;
	}
	/* Its allocation's reclaim is ours, as a migration's is. */
	WRITE_ONCE(evacuator, current);
	err = isolate_or_dissolve_huge_page(page, &taken);
	WRITE_ONCE(evacuated_at, jiffies);
	WRITE_ONCE(evacuator, NULL);
	if (err) {
		ev->res->skipped += nr;
		note_obstacle(ev, pfn, REGIONPM_OBSTACLE_HUGETLB);
		return nr;
	}
	ev->handled += nr;
	if (list_empty(&taken)) {
		if (count)
			ev->res->migrated += nr;
		ev->dissolved = true;
	} else {
		list_splice_tail(&taken, &ev->migrate);
		ev->nr_migrate += nr;
		ev->hugetlb_moved = true;
	}
	return nr;
}

/*
 * A migrated hugetlb folio goes back to the pool as a free one, in the
 * range: replace those too, as alloc_contig_range() does.  Their data
 * moved already; the replacement is not counted again.
 */
static void replace_pool_folios(struct evac *ev, unsigned long start)
{
	unsigned long pfn = start, end = start + pageblock_nr_pages;

	while (pfn < end && !ev->no_room) {
		struct page *page = pfn_to_online_page(pfn);

		if (page && PageHuge(page) && !page_count(page))
			pfn += evacuate_free_hugetlb(ev, pfn, page, false);
		else
			pfn++;
	}
}

/*
 * One in-use page: drop it if it is cold clean page cache and the mode
 * allows, else queue it for migration if the mode allows (a free hugetlb
 * pool folio is replaced instead).  Returns the pages the folio spans from
 * @pfn on, so the caller can skip its tail pages.
 */
static unsigned long evacuate_page(struct evac *ev, unsigned long pfn,
				   struct page *page)
{
	enum regionpm_compact_mode mode = ev->req->mode;
	struct folio *folio = page_folio(page);
	enum regionpm_obstacle why = REGIONPM_OBSTACLE_NONE;
	unsigned long nr = 1;

	if (PageHuge(page) && !page_count(page))
		return evacuate_free_hugetlb(ev, pfn, page, true);
	if (!folio_try_get(folio))
		return 1;
	if (page_folio(page) != folio)
		goto put;
	nr = folio_nr_pages(folio) - folio_page_idx(folio, page);
	ev->res->scanned += nr;

	if (folio_droppable(folio) && mode != REGIONPM_COMPACT_MODE_MIGRATE) {
		if (folio_isolate_lru(folio)) {
			list_add(&folio->lru, &ev->drop);
			ev->handled += nr;
			goto put;
		}
	} else if (mode == REGIONPM_COMPACT_MODE_DROP) {
		/* Anon, shmem, dirty or hot cache: only migration moves it. */
		if (folio_test_lru(folio) || __folio_test_movable(folio))
			why = REGIONPM_OBSTACLE_MODE;
	} else if (folio_test_lru(folio) && folio_test_unevictable(folio) &&
		   !unevictable_movable()) {
		why = REGIONPM_OBSTACLE_UNEVICTABLE;
		ev->res->kept_mlocked = true;
	} else if (folio_test_lru(folio) || __folio_test_movable(folio) ||
		   folio_test_hugetlb(folio)) {
		if (isolate_folio_to_list(folio, &ev->migrate)) {
			ev->hugetlb_moved |= folio_test_hugetlb(folio);
			ev->nr_migrate += folio_nr_pages(folio);
			ev->handled += nr;
			goto put;
		}
	}
	ev->res->skipped += nr;
	note_obstacle(ev, pfn, why != REGIONPM_OBSTACLE_NONE ? why : classify(page));
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
		if (ev->handled >= ev->req->budget || ev->no_room)
			return 0;
		if (!page) {
			pfn++;
			continue;
		}
		if (PageBuddy(page)) {
			pfn += max(regionpm_buddy_pages(page), 1UL);
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
	enum regionpm_obstacle first = ev->res->obstacle;
	unsigned long pfn;

	for (pfn = start; pfn < start + pageblock_nr_pages; pfn++) {
		struct page *page = pfn_to_online_page(pfn);

		if (!page || PageBuddy(page))
			continue;
		ev->res->skipped++;
		note_obstacle(ev, pfn, classify(page));
	}
	ev->res->scanned += pageblock_nr_pages;
	/*
	 * Nothing in use, yet isolation refused: the pageblock is CMA, is
	 * isolated by someone else (another alloc_contig_range(), an offline)
	 * or is a hole.
	 */
	if (first == REGIONPM_OBSTACLE_NONE && ev->res->obstacle == REGIONPM_OBSTACLE_NONE)
		note_obstacle(ev, start, REGIONPM_OBSTACLE_ISOLATION);
}

/*
 * The type a pageblock gets back after isolation.  A HIGHATOMIC reserve
 * keeps its type, or the zone's reserve accounting goes wrong; a park's
 * alloc_contig_range() refuses CMA pageblocks and isolate_block() too, so
 * none gets here.  An
 * UNMOVABLE or RECLAIMABLE pageblock that could be isolated held no
 * unmovable page (has_unmovable_pages() said so), and after evacuation it
 * holds at most movable ones: it becomes MOVABLE, as after
 * alloc_contig_range(), rather than invite the next slab page back into a
 * region that was just emptied.
 */
static int restore_type(int before)
{
	if (before == MIGRATE_UNMOVABLE || before == MIGRATE_RECLAIMABLE)
		return MIGRATE_MOVABLE;
	return before;
}

/*
 * Isolate the pageblock at @pfn; *@before gets the type it had.  A hole,
 * an unmovable page or an isolation by someone else makes it refuse, and
 * so does CMA: start_isolate_page_range() would take a CMA pageblock when
 * asked to restore MIGRATE_CMA, and a hold would then park memory that
 * cma_alloc() needs, as a park without a hold never does.
 */
static bool isolate_block(unsigned long pfn, u8 *before)
{
	if (!pfn_to_online_page(pfn) || !pfn_to_online_page(pfn + pageblock_nr_pages - 1))
		return false;
	*before = get_pageblock_migratetype(pfn_to_page(pfn));
	if (is_migrate_cma(*before))
		return false;
	return !start_isolate_page_range(pfn, pfn + pageblock_nr_pages,
					 restore_type(*before), 0, GFP_KERNEL);
}

/*
 * Would @pages more held pages keep @zone within max_parked_pct?  Called
 * with regionpm.lock held: only releases change the counts meanwhile.
 */
static bool hold_fits(struct zone *zone, unsigned long pages)
{
	struct cap_share c;

	cap_share(zone, &c);
	return (c.parked + c.held + pages) * 100 <= c.total * READ_ONCE(max_parked_pct);
}

/* Pageblock @i of @r, isolated with type @before, now belongs to its hold. */
static void hold_add(struct regionpm_region *r, unsigned long i, u8 before)
{
	unsigned long pfn = regionpm_start_pfn(regionpm_id(r)) + i * pageblock_nr_pages;

	mutex_lock(&regionpm.park_lock);
	r->hold->before[i] = before;
	__set_bit(i, r->hold->isolated);
	zone_held[zone_slot(page_zone(pfn_to_page(pfn)))] += pageblock_nr_pages;
	r->held += pageblock_nr_pages;
	regionpm.held_pages += pageblock_nr_pages;
	mutex_unlock(&regionpm.park_lock);
}

/*
 * Make pageblock @i of held region @r part of its hold if it is not yet;
 * with @check_limit, only as far as max_parked_pct allows.  Returns
 * whether it is held.  Called with regionpm.lock held and @r busy.
 */
static bool hold_block(struct regionpm_region *r, unsigned long i, bool check_limit)
{
	unsigned long pfn = regionpm_start_pfn(regionpm_id(r)) + i * pageblock_nr_pages;
	u8 before;

	if (test_bit(i, r->hold->isolated))
		return true;
	if (check_limit && pfn_to_online_page(pfn) &&
	    !hold_fits(page_zone(pfn_to_page(pfn)), pageblock_nr_pages))
		return false;
	if (!isolate_block(pfn, &before))
		return false;
	hold_add(r, i, before);
	return true;
}

/*
 * Flush the per-cpu free lists of every zone in [@start, @start + @nr).
 * drain_all_pages(NULL) returns at once while another drain holds
 * pcpu_drain_mutex, which would leave free pages of the range on a
 * remote cpu's list: not in the buddy, so counted in use, and handed out
 * again although their pageblock is isolated.  A zone drain waits.
 */
static void drain_range_pcp(unsigned long start, unsigned long nr)
{
	struct zone *zone;

	for_each_populated_zone(zone)
		if (zone_intersects(zone, start, nr))
			drain_all_pages(zone);
}

/*
 * Evacuate a range of region @r.  If @r is held, its isolated pageblocks
 * are used as they are, and pageblocks isolated here join the hold (as far
 * as max_parked_pct allows) instead of being given back at the end.
 */
static int compact_range(const struct regionpm_compact_req *req,
			 struct regionpm_region *r,
			 struct regionpm_compact_res *res,
			 struct netlink_ext_ack *extack)
{
	struct evac ev = { .req = req, .res = res };
	struct regionpm_hold *hold = r->hold;
	unsigned long first = (req->start_pfn - regionpm_start_pfn(req->id)) / pageblock_nr_pages;
	unsigned long nr_blocks = req->nr_pages / pageblock_nr_pages, i, pfn;
	unsigned long *isolated, *usable;
	u8 *before;
	u64 t0 = local_clock();
	int ret = 0;

	INIT_LIST_HEAD(&ev.migrate);
	INIT_LIST_HEAD(&ev.drop);
	isolated = bitmap_zalloc(nr_blocks, GFP_KERNEL);
	usable = bitmap_zalloc(nr_blocks, GFP_KERNEL);
	before = kmalloc_array(nr_blocks, sizeof(*before), GFP_KERNEL);
	if (!isolated || !usable || !before) {
		bitmap_free(isolated);
		bitmap_free(usable);
		kfree(before);
		return -ENOMEM;
	}

	/*
	 * Isolate first, so migration targets and pages freed meanwhile cannot
	 * land in the range; pageblocks that refuse (unmovable pages) are only
	 * reported.  @isolated: to be given back at the end; @usable: isolated,
	 * by this call or by the hold.
	 */
	for (i = 0; i < nr_blocks; i++) {
		pfn = req->start_pfn + i * pageblock_nr_pages;
		if (hold && test_bit(first + i, hold->isolated)) {
			__set_bit(i, usable);
			continue;
		}
		if (!isolate_block(pfn, &before[i]))
			continue;
		__set_bit(i, usable);
		if (hold && hold_fits(page_zone(pfn_to_page(pfn)), pageblock_nr_pages))
			hold_add(r, first + i, before[i]);
		else
			__set_bit(i, isolated);
	}
	/*
	 * As alloc_contig_range() and memory offlining do: drain the per-cpu
	 * LRU batches, whose folios are invisible to isolation, and the
	 * per-cpu buffer_head LRUs, whose references make block-device
	 * folios fail buffer_migrate_folio_norefs(); and until the end, put
	 * folios straight back on the LRU.  A folio that failed to move
	 * would otherwise sit in a batch, off the LRU: the region's
	 * breakdown would count it as a kernel page, and the daemon would
	 * not see the page cache that keeps the region busy.
	 */
	lru_cache_disable();
	drain_range_pcp(req->start_pfn, req->nr_pages);

	for (i = 0; i < nr_blocks && !ret && !ev.no_room; i++) {
		pfn = req->start_pfn + i * pageblock_nr_pages;
		if (test_bit(i, usable))
			ret = evacuate_pageblock(&ev, pfn);
		else
			report_unmovable(&ev, pfn);
		cond_resched();
	}
	flush_batch(&ev);
	if (ev.hugetlb_moved && !ret) {
		for (i = 0; i < nr_blocks && !ev.no_room; i++) {
			if (test_bit(i, usable))
				replace_pool_folios(&ev, req->start_pfn + i * pageblock_nr_pages);
			cond_resched();
		}
		flush_batch(&ev);
	}
	lru_cache_enable();
	/* A dissolved folio with optimized vmemmap is freed by a worker. */
	if (ev.dissolved)
		wait_for_freed_hugetlb_folios();
	drain_range_pcp(req->start_pfn, req->nr_pages);

	for_each_set_bit(i, isolated, nr_blocks) {
		pfn = req->start_pfn + i * pageblock_nr_pages;
		undo_isolate_page_range(pfn, pfn + pageblock_nr_pages,
					restore_type(before[i]));
	}
	bitmap_free(isolated);
	bitmap_free(usable);
	kfree(before);

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
				   res->obstacle == REGIONPM_OBSTACLE_MODE ?
				   "not movable in this mode" :
				   res->obstacle == REGIONPM_OBSTACLE_ISOLATION ?
				   "pageblock cannot be isolated" :
				   res->obstacle == REGIONPM_OBSTACLE_NO_ROOM ?
				   "no free memory above the watermarks" :
				   "unmovable kernel page");
	if (!ret)
		regionpm_nl_notify_compact(req->id, res);
	return ret;
}

/*
 * ACTIVE, or HELD by @owner (*@held is then set), -> BUSY under park_lock,
 * so a release never sees a half state.  A held region stays on its lists
 * while busy; the release paths leave busy regions alone.
 */
static int claim(struct regionpm_region *r, struct regionpm_sock *owner, bool *held,
		 struct netlink_ext_ack *extack)
{
	int ret = 0;

	mutex_lock(&regionpm.park_lock);
	*held = r->state == REGIONPM_REGION_STATE_HELD;
	if (r->state == REGIONPM_REGION_STATE_ACTIVE || (*held && r->owner == owner)) {
		WRITE_ONCE(r->state, REGIONPM_REGION_STATE_BUSY);
	} else if (*held) {
		NL_SET_ERR_MSG_FMT(extack, "region is held by another socket (port id %u)",
				   r->owner_portid);
		ret = -EBUSY;
	} else {
		NL_SET_ERR_MSG(extack, "region is parked or busy");
		ret = -EBUSY;
	}
	mutex_unlock(&regionpm.park_lock);
	return ret;
}

static void set_state(struct regionpm_region *r, u8 state)
{
	mutex_lock(&regionpm.park_lock);
	WRITE_ONCE(r->state, state);
	mutex_unlock(&regionpm.park_lock);
}

int regionpm_compact(const struct regionpm_compact_req *req,
		     struct regionpm_sock *owner,
		     struct regionpm_compact_res *res,
		     struct netlink_ext_ack *extack)
{
	struct regionpm_region *r = &regionpm.regions[req->id];
	bool held;
	int ret;

	get_online_mems();
	if (mutex_lock_killable(&regionpm.lock)) {
		put_online_mems();
		return -EINTR;
	}
	/* Busy: no first-allocation events for our own shuffling. */
	ret = claim(r, owner, &held, extack);
	if (!ret) {
		ret = compact_range(req, r, res, extack);
		set_state(r, held ? REGIONPM_REGION_STATE_HELD : REGIONPM_REGION_STATE_ACTIVE);
		if (held)
			hold_kick();
	}
	mutex_unlock(&regionpm.lock);
	put_online_mems();
	return ret;
}

/*
 * The bias's front keeper (regionpm.c picks the pageblocks): empty the
 * movable pageblocks @pfns[0..@n) of region @id by migration, so that
 * unmovable memory that keeps growing finds free pageblocks in front of
 * the frontier instead of claiming one wherever memory is free.  Page
 * cache is moved, never dropped: it stays cached.  Only an active region,
 * and only while nobody else compacts or parks (the daemon's requests
 * come first; the next round tries again).  Bit i of *@freed is set if
 * pageblock i is wholly free afterwards.  Returns the pages migrated, or
 * -EBUSY.
 */
int regionpm_clear_blocks(unsigned long id, const unsigned long *pfns,
			  unsigned int n, unsigned long *freed)
{
	struct regionpm_compact_req req = {
		.id = id, .budget = ULONG_MAX, .mode = REGIONPM_COMPACT_MODE_MIGRATE,
	};
	struct regionpm_compact_res res = { };
	struct evac ev = { .req = &req, .res = &res };
	struct regionpm_region *r = &regionpm.regions[id];
	unsigned long isolated = 0;
	u8 before[REGIONPM_CLEAR_MAX];
	unsigned int i;
	bool held;

	*freed = 0;
	n = min_t(unsigned int, n, REGIONPM_CLEAR_MAX);
	INIT_LIST_HEAD(&ev.migrate);
	INIT_LIST_HEAD(&ev.drop);
	get_online_mems();
	if (!mutex_trylock(&regionpm.lock)) {
		put_online_mems();
		return -EBUSY;
	}
	/* Held by a socket, parked or busy: not ours to touch. */
	if (claim(r, NULL, &held, NULL)) {
		mutex_unlock(&regionpm.lock);
		put_online_mems();
		return -EBUSY;
	}
	for (i = 0; i < n; i++)
		if (isolate_block(pfns[i], &before[i]))
			__set_bit(i, &isolated);
	if (isolated) {
		/* LRU batches and buffer_head LRUs: see compact_range(). */
		lru_cache_disable();
		for_each_set_bit(i, &isolated, n)
			evacuate_pageblock(&ev, pfns[i]);
		flush_batch(&ev);
		lru_cache_enable();
		drain_range_pcp(regionpm_start_pfn(id), regionpm_pages());
		for_each_set_bit(i, &isolated, n) {
			if (regionpm_range_free(pfns[i], pageblock_nr_pages) >= pageblock_nr_pages)
				__set_bit(i, freed);
			undo_isolate_page_range(pfns[i], pfns[i] + pageblock_nr_pages,
						restore_type(before[i]));
		}
	}
	set_state(r, REGIONPM_REGION_STATE_ACTIVE);
	mutex_unlock(&regionpm.lock);
	put_online_mems();
	return res.migrated;
}

/*
 * End of the run of online pfns in one zone that starts at @pfn (inside
 * its zone's span), at most @end.  Memory comes online in subsections and
 * one memory block goes to one zone, so checking each subsection finds
 * holes and zone changes (zone spans may interleave after hotplug, so
 * zone_end_pfn() alone is not enough).  Always beyond @pfn.
 */
static unsigned long run_end(unsigned long pfn, unsigned long end)
{
	struct zone *zone = page_zone(pfn_to_page(pfn));
	unsigned long limit = min(end, zone_end_pfn(zone));
	unsigned long next = ALIGN(pfn + 1, PAGES_PER_SUBSECTION);

	while (next < limit && pfn_to_online_page(next) &&
	       page_zone(pfn_to_page(next)) == zone)
		next += PAGES_PER_SUBSECTION;
	return min(next, limit);
}

/*
 * Call @fn for each maximal run of online pfns in one zone.  A hole stops
 * the walk with -EBUSY and is reported in @hole, unless @skip_holes: the
 * release paths must give back every page they can find, and report the
 * hole only through the return value.
 */
static int walk_zone_runs(unsigned long start, unsigned long end,
			  int (*fn)(unsigned long, unsigned long, void *),
			  void *arg, unsigned long *hole, bool skip_holes)
{
	unsigned long pfn = start, next;
	int ret, err = 0;

	while (pfn < end) {
		struct page *page = pfn_to_online_page(pfn);

		/* Beyond its zone's span a page is a hole with a memmap. */
		if (!page || !zone_spans_pfn(page_zone(page), pfn)) {
			*hole = pfn;
			if (!skip_holes)
				return -EBUSY;
			err = -EBUSY;
			pfn++;
			continue;
		}
		next = run_end(pfn, end);
		ret = fn(pfn, next, arg);
		if (ret && !skip_holes)
			return ret;
		pfn = next;
	}
	return err;
}

/*
 * Does [@start, @end) have ZONE_DMA memory?  Checked before the walk over
 * the zone runs, so a region that starts with a hole (pfn 0 on x86) is
 * refused for its ZONE_DMA memory, not for the hole.
 */
static int refuse_dma(unsigned long start, unsigned long end, struct netlink_ext_ack *extack)
{
#ifdef CONFIG_ZONE_DMA
	struct zone *zone;

	for_each_populated_zone(zone) {
		if (zone_idx(zone) == ZONE_DMA && zone_intersects(zone, start, end - start)) {
			NL_SET_ERR_MSG(extack,
				       "region holds ZONE_DMA memory, which is never parked or held");
			return -EPERM;
		}
	}
#endif
	return 0;
}

/*
 * A region holding the memmap of a hotplugged memory block cannot be
 * emptied (see regionpm_block_memmap_pages()): say so at once rather than
 * compact it and fail on the first pageblock.
 */
static int refuse_memmap(unsigned long start, unsigned long end, struct netlink_ext_ack *extack)
{
	unsigned long block_pages = PHYS_PFN(memory_block_size_bytes());
	unsigned long pfn, n;

	for (pfn = ALIGN_DOWN(start, block_pages); pfn < end; pfn += block_pages) {
		n = regionpm_block_memmap_pages(pfn);
		/* A region smaller than a block may lie past the memmap. */
		if (n && pfn + n > start) {
			/* extack messages stop at 80 characters */
			NL_SET_ERR_MSG(extack,
				       "region holds its memory block's memmap (memmap_on_memory)");
			return -EPERM;
		}
	}
	return 0;
}

struct limit_check {
	struct netlink_ext_ack *extack;
	struct regionpm_region *r;
	const char *what;		/* "parking" or "holding" */
};

/* Pages of @r's hold in [@start, @end); under regionpm.lock, @r busy. */
static unsigned long held_in(struct regionpm_region *r, unsigned long start, unsigned long end)
{
	unsigned long base = regionpm_start_pfn(regionpm_id(r)), i, n = 0;

	if (!r->hold)
		return 0;
	for (i = (start - base) / pageblock_nr_pages;
	     i < DIV_ROUND_UP(end - base, pageblock_nr_pages); i++)
		if (test_bit(i, r->hold->isolated))
			n += pageblock_nr_pages;
	return n;
}

/*
 * The ZONE_DMA (ISA DMA, 16 MiB on x86) is kept for the devices that need
 * it.  Parked and held pages together stay within max_parked_pct; the
 * region counts whole, its own hold once.
 */
static int check_run_zone(unsigned long start, unsigned long end, void *arg)
{
	struct zone *zone = page_zone(pfn_to_page(start));
	struct limit_check *lc = arg;
	struct cap_share c;

#ifdef CONFIG_ZONE_DMA
	if (zone_idx(zone) == ZONE_DMA) {
		NL_SET_ERR_MSG(lc->extack,
			       "region holds ZONE_DMA memory, which is never parked or held");
		return -EPERM;
	}
#endif
	cap_share(zone, &c);
	c.held -= min(c.held, held_in(lc->r, start, end));
	if ((c.parked + c.held + end - start) * 100 > c.total * READ_ONCE(max_parked_pct)) {
		NL_SET_ERR_MSG_FMT(lc->extack,
				   "%s would exceed max_parked_pct=%u%% of node %d zone %s%s",
				   lc->what, READ_ONCE(max_parked_pct), zone_to_nid(zone),
				   zone->name, zone_idx(zone) == ZONE_MOVABLE ?
				   " and below" : "");
		return -ENOSPC;
	}
	return 0;
}

/* Add @sign * the region's pages per zone to zone_parked; under park_lock. */
static int count_run(unsigned long start, unsigned long end, void *arg)
{
	long sign = *(long *)arg;

	zone_parked[zone_slot(page_zone(pfn_to_page(start)))] += sign * (long)(end - start);
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

/*
 * Give a run back in chunks of at most MAX_ORDER_NR_PAGES, as
 * virtio_mem_fake_online() does, rescheduling in between: a release of
 * many GiB (every parked region, from the OOM notifier) must not hold
 * the CPU.  Every caller can sleep.
 *
 * PageOffline is cleared without page_offline_begin(), as
 * virtio_mem_clear_fake_offline() does: that lock orders setting the
 * flag against pfn walkers, and a walker that still sees it set only
 * skips a page.  Taking it here would deadlock: /proc/kcore holds it for
 * reading while it allocates and copies to user memory, and that can
 * enter reclaim, whose shrinker (or the OOM notifier) releases parked
 * regions through here.
 */
static int give_run(unsigned long start, unsigned long end, void *arg)
{
	unsigned long pfn, chunk, i;

	for (pfn = start; pfn < end; pfn += chunk) {
		chunk = min(end - pfn, MAX_ORDER_NR_PAGES - (pfn & (MAX_ORDER_NR_PAGES - 1)));
		for (i = 0; i < chunk; i++)
			__folio_clear_offline(pfn_folio(pfn + i));
		adjust_managed_page_count(pfn_to_page(pfn), chunk);
		free_contig_range(pfn, chunk);
		cond_resched();
	}
	return 0;
}

/*
 * Take a run of a held region whose pageblocks are all isolated and whose
 * pages are all free, straight from the isolated free lists, as
 * alloc_contig_range() does once it has isolated and emptied a range: the
 * pages never go back to the allocator in between.
 */
static int take_held_run(unsigned long start, unsigned long end, void *arg)
{
	struct compact_control cc = {
		.order = -1,
		.zone = page_zone(pfn_to_page(start)),
		.mode = MIGRATE_SYNC,
		.ignore_skip_hint = true,
		.no_set_skip_hint = true,
		.alloc_contig = true,
	};
	unsigned long *taken = arg, outer_end, pfn;
	struct page *page, *next;
	unsigned int order;

	INIT_LIST_HEAD(&cc.migratepages);
	if (test_pages_isolated(start, end, 0))
		return -EBUSY;
	outer_end = isolate_freepages_range(&cc, start, end);
	if (!outer_end)
		return -EBUSY;
	/* As split_free_pages(): order-0 pages, each with a reference. */
	for (order = 0; order < NR_PAGE_ORDERS; order++) {
		list_for_each_entry_safe(page, next, &cc.freepages[order], lru) {
			list_del(&page->lru);
			post_alloc_hook(page, order, GFP_KERNEL);
			set_page_refcounted(page);
			if (order)
				split_page(page, order);
		}
	}
	/* A free block never straddles a zone or a hole: nothing beyond @end. */
	if (outer_end > end)
		free_contig_range(end, outer_end - end);
	page_offline_begin();
	for (pfn = start; pfn < end; pfn++)
		__folio_set_offline(pfn_folio(pfn));
	page_offline_end();
	adjust_managed_page_count(pfn_to_page(start), -(long)(end - start));
	*taken = end;
	return 0;
}

static void hold_free(struct regionpm_hold *hold)
{
	if (!hold)
		return;
	bitmap_free(hold->isolated);
	kfree(hold->before);
	kfree(hold);
}

static struct regionpm_hold *hold_alloc(void)
{
	unsigned long nr = regionpm_pages() / pageblock_nr_pages;
	struct regionpm_hold *hold = kzalloc(sizeof(*hold), GFP_KERNEL);

	if (!hold)
		return NULL;
	hold->isolated = bitmap_zalloc(nr, GFP_KERNEL);
	hold->before = kcalloc(nr, sizeof(*hold->before), GFP_KERNEL);
	if (!hold->isolated || !hold->before) {
		hold_free(hold);
		return NULL;
	}
	return hold;
}

/*
 * Give the isolated pageblocks of a hold back, each with its type
 * restored, and forget the hold; under park_lock.  The pages of the
 * region are either all free on the isolated lists (a release) or all
 * taken (a park): nothing allocates while holding park_lock.
 */
static void unhold_locked(struct regionpm_region *r)
{
	unsigned long start = regionpm_start_pfn(regionpm_id(r)), i, pfn;
	unsigned long nr = regionpm_pages() / pageblock_nr_pages;
	struct regionpm_hold *hold = r->hold;

	for_each_set_bit(i, hold->isolated, nr) {
		pfn = start + i * pageblock_nr_pages;
		undo_isolate_page_range(pfn, pfn + pageblock_nr_pages,
					restore_type(hold->before[i]));
		zone_held[zone_slot(page_zone(pfn_to_page(pfn)))] -= pageblock_nr_pages;
		cond_resched();
	}
	regionpm.held_pages -= r->held;
	r->held = 0;
	r->hold = NULL;
	hold_free(hold);
	list_del_init(&r->parked_node);
}

/*
 * End the hold of @r (HELD) and tell why; under park_lock.  Returns the
 * free pages it gives back to the allocator (those of the region, at most
 * its held pages: an estimate when only part of it was held).
 */
static unsigned long release_hold_locked(struct regionpm_region *r,
					 enum regionpm_release_reason reason)
{
	unsigned long pages = r->held;
	unsigned long freed = min_t(unsigned long, max(0L, regionpm_region_free(r)), pages);

	WRITE_ONCE(r->state, REGIONPM_REGION_STATE_BUSY);
	unhold_locked(r);
	list_del_init(&r->owner_node);
	r->owner = NULL;
	r->owner_portid = 0;
	WRITE_ONCE(r->state, REGIONPM_REGION_STATE_ACTIVE);
	regionpm_nl_notify_release(regionpm_id(r), reason, pages);
	return freed;
}

/*
 * Take every page of [@start, @end) with @take; on failure give back what
 * the runs before the failing one took and say why (-EBUSY).
 */
static int take_pages(unsigned long start, unsigned long end,
		      int (*take)(unsigned long, unsigned long, void *),
		      const struct regionpm_compact_res *res, struct netlink_ext_ack *extack)
{
	unsigned long taken = start, hole = 0;

	if (!walk_zone_runs(start, end, take, &taken, &hole, false))
		return 0;
	if (taken > start)
		walk_zone_runs(start, taken, give_run, NULL, &hole, true);
	if (hole)
		NL_SET_ERR_MSG_FMT(extack, "region has a hole at pfn %#lx", hole);
	else if (res->obstacle != REGIONPM_OBSTACLE_NONE)
		NL_SET_ERR_MSG_FMT(extack, "cannot empty the region: obstacle at pfn %#lx",
				   res->obstacle_pfn);
	else
		NL_SET_ERR_MSG(extack, "cannot take the region's pages (still in use)");
	return -EBUSY;
}

/*
 * Park a held region: every pageblock must be isolated (those the hold
 * could not isolate are tried again) and every page free; then the pages
 * are taken from the isolated free lists.  On failure the region stays
 * held, with what was taken given back to its isolated free lists.
 */
static int take_held(struct regionpm_region *r, unsigned long start, unsigned long end,
		     struct regionpm_compact_res *res, struct netlink_ext_ack *extack)
{
	unsigned long nr = regionpm_pages() / pageblock_nr_pages, i;

	for (i = 0; i < nr; i++) {
		/* The limit was checked for the whole region. */
		if (!hold_block(r, i, false)) {
			NL_SET_ERR_MSG_FMT(extack, "pageblock at pfn %#lx cannot be isolated",
					   start + i * pageblock_nr_pages);
			return -EBUSY;
		}
		cond_resched();
	}
	drain_range_pcp(start, end - start);
	return take_pages(start, end, take_held_run, res, extack);
}

int regionpm_park(const struct regionpm_compact_req *req, bool compact_first,
		  struct regionpm_sock *owner, u32 portid,
		  struct regionpm_compact_res *res,
		  struct netlink_ext_ack *extack)
{
	struct regionpm_region *r = &regionpm.regions[req->id];
	unsigned long start = req->start_pfn, end = start + req->nr_pages;
	unsigned long hole = 0;
	struct limit_check lc = { .extack = extack, .r = r, .what = "parking" };
	long in_use, plus = 1;
	bool held;
	int ret;

	get_online_mems();
	if (mutex_lock_killable(&regionpm.lock)) {
		put_online_mems();
		return -EINTR;
	}
	ret = claim(r, owner, &held, extack);
	if (ret)
		goto unlock;
	/* Only releases run meanwhile (regionpm.lock): the check stays true. */
	ret = refuse_dma(start, end, extack);
	if (!ret)
		ret = refuse_memmap(start, end, extack);
	if (!ret)
		ret = walk_zone_runs(start, end, check_run_zone, &lc, &hole, false);
	if (ret) {
		if (hole)
			NL_SET_ERR_MSG_FMT(extack, "region has a hole at pfn %#lx", hole);
		goto restore;
	}
	if (compact_first) {
		ret = compact_range(req, r, res, extack);
		if (ret)
			goto restore;
		/*
		 * With vm.compact_unevictable_allowed=0 mlocked pages must not
		 * move, and alloc_contig_range() would move them.
		 */
		if (res->kept_mlocked) {
			NL_SET_ERR_MSG(extack,
				       "region holds mlocked pages and vm.compact_unevictable_allowed=0");
			ret = -EBUSY;
			goto restore;
		}
		/* Taking the pages would migrate the rest below the marks. */
		if (res->obstacle == REGIONPM_OBSTACLE_NO_ROOM) {
			ret = -EBUSY;
			goto restore;
		}
	} else {
		drain_range_pcp(start, end - start);
		in_use = atomic_long_read(&r->managed) - regionpm_region_free(r);
		if (in_use > 0) {
			NL_SET_ERR_MSG_FMT(extack, "region is not empty: %ld pages in use", in_use);
			ret = -EBUSY;
			goto restore;
		}
	}
	if (held)
		ret = take_held(r, start, end, res, extack);
	else
		ret = take_pages(start, end, take_run, res, extack);
	if (ret)
		goto restore;
	mutex_lock(&regionpm.park_lock);
	/* All pages are taken: the pageblocks of a hold get their types back. */
	if (held) {
		unhold_locked(r);
		list_del_init(&r->owner_node);
	}
	r->parked = end - start;
	r->owner = owner;
	r->owner_portid = portid;
	list_add(&r->owner_node, &owner->parked);
	list_add(&r->parked_node, &parked_regions);
	walk_zone_runs(start, end, count_run, &plus, &hole, true);
	regionpm.parked_pages += r->parked;
	WRITE_ONCE(r->state, REGIONPM_REGION_STATE_PARKED);
	mutex_unlock(&regionpm.park_lock);
	/* Watermarks follow the managed pages that are left. */
	update_wmarks();
	res->free_pages = 0;
	mutex_unlock(&regionpm.lock);
	put_online_mems();
	return 0;

restore:
	set_state(r, held ? REGIONPM_REGION_STATE_HELD : REGIONPM_REGION_STATE_ACTIVE);
	if (held)
		hold_kick();
unlock:
	mutex_unlock(&regionpm.lock);
	put_online_mems();
	return ret;
}

/*
 * Hold a region for @owner, or renew the hold it has: isolate every
 * pageblock that can be (a renewal tries those that could not before
 * again, within max_parked_pct) and restart the timeout.
 */
int regionpm_hold(unsigned long id, struct regionpm_sock *owner, u32 portid,
		  struct netlink_ext_ack *extack)
{
	struct regionpm_region *r = &regionpm.regions[id];
	unsigned long start = regionpm_start_pfn(id), end = start + regionpm_pages();
	unsigned long nr = regionpm_pages() / pageblock_nr_pages, i, hole = 0;
	struct limit_check lc = { .extack = extack, .r = r, .what = "holding" };
	struct regionpm_hold *hold;
	bool renew;
	int ret;

	get_online_mems();
	if (mutex_lock_killable(&regionpm.lock)) {
		put_online_mems();
		return -EINTR;
	}
	ret = claim(r, owner, &renew, extack);
	if (ret)
		goto unlock;
	if (!renew) {
		ret = refuse_dma(start, end, extack);
		if (!ret)
			ret = refuse_memmap(start, end, extack);
		if (!ret)
			ret = walk_zone_runs(start, end, check_run_zone, &lc, &hole, false);
		if (ret) {
			if (hole)
				NL_SET_ERR_MSG_FMT(extack, "region has a hole at pfn %#lx", hole);
			goto restore;
		}
		hold = hold_alloc();
		if (!hold) {
			ret = -ENOMEM;
			goto restore;
		}
		mutex_lock(&regionpm.park_lock);
		r->hold = hold;
		mutex_unlock(&regionpm.park_lock);
	}
	/* A new hold fits whole (checked above); a renewal grows within the limit. */
	for (i = 0; i < nr; i++) {
		hold_block(r, i, renew);
		cond_resched();
	}
	/* Free pages of the region on per-cpu lists would still be handed out. */
	drain_range_pcp(start, end - start);
	mutex_lock(&regionpm.park_lock);
	r->hold->held_at = jiffies;
	if (!renew) {
		r->owner = owner;
		r->owner_portid = portid;
		list_add(&r->owner_node, &owner->parked);
		list_add(&r->parked_node, &held_regions);
	}
	WRITE_ONCE(r->state, REGIONPM_REGION_STATE_HELD);
	mutex_unlock(&regionpm.park_lock);
	hold_kick();
	goto unlock;

restore:
	set_state(r, renew ? REGIONPM_REGION_STATE_HELD : REGIONPM_REGION_STATE_ACTIVE);
unlock:
	mutex_unlock(&regionpm.lock);
	put_online_mems();
	return ret;
}

/*
 * Caller holds regionpm.park_lock; @r is parked.  The caller recomputes
 * the watermarks once it has released all it wanted.
 */
static unsigned long release_locked(struct regionpm_region *r,
				    enum regionpm_release_reason reason)
{
	unsigned long id = regionpm_id(r), start = regionpm_start_pfn(id);
	unsigned long pages = r->parked, hole = 0;
	long minus = -1;

	WRITE_ONCE(r->state, REGIONPM_REGION_STATE_BUSY);
	walk_zone_runs(start, start + pages, count_run, &minus, &hole, true);
	/* A parked region has no hole: memory offline releases it first. */
	if (walk_zone_runs(start, start + pages, give_run, NULL, &hole, true))
		WARN_ONCE(1, "regionpm: region %lu lost memory at pfn %#lx while parked\n",
			  id, hole);
	list_del_init(&r->owner_node);
	list_del_init(&r->parked_node);
	r->owner = NULL;
	r->owner_portid = 0;
	r->parked = 0;
	regionpm.parked_pages -= pages;
	WRITE_ONCE(r->state, REGIONPM_REGION_STATE_ACTIVE);
	regionpm_nl_notify_release(id, reason, pages);
	return pages;
}

/* Any socket may unpark a parked region; only its owner may end a hold. */
int regionpm_unpark(unsigned long id, struct regionpm_sock *owner,
		    struct netlink_ext_ack *extack)
{
	struct regionpm_region *r = &regionpm.regions[id];
	bool parked = false;
	int ret = 0;

	mutex_lock(&regionpm.park_lock);
	if (r->state == REGIONPM_REGION_STATE_PARKED) {
		release_locked(r, REGIONPM_RELEASE_REASON_UNPARK);
		parked = true;
	} else if (r->state == REGIONPM_REGION_STATE_HELD && r->owner == owner) {
		release_hold_locked(r, REGIONPM_RELEASE_REASON_UNPARK);
	} else if (r->state == REGIONPM_REGION_STATE_HELD) {
		NL_SET_ERR_MSG_FMT(extack, "region is held by another socket (port id %u)",
				   r->owner_portid);
		ret = -EBUSY;
	} else {
		NL_SET_ERR_MSG(extack, "region is not parked");
		ret = -EINVAL;
	}
	mutex_unlock(&regionpm.park_lock);
	if (parked)
		update_wmarks();
	return ret;
}

/* The owning socket is being released (closed, or its owner died). */
void regionpm_release_owner(struct regionpm_sock *owner)
{
	struct regionpm_region *r, *tmp;
	bool any = false;

	mutex_lock(&regionpm.park_lock);
	list_for_each_entry_safe(r, tmp, &owner->parked, owner_node) {
		if (r->state == REGIONPM_REGION_STATE_PARKED) {
			release_locked(r, REGIONPM_RELEASE_REASON_OWNER_CLOSED);
			any = true;
		} else if (r->state == REGIONPM_REGION_STATE_HELD) {
			release_hold_locked(r, REGIONPM_RELEASE_REASON_OWNER_CLOSED);
		} else {
			/*
			 * Busy in a request of this socket: cannot be, the
			 * request holds the socket.  Orphan it; the hold
			 * timeout ends it.
			 */
			WARN_ON_ONCE(1);
			list_del_init(&r->owner_node);
			r->owner = NULL;
		}
	}
	mutex_unlock(&regionpm.park_lock);
	if (any)
		update_wmarks();
}

/* Holds not renewed within hold_timeout_ms end; re-armed for the next. */
static void hold_expire_workfn(struct work_struct *work)
{
	unsigned long timeout = msecs_to_jiffies(READ_ONCE(hold_timeout_ms));
	unsigned long now = jiffies, next = 0, expiry;
	struct regionpm_region *r, *tmp;
	bool rearm = false;

	mutex_lock(&regionpm.park_lock);
	list_for_each_entry_safe(r, tmp, &held_regions, parked_node) {
		/* A busy one is looked at when its request ends (hold_kick()). */
		if (r->state != REGIONPM_REGION_STATE_HELD)
			continue;
		expiry = r->hold->held_at + timeout;
		if (time_after_eq(now, expiry)) {
			release_hold_locked(r, REGIONPM_RELEASE_REASON_TIMEOUT);
			continue;
		}
		if (!rearm || time_before(expiry, next))
			next = expiry;
		rearm = true;
	}
	mutex_unlock(&regionpm.park_lock);
	if (rearm)
		mod_delayed_work(system_wq, &hold_expire_work, next - now);
}

/*
 * Does a parked region help an allocation on node @nid (NUMA_NO_NODE:
 * any) that may use zones up to @high?  Only its first page's zone and
 * node are looked at: a parked region never straddles ZONE_DMA (refused)
 * and node and zone boundaries are memory-block aligned in practice.
 */
static bool region_helps(struct regionpm_region *r, int nid, enum zone_type high)
{
	struct zone *zone = page_zone(pfn_to_page(regionpm_start_pfn(regionpm_id(r))));

	return zone_idx(zone) <= high && (nid == NUMA_NO_NODE || zone_to_nid(zone) == nid);
}

/*
 * Parked and held pages an allocation on @nid limited to zones up to @high
 * could use.  Held pages are counted whole, though only their free ones
 * come back.
 */
static unsigned long parked_for(int nid, enum zone_type high)
{
	unsigned long sum = 0;
	int n, z;

	for_each_node_state(n, N_MEMORY) {
		if (nid != NUMA_NO_NODE && n != nid)
			continue;
		for (z = 0; z <= high; z++)
			sum += READ_ONCE(zone_parked[n * MAX_NR_ZONES + z]) +
			       READ_ONCE(zone_held[n * MAX_NR_ZONES + z]);
	}
	return sum;
}

/*
 * Pressure: holds until @want pages came back, parked regions until
 * @want_parked did.  Both paths can run inside an allocation made by a
 * compaction or a park in progress; that holds regionpm.lock but never park_lock,
 * which nothing holds across an allocation, so waiting for it is safe and
 * parked memory always comes back before the OOM killer runs.  Holds go
 * first (they cost their owner least: a hold is taken again more cheaply
 * than a park), then the most recently parked regions that help; one pass
 * over each list.  A held region that is busy (being compacted or parked)
 * is left alone.
 */
static unsigned long release_some(unsigned long want, unsigned long want_parked, int nid,
				  enum zone_type high, enum regionpm_release_reason reason)
{
	struct regionpm_region *r, *tmp;
	unsigned long freed = 0, parked = 0;

	mutex_lock(&regionpm.park_lock);
	list_for_each_entry_safe(r, tmp, &held_regions, parked_node) {
		if (freed >= want)
			break;
		if (r->state == REGIONPM_REGION_STATE_HELD && region_helps(r, nid, high))
			freed += release_hold_locked(r, reason);
	}
	list_for_each_entry_safe(r, tmp, &parked_regions, parked_node) {
		if (parked >= want_parked)
			break;
		if (region_helps(r, nid, high)) {
			unsigned long n = release_locked(r, reason);

			freed += n;
			parked += n;
		}
	}
	mutex_unlock(&regionpm.park_lock);
	if (freed)
		update_wmarks();
	return freed;
}

/*
 * The shrinker is NUMA aware and looks at the allocation's zones: parked
 * memory of another node, or of ZONE_NORMAL for a DMA32 allocation, would
 * not help.  kswapd reclaims with GFP_KERNEL whatever zone it balances, so
 * for kswapd every zone of the node counts.
 */
static enum zone_type shrink_high_zone(struct shrink_control *sc)
{
	return current_is_kswapd() ? MAX_NR_ZONES - 1 : gfp_zone(sc->gfp_mask);
}

static unsigned long shrink_count(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long parked = parked_for(sc->nid, shrink_high_zone(sc));

	return parked ? parked : SHRINK_EMPTY;
}

/*
 * Reclaim asks a shrinker for a few dozen objects a call while it has
 * just begun (freeable >> priority), and a parked region is tens of
 * thousands of pages: giving one back per call gave a region back at
 * every kswapd wake-up, where reclaiming a little cold cache was all it
 * took, and the daemon parked it again moments later (a ping-pong seen
 * under a database-like workload and with ZONE_MOVABLE).  So the requests
 * are summed per node, and parked regions go back once they add up to a
 * region: as reclaim struggles its priority falls and the requests grow
 * exponentially, so real pressure gets memory back within a few rounds,
 * and the OOM notifier gives everything back regardless.  Holds carry no
 * data and go back at once.  Requests older than shrink_debt_ms are
 * forgotten: pressure that stopped owes nothing.
 */
static unsigned int shrink_debt_ms = 5000;
module_param(shrink_debt_ms, uint, 0644);
MODULE_PARM_DESC(shrink_debt_ms, "Reclaim requests add up over this long before a parked region goes back (ms)");

static struct {
	unsigned long pages;	/* requested and not yet given */
	unsigned long when;	/* jiffies of the last request */
} shrink_debt[MAX_NUMNODES];
static DEFINE_SPINLOCK(shrink_debt_lock);

/* Add @nr to the node's debt; returns the parked pages due now (0: none). */
static unsigned long shrink_parked_due(int nid, unsigned long nr)
{
	unsigned long due = 0;

	if (nid < 0 || nid >= MAX_NUMNODES)
		nid = 0;
	spin_lock(&shrink_debt_lock);
	if (time_after(jiffies, shrink_debt[nid].when +
		       msecs_to_jiffies(READ_ONCE(shrink_debt_ms))))
		shrink_debt[nid].pages = 0;
	shrink_debt[nid].when = jiffies;
	shrink_debt[nid].pages += nr;
	if (shrink_debt[nid].pages >= regionpm_pages()) {
		due = shrink_debt[nid].pages;
		shrink_debt[nid].pages = 0;
	}
	spin_unlock(&shrink_debt_lock);
	return due;
}

/*
 * Reclaim for our own migrations: direct reclaim in the migrating task,
 * or kswapd while a migration runs or within a second of one (it was
 * woken by the migration's allocations).  Real pressure meanwhile still
 * reaches us through other tasks' direct reclaim and the OOM notifier.
 */
static bool reclaim_for_evacuation(void)
{
	struct task_struct *t = READ_ONCE(evacuator);
	unsigned long at;

	if (t == current)
		return true;
	at = READ_ONCE(evacuated_at);
	return current_is_kswapd() &&
	       (t || time_in_range_open(jiffies, at, at + HZ));
}

static unsigned long shrink_scan(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long due, freed;

	/* Counted as scanned (not SHRINK_STOP), so nothing is deferred. */
	if (reclaim_for_evacuation())
		return 0;
	due = shrink_parked_due(sc->nid, sc->nr_to_scan);
	freed = release_some(sc->nr_to_scan, due, sc->nid, shrink_high_zone(sc),
			     REGIONPM_RELEASE_REASON_SHRINKER);

	/* Nothing given yet: the request is owed, reclaim goes on elsewhere. */
	return freed;
}

/* The regions [*@first, *@last] that [@start, @end) spans; false if none. */
static bool range_regions(unsigned long start, unsigned long end,
			  unsigned long *first, unsigned long *last)
{
	if (start >= end || (start >> regionpm.shift) >= regionpm.nr)
		return false;
	*first = start >> regionpm.shift;
	*last = min((end - 1) >> regionpm.shift, regionpm.nr - 1);
	return true;
}

/*
 * Give back every region from @first to @last that is held, and with
 * @parked_too every one that is parked; under park_lock.  Returns whether a
 * parked one was among them (managed pages changed).
 */
static bool release_regions_locked(unsigned long first, unsigned long last,
				   bool parked_too, enum regionpm_release_reason reason)
{
	unsigned long id;
	bool parked = false;

	for (id = first; id <= last; id++) {
		struct regionpm_region *r = &regionpm.regions[id];

		if (r->state == REGIONPM_REGION_STATE_PARKED && parked_too) {
			release_locked(r, reason);
			parked = true;
		} else if (r->state == REGIONPM_REGION_STATE_HELD) {
			release_hold_locked(r, reason);
		}
	}
	return parked;
}

/*
 * The unlocked look first: does [@first, @last] hold a held region, or
 * with @parked_too a parked one?  Keeps park_lock out of every call that
 * has nothing to give back.
 */
static bool range_has_taken(unsigned long first, unsigned long last, bool parked_too)
{
	unsigned long id;

	for (id = first; id <= last; id++) {
		u8 state = READ_ONCE(regionpm.regions[id].state);

		if (state == REGIONPM_REGION_STATE_HELD ||
		    (parked_too && state == REGIONPM_REGION_STATE_PARKED))
			return true;
	}
	return false;
}

/*
 * Does [@start, @end) hold, outside the regions parked or held, a page
 * isolation will refuse for certain: reserved (boot memory, firmware),
 * slab or a page table?  Then alloc_contig_range() fails with -EBUSY
 * whatever we give back, and giving back would only undo a park.  A
 * gigantic huge page is looked for range after range over a whole zone
 * (alloc_contig_pages()); 1 GiB ranges with a slab page somewhere pass its
 * own check, which looks for reserved pages only, so one failed attempt
 * gave back every region parked in the zone.  The look is deliberately
 * narrow: a page it does not know (a kernel allocation without a flag, a
 * page pinned for a moment) counts as movable, because refusing a claim
 * that could have succeeded (a virtio-mem unplug) costs more than giving
 * back a region the daemon parks again.  Unlocked, like isolation's own
 * look (has_unmovable_pages()), of which this is the certain part.
 */
static bool range_has_unmovable(unsigned long start, unsigned long end,
				unsigned long first, unsigned long last)
{
	unsigned long id, pfn;

	for (id = first; id <= last; id++) {
		u8 state = READ_ONCE(regionpm.regions[id].state);
		unsigned long stop = min(end, regionpm_start_pfn(id + 1));

		if (state == REGIONPM_REGION_STATE_PARKED || state == REGIONPM_REGION_STATE_HELD)
			continue;
		pfn = max(start, regionpm_start_pfn(id));
		while (pfn < stop) {
			struct page *page = pfn_to_online_page(pfn);

			if (!(pfn & (pageblock_nr_pages - 1)))
				cond_resched();
			if (page && (PageReserved(page) || PageSlab(page) || PageTable(page)))
				return true;
			pfn += page ? max(regionpm_buddy_pages(page), 1UL) : 1;
		}
	}
	return false;
}

/*
 * alloc_contig_range() is about to isolate and take [@start, @end).  Parked
 * pages there are PageOffline with a reference and held pageblocks are
 * isolated, so it would fail with -EBUSY, again and again: virtio-mem could
 * never unplug the memory regionpmd emptied, nor could a gigantic huge page
 * be made from it.  Parked memory is free memory lent to us, so the caller
 * gets it: the regions go back first, with reason range-claimed.
 *
 * A region being parked or compacted (BUSY) is left alone: regionpm's own
 * alloc_contig_range() call in take_run() is the one on it, with
 * regionpm.lock held, and any other caller fails as it would have and
 * retries.  The unlocked look first keeps park_lock out of every call that
 * has nothing parked or held in range, regionpm's own included.
 */
void __regionpm_release_range(unsigned long start, unsigned long end)
{
	unsigned long first, last;
	bool parked;

	if (!range_regions(start, end, &first, &last) || !range_has_taken(first, last, true))
		return;
	if (range_has_unmovable(start, end, first, last))
		return;
	mutex_lock(&regionpm.park_lock);
	parked = release_regions_locked(first, last, true,
					REGIONPM_RELEASE_REASON_RANGE_CLAIMED);
	mutex_unlock(&regionpm.park_lock);
	if (parked)
		update_wmarks();
}

/*
 * offline_pages() is about to isolate [@start, @end).  A held region's
 * pageblocks are isolated already, and the isolation of an offline fails
 * on them with -EBUSY before any memory notifier runs: an operator's or
 * udev's offline, and virtio-mem's offline of a block it has unplugged,
 * would fail for as long as regionpmd renews the hold.  The holds in the
 * range end first (reason hotplug); their pages go back to the allocator
 * and the offline migrates whatever takes them meanwhile.  Parked regions
 * are left to MEM_GOING_OFFLINE, which gives their pages back into the
 * isolated range, where nothing else can take them.  Called with
 * mem_hotplug_lock held for writing, so no hold can start before the
 * isolation (holds take it for reading).
 */
void __regionpm_release_holds(unsigned long start, unsigned long end)
{
	unsigned long first, last;

	if (!range_regions(start, end, &first, &last) || !range_has_taken(first, last, false))
		return;
	mutex_lock(&regionpm.park_lock);
	release_regions_locked(first, last, false, REGIONPM_RELEASE_REASON_HOTPLUG);
	mutex_unlock(&regionpm.park_lock);
}

/* Global OOM only (not memcg): everything comes back, the last resort. */
static int oom_notify(struct notifier_block *nb, unsigned long unused, void *arg)
{
	unsigned long *freed = arg;

	*freed += release_some(ULONG_MAX, ULONG_MAX, NUMA_NO_NODE, MAX_NR_ZONES - 1,
			       REGIONPM_RELEASE_REASON_OOM);
	return NOTIFY_OK;
}

static struct notifier_block oom_nb = {
	.notifier_call = oom_notify,
};

/*
 * Memory going online: its regions get a counter slot for the zone.
 * Memory onlined into a zone that was empty: start counting it.  Parked
 * pages would block offlining: give them back into the isolated range.
 * offline_pages() ended the holds of the block's regions before it
 * isolated it (__regionpm_release_holds()), and none can start while it
 * holds mem_hotplug_lock; one found here would be ended all the same.
 */
static int regionpm_memory_notify(struct notifier_block *nb, unsigned long action, void *arg)
{
	struct memory_notify *mn = arg;
	unsigned long first, last;

	if (action == MEM_GOING_ONLINE) {
		regionpm_track_range(mn->start_pfn, mn->nr_pages);
		return NOTIFY_OK;
	}
	/*
	 * online_pages() and offline_pages() leave out the pages at the start
	 * of the block that hold its own memmap (memory_hotplug.
	 * memmap_on_memory); they are present all the same, and make their
	 * region one with unmanaged pages (see region_has_unmanaged()).
	 */
	if (action == MEM_ONLINE || action == MEM_OFFLINE) {
		unsigned long block = ALIGN_DOWN(mn->start_pfn,
						 PHYS_PFN(memory_block_size_bytes()));
		long nr = mn->nr_pages + (mn->start_pfn - block);

		regionpm_present_changed(block, action == MEM_ONLINE ? nr : -nr);
	}
	if (action == MEM_ONLINE) {
		regionpm_track_zone(page_zone(pfn_to_page(mn->start_pfn)));
		return NOTIFY_OK;
	}
	if (action != MEM_GOING_OFFLINE)
		return NOTIFY_OK;
	if (!range_regions(mn->start_pfn, mn->start_pfn + mn->nr_pages, &first, &last))
		return NOTIFY_OK;
	mutex_lock(&regionpm.park_lock);
	release_regions_locked(first, last, true, REGIONPM_RELEASE_REASON_HOTPLUG);
	mutex_unlock(&regionpm.park_lock);
	/* offline_pages() recomputes the watermarks itself afterwards. */
	return NOTIFY_OK;
}

static struct notifier_block memory_nb = {
	.notifier_call = regionpm_memory_notify,
};

static struct shrinker *shrinker;

int regionpm_evacuate_init(void)
{
	int ret;

	zone_parked = kcalloc(nr_node_ids * MAX_NR_ZONES, sizeof(*zone_parked), GFP_KERNEL);
	zone_held = kcalloc(nr_node_ids * MAX_NR_ZONES, sizeof(*zone_held), GFP_KERNEL);
	if (!zone_parked || !zone_held)
		goto err_zones;
	shrinker = shrinker_alloc(SHRINKER_NUMA_AWARE, "regionpm-parked");
	if (!shrinker)
		goto err_zones;
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
	kfree(zone_held);
	kfree(zone_parked);
	return ret;
err_zones:
	kfree(zone_held);
	kfree(zone_parked);
	return -ENOMEM;
}

/* Undo regionpm_evacuate_init(); only before anything could be parked or held. */
void regionpm_evacuate_exit(void)
{
	unregister_memory_notifier(&memory_nb);
	unregister_oom_notifier(&oom_nb);
	shrinker_free(shrinker);
	cancel_delayed_work_sync(&hold_expire_work);
	kfree(zone_held);
	kfree(zone_parked);
}
