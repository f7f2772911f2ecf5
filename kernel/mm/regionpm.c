// SPDX-License-Identifier: GPL-2.0
/*
 * regionpm core: the region table, the free and managed page counts the
 * buddy allocator keeps for it, the allocation bias, and the deferred
 * first-allocation event.
 *
 * A region is a naturally aligned physical range of 2^shift pages (by
 * default one memory block).  Region i covers pfns [i << shift,
 * (i + 1) << shift).  Regions are at least MAX_ORDER_NR_PAGES large, so a
 * buddy block never straddles two of them and the hooks touch exactly one
 * counter.
 */
#define pr_fmt(fmt) "regionpm: " fmt

#include <linux/irq_work.h>
#include <linux/log2.h>
#include <linux/memblock.h>
#include <linux/memory.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/moduleparam.h>
#include <linux/page-flags.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "internal.h"
#include "regionpm_internal.h"

DEFINE_STATIC_KEY_FALSE(regionpm_track_key);
DEFINE_STATIC_KEY_FALSE(regionpm_bias_key);

struct regionpm_state regionpm = {
	.lock = __MUTEX_INITIALIZER(regionpm.lock),
	.park_lock = __MUTEX_INITIALIZER(regionpm.park_lock),
};

/* Zones whose free pages are counted: set under zone->lock at snapshot. */
static DECLARE_BITMAP(tracked_zones, MAX_NUMNODES * MAX_NR_ZONES);

static inline bool zone_tracked(struct zone *zone)
{
	return test_bit(zone_to_nid(zone) * MAX_NR_ZONES + zone_idx(zone),
			tracked_zones);
}

/*
 * regionpm.region_size= (bytes, boot only): power of two, at least
 * MAX_ORDER_NR_PAGES pages (one largest buddy block, which is also at least
 * a pageblock) and at most 64 GiB (a DIMM rank; larger regions would make
 * one detail scan or compaction walk tens of millions of pages).  0 means
 * the memory block size.
 */
#define REGIONPM_MAX_REGION_SIZE	SZ_64G
static unsigned long region_size;
module_param(region_size, ulong, 0444);
MODULE_PARM_DESC(region_size, "Region size in bytes (boot only; default: memory block size)");

/* regionpm.enable=0 turns the whole helper off at boot. */
static bool enable = true;
module_param(enable, bool, 0444);
MODULE_PARM_DESC(enable, "Track regions at all (boot only)");

/* Minimum time between two batches of first-allocation events. */
static unsigned int event_interval_ms = 100;
module_param(event_interval_ms, uint, 0644);
MODULE_PARM_DESC(event_interval_ms, "Coalescing interval of first-allocation events (ms)");

/*
 * The allocation bias: frees of pages at or above the frontier go to the
 * tail of the free lists and skip the per-cpu lists, so allocations fill
 * low regions first.  frontier=-1 computes it: the lowest regions that hold
 * everything in use except page cache, plus bias_headroom_pct of memory,
 * stay in front.
 */
static bool bias;
static bool initialised;
static int frontier_param = -1;
module_param_named(frontier, frontier_param, int, 0644);
MODULE_PARM_DESC(frontier, "Allocation frontier region (-1: automatic)");

static unsigned int bias_headroom_pct = 10;
module_param(bias_headroom_pct, uint, 0644);
MODULE_PARM_DESC(bias_headroom_pct, "Free memory kept below the automatic frontier (% of managed)");

static void frontier_workfn(struct work_struct *work);
static DECLARE_DELAYED_WORK(frontier_work, frontier_workfn);

static int bias_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	bias = on;
	/* Before init (boot parameter) regionpm_init() applies it. */
	if (!smp_load_acquire(&initialised))
		return 0;
	if (on) {
		frontier_workfn(NULL);
		static_branch_enable(&regionpm_bias_key);
	} else {
		static_branch_disable(&regionpm_bias_key);
		cancel_delayed_work_sync(&frontier_work);
	}
	return 0;
}

static const struct kernel_param_ops bias_ops = {
	.set = bias_set,
	.get = param_get_bool,
};
module_param_cb(bias, &bias_ops, &bias, 0644);
MODULE_PARM_DESC(bias, "Allocation bias towards low regions");

bool __regionpm_bias_pfn(unsigned long pfn)
{
	return (pfn >> regionpm.shift) >= READ_ONCE(regionpm.frontier);
}

/*
 * First-allocation events.  A region is marked empty when a free makes all
 * its managed pages free; the next block taken from the free lists in it
 * clears the mark and notes an event.  The hook runs under zone->lock with
 * interrupts off, so it only sets a bit and raises an irq_work; the
 * irq_work queues a delayed work, which coalesces everything pending into
 * one message per region at most every event_interval_ms.
 *
 * The mark is set when free >= managed, not ==, so a managed count that
 * ran low (an update the hooks missed) cannot silence the event for good;
 * and the work drops an event for a region that is empty again by then
 * (a free block briefly taken and put back: page reporting, isolation).
 */
static unsigned long *alloc_pending;
static unsigned long *region_empty;
static unsigned long events_armed;

static bool region_all_free(struct regionpm_region *r)
{
	return atomic_long_read(&r->free) >= atomic_long_read(&r->managed);
}

static void event_workfn(struct work_struct *work)
{
	unsigned long id;

	clear_bit(0, &events_armed);
	for_each_set_bit(id, alloc_pending, regionpm.nr) {
		struct regionpm_region *r = &regionpm.regions[id];

		if (!test_and_clear_bit(id, alloc_pending))
			continue;
		if (READ_ONCE(r->state) != REGIONPM_REGION_STATE_ACTIVE)
			continue;
		if (region_all_free(r)) {
			set_bit(id, region_empty);
			continue;
		}
		regionpm_nl_notify_alloc(id);
	}
}

static DECLARE_DELAYED_WORK(event_work, event_workfn);

static void event_irq_workfn(struct irq_work *work)
{
	queue_delayed_work(system_wq, &event_work,
			   msecs_to_jiffies(READ_ONCE(event_interval_ms)));
}

static DEFINE_IRQ_WORK(event_irq_work, event_irq_workfn);

static void note_first_alloc(unsigned long id)
{
	if (test_and_set_bit(id, alloc_pending))
		return;
	if (!test_and_set_bit(0, &events_armed))
		irq_work_queue(&event_irq_work);
}

/*
 * Only unmovable and reclaimable blocks above the frontier go to the tail:
 * those are what pins a region.  Movable memory (page cache, anon) is left
 * to spread as usual -- the daemon moves or drops it -- because crowding it
 * into the low regions leaves slab nowhere to go but up.
 */
bool __regionpm_buddy_add(struct page *page, struct zone *zone,
			  unsigned int order, int migratetype, bool tail)
{
	unsigned long pfn = page_to_pfn(page);
	struct regionpm_region *r = regionpm_region(pfn);

	if (r && zone_tracked(zone)) {
		long free = atomic_long_add_return(1UL << order, &r->free);

		if (unlikely(free >= atomic_long_read(&r->managed)) &&
		    !test_bit(regionpm_id(r), region_empty))
			set_bit(regionpm_id(r), region_empty);
	}
	return tail || (migratetype != MIGRATE_MOVABLE && regionpm_bias_pfn(pfn));
}

void __regionpm_buddy_del(struct page *page, struct zone *zone,
			  unsigned int order)
{
	struct regionpm_region *r = regionpm_region(page_to_pfn(page));
	unsigned long id;

	if (!r || !zone_tracked(zone))
		return;
	atomic_long_sub(1L << order, &r->free);
	id = regionpm_id(r);
	if (unlikely(test_bit(id, region_empty)) && test_and_clear_bit(id, region_empty) &&
	    READ_ONCE(r->state) == REGIONPM_REGION_STATE_ACTIVE)
		note_first_alloc(id);
}

/*
 * adjust_managed_page_count() callers: free_initmem, balloons, virtio-mem,
 * memory hotplug, and our own park/unpark; and __free_pages_core() for
 * memblock ranges freed late (memblock_free_late()), which add to the
 * zone's managed count directly.  Hotplug passes a whole block; spread the
 * count over the regions it covers.
 */
void regionpm_managed_changed(struct page *page, long count)
{
	unsigned long pfn = page_to_pfn(page);
	long left = count < 0 ? -count : count;

	/* Pairs with the release in regionpm_init(): the table is ready. */
	if (!smp_load_acquire(&initialised))
		return;
	while (left > 0) {
		struct regionpm_region *r = regionpm_region(pfn);
		unsigned long end = ALIGN(pfn + 1, regionpm_pages());
		long n = min_t(long, left, end - pfn);

		if (!r)
			break;
		atomic_long_add(count < 0 ? -n : n, &r->managed);
		left -= n;
		pfn += n;
	}
}

static void frontier_workfn(struct work_struct *work)
{
	unsigned long used = 0, total = 0, sum = 0, id;
	int want = READ_ONCE(frontier_param);

	if (want < 0) {
		for (id = 0; id < regionpm.nr; id++) {
			long m = atomic_long_read(&regionpm.regions[id].managed);

			total += m;
			used += max(0L, m - atomic_long_read(&regionpm.regions[id].free));
		}
		/*
		 * Page cache fills whatever is free; counting it would push
		 * the frontier to the top.  Keep in front what cannot simply
		 * be dropped, plus headroom.
		 */
		used -= min(used, global_node_page_state(NR_FILE_PAGES));
		used += total / 100 * READ_ONCE(bias_headroom_pct);
		for (id = 0; id < regionpm.nr && sum < used; id++)
			sum += atomic_long_read(&regionpm.regions[id].managed);
		want = id;
	}
	WRITE_ONCE(regionpm.frontier, want);
	if (READ_ONCE(bias))
		queue_delayed_work(system_wq, &frontier_work, HZ);
}

bool regionpm_region_has_memory(unsigned long id)
{
	struct regionpm_region *r = &regionpm.regions[id];

	return atomic_long_read(&r->managed) || r->parked;
}

unsigned long regionpm_range_free(unsigned long start_pfn, unsigned long nr)
{
	unsigned long pfn, free = 0;

	for (pfn = start_pfn; pfn < start_pfn + nr; pfn++) {
		struct page *page = pfn_to_online_page(pfn);

		if (page && PageBuddy(page)) {
			unsigned int order = buddy_order_unsafe(page);

			if (order <= MAX_PAGE_ORDER) {
				free += 1UL << order;
				pfn += (1UL << order) - 1;
			}
		}
		if (!(pfn & 1023))
			cond_resched();
	}
	return min(free, nr);
}

/* The O(pages) breakdown of one region; racy by nature, like /proc/kpageflags. */
void regionpm_region_detail(unsigned long id, struct regionpm_detail *d)
{
	unsigned long pfn, start = regionpm_start_pfn(id);

	memset(d, 0, sizeof(*d));
	for (pfn = start; pfn < start + regionpm_pages(); pfn++) {
		struct page *page = pfn_to_online_page(pfn);

		if (!(pfn & 1023))
			cond_resched();
		if (!page)
			continue;
		if (PageBuddy(page)) {
			unsigned int order = buddy_order_unsafe(page);

			if (order <= MAX_PAGE_ORDER) {
				d->free += 1UL << order;
				pfn += (1UL << order) - 1;
			}
			continue;
		}
		if (PageCompound(page) || PageHuge(page))
			d->huge++;
		if (PageOffline(page)) {
			d->offline++;
		} else if (PageReserved(page)) {
			d->reserved++;
		} else if (PageSlab(page)) {
			d->slab++;
		} else if (PageTable(page)) {
			d->page_table++;
		} else if (PageLRU(page)) {
			switch (regionpm_peek_lru(page)) {
			case REGIONPM_LRU_UNEVICTABLE:
				d->unevictable++;
				break;
			case REGIONPM_LRU_ANON:
				d->anon++;
				break;
			case REGIONPM_LRU_SHMEM:
				d->shmem++;
				break;
			case REGIONPM_LRU_WRITEBACK:
				d->writeback++;
				break;
			case REGIONPM_LRU_DIRTY:
				d->file_dirty++;
				break;
			case REGIONPM_LRU_CLEAN:
				d->file_clean++;
				break;
			}
		} else {
			d->kernel_other++;
		}
	}
}

/*
 * The folio may be split, freed or reused under us: read its flags and
 * mapping once, without the folio_test_*() helpers, whose DEBUG_VM_PGFLAGS
 * checks assume a stable folio.  A stale answer only skews a statistic or
 * the obstacle named in a report.
 */
enum regionpm_lru_kind regionpm_peek_lru(struct page *page)
{
	struct folio *folio = page_folio(page);
	unsigned long flags = READ_ONCE(folio->flags);
	unsigned long mapping = (unsigned long)READ_ONCE(folio->mapping);

	if (flags & (BIT(PG_unevictable) | BIT(PG_mlocked)))
		return REGIONPM_LRU_UNEVICTABLE;
	if (mapping & PAGE_MAPPING_ANON)
		return REGIONPM_LRU_ANON;
	if (flags & BIT(PG_swapbacked))
		return REGIONPM_LRU_SHMEM;
	if (flags & BIT(PG_writeback))
		return REGIONPM_LRU_WRITEBACK;
	if (flags & BIT(PG_dirty))
		return REGIONPM_LRU_DIRTY;
	return REGIONPM_LRU_CLEAN;
}

/*
 * Count the free blocks of one zone into the regions and start tracking it.
 * At init for every populated zone; on MEM_ONLINE for a zone that was empty
 * until then (the hooks ignored it, so nothing is counted twice).
 */
void regionpm_track_zone(struct zone *zone)
{
	unsigned long flags;
	unsigned int order;
	int mt;

	spin_lock_irqsave(&zone->lock, flags);
	if (zone_tracked(zone))
		goto unlock;
	for (order = 0; order < NR_PAGE_ORDERS; order++) {
		for (mt = 0; mt < MIGRATE_TYPES; mt++) {
			struct page *page;

			list_for_each_entry(page, &zone->free_area[order].free_list[mt],
					    buddy_list) {
				struct regionpm_region *r = regionpm_region(page_to_pfn(page));

				if (r)
					atomic_long_add(1UL << order, &r->free);
			}
		}
	}
	set_bit(zone_to_nid(zone) * MAX_NR_ZONES + zone_idx(zone), tracked_zones);
unlock:
	spin_unlock_irqrestore(&zone->lock, flags);
}

/* Pages the buddy allocator got in [@pfn, @pfn + @nr): not reserved. */
static unsigned long __init count_managed(unsigned long pfn, unsigned long nr)
{
	unsigned long n = 0, end = pfn + nr;

	for (; pfn < end; pfn++) {
		struct page *page = pfn_to_online_page(pfn);

		/* Offline pages (balloons, virtio-mem) are not managed. */
		if (page && !PageReserved(page) && !PageOffline(page))
			n++;
	}
	return n;
}

static unsigned int __init pick_shift(void)
{
	unsigned long def = memory_block_size_bytes();
	unsigned long min = MAX_ORDER_NR_PAGES * PAGE_SIZE;

	if (!region_size)
		return ilog2(def) - PAGE_SHIFT;
	if (!is_power_of_2(region_size) || region_size < min ||
	    region_size > REGIONPM_MAX_REGION_SIZE) {
		pr_warn("region_size=%lu is not a power of two between %lu and %llu bytes; using %lu\n",
			region_size, min, REGIONPM_MAX_REGION_SIZE, def);
		region_size = 0;
		return ilog2(def) - PAGE_SHIFT;
	}
	return ilog2(region_size) - PAGE_SHIFT;
}

static int __init regionpm_init(void)
{
	unsigned long id, sec, last_sec, step, sum = 0;
	struct zone *zone;
	int ret;

	if (!enable)
		return 0;
	regionpm.shift = pick_shift();
	region_size = PAGE_SIZE << regionpm.shift;
	step = min_t(unsigned long, PAGES_PER_SECTION, regionpm_pages());
	regionpm.nr = DIV_ROUND_UP(max_possible_pfn, regionpm_pages());
	regionpm.regions = kvcalloc(regionpm.nr, sizeof(*regionpm.regions), GFP_KERNEL);
	alloc_pending = bitmap_zalloc(regionpm.nr, GFP_KERNEL);
	region_empty = bitmap_zalloc(regionpm.nr, GFP_KERNEL);
	if (!regionpm.regions || !alloc_pending || !region_empty) {
		ret = -ENOMEM;
		goto err_free;
	}

	for (id = 0; id < regionpm.nr; id++) {
		INIT_LIST_HEAD(&regionpm.regions[id].owner_node);
		INIT_LIST_HEAD(&regionpm.regions[id].parked_node);
	}
	/*
	 * Managed pages: what the buddy allocator got, i.e. not reserved.
	 * Sections that are not online are skipped whole: max_possible_pfn
	 * may lie far above the memory present (hotplug ranges, holes).
	 */
	last_sec = min_t(unsigned long, NR_MEM_SECTIONS,
			 pfn_to_section_nr((regionpm.nr << regionpm.shift) - 1) + 1);
	for (sec = 0; sec < last_sec; sec++) {
		unsigned long pfn, start = section_nr_to_pfn(sec);

		if (!online_section_nr(sec))
			continue;
		/* A section may hold several (small) regions. */
		for (pfn = start; pfn < start + PAGES_PER_SECTION; pfn += step) {
			struct regionpm_region *r = regionpm_region(pfn);
			unsigned long n = count_managed(pfn, step);

			if (r && n) {
				atomic_long_add(n, &r->managed);
				sum += n;
			}
		}
		cond_resched();
	}
	if (sum != totalram_pages())
		pr_warn("regions hold %lu managed pages, the allocator %lu\n",
			sum, totalram_pages());
	/* Pairs with the acquire in the hooks: the table is ready. */
	smp_store_release(&initialised, true);

	/* Hooks count from now on, but only in zones already snapshotted. */
	static_branch_enable(&regionpm_track_key);
	for_each_populated_zone(zone)
		regionpm_track_zone(zone);
	for (id = 0; id < regionpm.nr; id++)
		if (atomic_long_read(&regionpm.regions[id].managed) &&
		    region_all_free(&regionpm.regions[id]))
			set_bit(id, region_empty);

	ret = regionpm_evacuate_init();
	if (ret)
		goto err_track;
	ret = regionpm_nl_init();
	if (ret)
		goto err_evacuate;
	if (bias) {
		frontier_workfn(NULL);
		static_branch_enable(&regionpm_bias_key);
	}
	pr_info("%lu regions of %lu MiB, bias %s\n", regionpm.nr,
		region_size >> 20, bias ? "on" : "off");
	return 0;

err_evacuate:
	regionpm_evacuate_exit();
err_track:
	/* Hooks run with interrupts off: after a grace period none is left. */
	static_branch_disable(&regionpm_track_key);
	synchronize_rcu();
	/* ... but the events they raised may still be queued. */
	irq_work_sync(&event_irq_work);
	cancel_delayed_work_sync(&event_work);
err_free:
	/* Pairs with the acquires: nobody uses the table after this. */
	smp_store_release(&initialised, false);
	bitmap_free(region_empty);
	bitmap_free(alloc_pending);
	kvfree(regionpm.regions);
	regionpm.regions = NULL;
	regionpm.nr = 0;
	pr_err("disabled: %d\n", ret);
	return ret;
}
late_initcall(regionpm_init);
