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
 *
 * Counting costs the allocator a little on every free-list change, so it
 * only starts when someone asks for it: the first request to the netlink
 * family, regionpm.track=1 (boot or sysfs), or the bias.  Until then the
 * hooks are patched-out jumps.
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

#include <asm/dma.h>

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

/* Serialises starting to count and giving regions their zone slots. */
static DEFINE_MUTEX(track_mutex);

/*
 * Free pageblocks: bit n is set while pageblock n (pfn >> pageblock_order)
 * lies in a free buddy block on an UNMOVABLE, MOVABLE or RECLAIMABLE free
 * list, i.e. one a claim for unmovable memory may take whole.  Updated
 * only for blocks of at least pageblock_order, so never on the order-0
 * paths; set_bit() because zones share words.
 */
static unsigned long *free_blocks;
static unsigned long nr_blocks;

/*
 * A free unmovable or reclaimable block of a pageblock or more entered a
 * free list since the last retyping pass (see retype_free_blocks_behind()):
 * without one, and with the frontier where it was, a pass has nothing to
 * do, and on a large mostly free machine walking every free pageblock
 * each second would cost milliseconds.
 */
static bool retype_wanted;

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

/* regionpm.track=1: count free pages per region from boot on. */
static bool track;
static bool initialised;

static int track_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	/* Before init (boot parameter) regionpm_init() applies it. */
	if (!smp_load_acquire(&initialised)) {
		track = on;
		return 0;
	}
	if (!on)
		return static_key_enabled(&regionpm_track_key) ? -EBUSY : 0;
	return regionpm_track_start("sysfs");
}

static const struct kernel_param_ops track_ops = {
	.set = track_set,
	.get = param_get_bool,
};
module_param_cb(track, &track_ops, &track, 0644);
MODULE_PARM_DESC(track, "Count free pages per region (on by the first netlink request; cannot be turned off)");

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
static int frontier_param = -1;
module_param_named(frontier, frontier_param, int, 0644);
MODULE_PARM_DESC(frontier, "Allocation frontier region (-1: automatic)");

static unsigned int bias_headroom_pct = 10;
module_param(bias_headroom_pct, uint, 0644);
MODULE_PARM_DESC(bias_headroom_pct, "Free memory kept below the automatic frontier (% of managed)");

/*
 * Free pageblocks the bias keeps in front of each zone's frontier for
 * unmovable memory that grows: when fewer are left, the front keeper moves
 * page cache out of front pageblocks into the memory behind.  Without it,
 * once the front is full of slab and page cache, every new slab pageblock
 * is claimed wherever memory is free -- under regionpmd, in each region it
 * gives back, one after the other.
 */
static unsigned int bias_front_blocks = 8;
module_param(bias_front_blocks, uint, 0644);
MODULE_PARM_DESC(bias_front_blocks, "Free pageblocks the bias keeps in front of the frontier for unmovable memory (0: keeper off)");

/*
 * Pinned regions are in front of the automatic frontier wherever they
 * lie, and unmovable claims fill them first: regions with online pages
 * the buddy allocator does not manage (reserved at boot: the kernel image,
 * the memmap, firmware tables), and regions with an unmovable or
 * reclaimable pageblock.  Neither can be emptied as things stand, so
 * unmovable memory placed there costs no region; taking the lowest free
 * pageblock instead would start a new one whenever a region lower down
 * has a free pageblock (under regionpmd, the region it gave back last).
 * Recomputed with the frontier; empty with a fixed frontier.
 *
 * Those with unmanaged pages come first (pinned_unmanaged): nothing ever
 * empties them, while a region pinned only by slab may empty when its
 * objects are freed (the dentries of deleted files) unless new slab keeps
 * coming in.  Lowest first within each kind.
 */
static unsigned long *pinned;
static unsigned long *pinned_unmanaged;

static void frontier_workfn(struct work_struct *work);
static DECLARE_DELAYED_WORK(frontier_work, frontier_workfn);
static void front_workfn(struct work_struct *work);
static DECLARE_WORK(front_work, front_workfn);
static void front_irq_workfn(struct irq_work *work);
static DEFINE_IRQ_WORK(front_irq_work, front_irq_workfn);

static int bias_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	/* Before init (boot parameter) regionpm_init() applies it. */
	if (!smp_load_acquire(&initialised)) {
		bias = on;
		return 0;
	}
	/* The frontier is computed from the counts. */
	if (on) {
		ret = regionpm_track_start("bias");
		if (ret)
			return ret;
	}
	bias = on;
	if (on) {
		frontier_workfn(NULL);
		static_branch_enable(&regionpm_bias_key);
	} else {
		static_branch_disable(&regionpm_bias_key);
		cancel_delayed_work_sync(&frontier_work);
		irq_work_sync(&front_irq_work);
		cancel_work_sync(&front_work);
	}
	return 0;
}

static const struct kernel_param_ops bias_ops = {
	.set = bias_set,
	.get = param_get_bool,
};
module_param_cb(bias, &bias_ops, &bias, 0644);
MODULE_PARM_DESC(bias, "Allocation bias towards low regions");

/* The frontier of the node and zone @pfn belongs to, from its page's flags. */
static inline unsigned long frontier_of(unsigned long pfn)
{
	struct page *page = pfn_to_page(pfn);

	return READ_ONCE(regionpm.frontier_pfn[page_to_nid(page) * MAX_NR_ZONES +
					       page_zonenum(page)]);
}

static inline bool region_pinned(unsigned long pfn)
{
	unsigned long id = pfn >> regionpm.shift;

	return id < regionpm.nr && test_bit(id, pinned);
}

/* Is @pfn behind its zone's front: past the frontier and not pinned? */
bool __regionpm_bias_pfn(unsigned long pfn)
{
	return pfn >= frontier_of(pfn) && !region_pinned(pfn);
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

static __always_inline bool region_all_free(struct regionpm_region *r)
{
	return regionpm_region_free(r) >= atomic_long_read(&r->managed);
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
 * Add @n free pages of @zone to @r: the zone's slot is written only under
 * the zone's lock, which the hooks hold.  Returns false if @zone is not
 * counted (yet).
 */
static __always_inline bool count_free(struct regionpm_region *r, struct zone *zone, long n)
{
	int i;

	for (i = 0; i < REGIONPM_ZONE_SLOTS; i++) {
		if (READ_ONCE(r->zone[i]) == zone) {
			WRITE_ONCE(r->zone_free[i], r->zone_free[i] + n);
			return true;
		}
	}
	if (!zone_tracked(zone))
		return false;
	atomic_long_add(n, &r->free_other);
	return true;
}

/* A free block of at least a pageblock enters or leaves a claimable list. */
static inline void note_free_blocks(unsigned long pfn, unsigned int order, bool free)
{
	unsigned long pb = pfn >> pageblock_order;
	unsigned long n = 1UL << (order - pageblock_order);

	for (; n && pb < nr_blocks; n--, pb++) {
		if (free)
			set_bit(pb, free_blocks);
		else
			clear_bit(pb, free_blocks);
	}
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
	unsigned long pfn = page_to_pfn(page), id = pfn >> regionpm.shift;
	struct regionpm_region *r = regionpm_region(pfn);

	if (r && count_free(r, zone, 1L << order)) {
		if (order >= pageblock_order && migratetype < MIGRATE_PCPTYPES) {
			note_free_blocks(pfn, order, true);
			if (migratetype != MIGRATE_MOVABLE && !READ_ONCE(retype_wanted))
				WRITE_ONCE(retype_wanted, true);
		}
		if (unlikely(region_all_free(r)) && !test_bit(id, region_empty))
			set_bit(id, region_empty);
	}
	return tail || (migratetype != MIGRATE_MOVABLE && regionpm_bias_pfn(pfn));
}

void __regionpm_buddy_del(struct page *page, struct zone *zone,
			  unsigned int order)
{
	unsigned long pfn = page_to_pfn(page), id = pfn >> regionpm.shift;
	struct regionpm_region *r = regionpm_region(pfn);

	if (!r || !count_free(r, zone, -(1L << order)))
		return;
	if (order >= pageblock_order)
		note_free_blocks(pfn, order, false);
	if (unlikely(test_bit(id, region_empty)) && test_and_clear_bit(id, region_empty) &&
	    READ_ONCE(r->state) == REGIONPM_REGION_STATE_ACTIVE)
		note_first_alloc(id);
}

/* A free block moves to another free list: is it still claimable whole? */
void __regionpm_buddy_move(struct page *page, struct zone *zone,
			   unsigned int order, int migratetype)
{
	if (order >= pageblock_order && zone_tracked(zone)) {
		note_free_blocks(page_to_pfn(page), order,
				 migratetype < MIGRATE_PCPTYPES);
		if ((migratetype == MIGRATE_UNMOVABLE ||
		     migratetype == MIGRATE_RECLAIMABLE) && !READ_ONCE(retype_wanted))
			WRITE_ONCE(retype_wanted, true);
	}
}

/*
 * Pageblock @pb of @zone, if a free buddy block of at least a pageblock
 * starts at or covers it and is of at least @min_order: that block's head
 * (its order in @order).  The bit may be stale for another zone's word, so
 * the block is checked.  A smaller block is no answer: the allocator takes
 * the block returned as one of at least the order it asked for, and
 * expand() cannot make a block larger (a claim for 2^MAX_PAGE_ORDER pages
 * given a free pageblock next to an allocated one handed out the allocated
 * half too).
 */
static struct page *free_block_at(struct zone *zone, unsigned long pb,
				  unsigned int min_order, int *order)
{
	unsigned long pfn = pb << pageblock_order;
	unsigned int o;

	for (o = pageblock_order; o <= MAX_PAGE_ORDER; o++) {
		unsigned long head = ALIGN_DOWN(pfn, 1UL << o);
		struct page *page = pfn_to_online_page(head);

		if (!page || head < zone->zone_start_pfn || page_zone(page) != zone)
			return NULL;
		if (PageBuddy(page) && buddy_order(page) == o) {
			if (o < min_order ||
			    get_pageblock_migratetype(page) >= MIGRATE_PCPTYPES)
				return NULL;
			*order = o;
			return page;
		}
	}
	return NULL;
}

/*
 * The first free pageblock of @zone in pageblocks [@pb, @last) in a free
 * block of at least @min_order, or NULL.  A block that large covers the
 * whole aligned chunk of that order it lies in: after a pageblock that is
 * not in one, the rest of its chunk is not either.
 */
static struct page *first_free_block(struct zone *zone, unsigned long pb,
				     unsigned long last, unsigned int min_order,
				     int *order)
{
	unsigned long chunk = min_order > pageblock_order ?
			      1UL << (min_order - pageblock_order) : 1;
	struct page *page;

	for (pb = find_next_bit(free_blocks, last, pb); pb < last;
	     pb = find_next_bit(free_blocks, last, ALIGN(pb + 1, chunk))) {
		page = free_block_at(zone, pb, min_order, order);
		if (page)
			return page;
	}
	return NULL;
}

/* Pageblocks [*@first, *@last) of region @id, clipped to @zone. */
static void region_blocks(struct zone *zone, unsigned long id,
			  unsigned long *first, unsigned long *last)
{
	unsigned long start = max(regionpm_start_pfn(id), zone->zone_start_pfn);
	unsigned long end = min(regionpm_start_pfn(id + 1), zone_end_pfn(zone));

	*first = start >> pageblock_order;
	*last = min(DIV_ROUND_UP(end, pageblock_nr_pages), nr_blocks);
}

/* Region ids [*@first, *@last] that @zone spans. */
static void zone_regions(struct zone *zone, unsigned long *first, unsigned long *last)
{
	*first = zone->zone_start_pfn >> regionpm.shift;
	*last = min((zone_end_pfn(zone) - 1) >> regionpm.shift, regionpm.nr - 1);
}

/*
 * End (exclusive) of the pageblocks of @zone below its frontier, which start
 * at the zone's first pageblock; equal to that start if there are none.
 */
static unsigned long front_blocks_end(struct zone *zone)
{
	unsigned long end = min(zone_end_pfn(zone),
				READ_ONCE(regionpm.frontier_pfn[regionpm_zone_slot(zone)]));

	if (end <= zone->zone_start_pfn)
		return zone->zone_start_pfn >> pageblock_order;
	return min(DIV_ROUND_UP(end, pageblock_nr_pages), nr_blocks);
}

/*
 * The next pinned region of [@id, @last] in claim order, those with
 * unmanaged pages first (see pinned_unmanaged): *@pass is 0 while they
 * are walked, 1 for the others; @last + 1 after the last.  Start with
 * @id = @first and *@pass = 0.
 */
static unsigned long next_pinned(unsigned long id, unsigned long first,
				 unsigned long last, int *pass)
{
	for (;;) {
		id = find_next_bit(pinned, last + 1, id);
		while (id <= last && test_bit(id, pinned_unmanaged) == !!*pass)
			id = find_next_bit(pinned, last + 1, id + 1);
		if (id <= last || *pass)
			return id;
		*pass = 1;
		id = first;
	}
}

/*
 * A claim for unmovable or reclaimable memory with the bias on: the lowest
 * free pageblock of @zone in a pinned region (those with unmanaged pages
 * first), else, unless @pinned_only, the lowest below its frontier, as the
 * head of its buddy block (order in @order, at least @min_order, the order
 * the allocation asked for), or NULL.  @pinned_only: the
 * allocator can still try a lower zone (ALLOC_NOFRAGMENT), whose pinned
 * regions cost no new region either.
 * Claiming it whole keeps the new unmovable pageblock where unmovable
 * memory already is, where the fallback's "largest block first" would take
 * one anywhere.  Every claim also wakes the front keeper, so the pageblocks
 * claims take are replaced as they go: woken only when the front was
 * empty, it let claims made while it ran spill into a region of their own
 * (a fast fill at 8 GiB: 2,235 unmovable pages in ZONE_NORMAL's lowest
 * region while the memmap's region had 22 pageblocks free).  A claim is
 * one per pageblock of unmovable memory; the keeper returns at once while
 * the front is full.  Under zone->lock, which keeps the bits of this zone
 * and the buddy blocks stable.
 */
struct page *__regionpm_lowest_free_block(struct zone *zone,
					  unsigned int min_order, int *order,
					  bool pinned_only)
{
	unsigned long id, first, last, pb, end;
	struct page *page = NULL;
	int pass = 0;

	if (!zone_tracked(zone))
		return NULL;
	zone_regions(zone, &first, &last);
	for (id = next_pinned(first, first, last, &pass); id <= last;
	     id = next_pinned(id + 1, first, last, &pass)) {
		region_blocks(zone, id, &pb, &end);
		page = first_free_block(zone, pb, end, min_order, order);
		if (page)
			break;
	}
	if (!page && !pinned_only)
		page = first_free_block(zone, zone->zone_start_pfn >> pageblock_order,
					front_blocks_end(zone), min_order, order);
	if (READ_ONCE(bias_front_blocks))
		irq_work_queue(&front_irq_work);
	return page;
}

/*
 * A single-page steal with the bias on: the first block of @list (at most
 * a few looked at) that lies below its node's frontier, or NULL.
 */
struct page *__regionpm_low_block(struct list_head *list)
{
	struct page *page;
	int seen = 0;

	list_for_each_entry(page, list, buddy_list) {
		if (!__regionpm_bias_pfn(page_to_pfn(page)))
			return page;
		if (++seen >= 16)
			break;
	}
	return NULL;
}

/*
 * Movable memory that splits a whole free pageblock takes one behind the
 * frontier: the free pageblocks in front of it are where unmovable claims
 * go, and page cache would otherwise use them up first (at boot the free
 * lists are sorted low to high, and a file-heavy fill eats its way up from
 * the bottom).  Blocks in front of the frontier at the head of @list move
 * to its tail, a few per call, so the head soon holds blocks behind it;
 * when all are in front, the allocation simply takes one of them.
 */
struct page *__regionpm_movable_block(struct list_head *list, struct page *page)
{
	int n;

	for (n = 0; n < 8 && !__regionpm_bias_pfn(page_to_pfn(page)); n++) {
		if (list_is_singular(list))
			break;
		list_move_tail(&page->buddy_list, list);
		page = list_first_entry(list, struct page, buddy_list);
	}
	return page;
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

/*
 * Memblock hands memory to the buddy allocator in ascending order, each
 * block to the tail of its free list, so what is allocated before
 * regionpm starts (early slab, page tables, per-CPU and vmalloc pages)
 * takes the lowest pageblocks of each zone: unmovable pageblocks in a
 * region nothing else pins, which no keeper can empty later.  With the
 * bias asked for on the command line the blocks go to the head instead:
 * those allocations then come from the top of each zone, next to the
 * memmap and memblock's own allocations, which memblock places top-down.
 * Boot only: memory hotplug keeps the tail.  Deferred struct page init
 * would take the early allocations from the first section of each node's
 * highest zone whatever the order: regionpm_boot_no_defer() below.
 */
bool regionpm_boot_free_to_head(enum meminit_context context)
{
	if (context != MEMINIT_EARLY || !READ_ONCE(bias) || !enable ||
	    regionpm_boot_bottom_up())
		return false;
	/* Pairs with the release in regionpm_init(): not started yet. */
	return !smp_load_acquire(&initialised);
}

/*
 * Deferred struct page init (CONFIG_DEFERRED_STRUCT_PAGE_INIT, on in
 * distribution kernels) frees only the first section of each node's
 * highest zone before SMP: every early allocation then comes from that
 * section, the lowest region of ZONE_NORMAL, whatever the free order
 * above.  The struct pages are set up in memmap_init(), from setup_arch(),
 * before the module parameters are parsed, so the bias and enable
 * parameters are also read as early parameters here, and with the bias
 * asked for at boot defer_init() initialises all memory up front, as it
 * does for early_page_ext.  The cost is the boot time the deferral saves
 * on large machines: struct page init in one thread.
 */
static bool boot_bias __ro_after_init;
static bool boot_disabled __ro_after_init;

static int __init boot_bias_param(char *val)
{
	return kstrtobool(val ?: "1", &boot_bias);
}
early_param("regionpm.bias", boot_bias_param);

static int __init boot_enable_param(char *val)
{
	bool on;
	int ret = kstrtobool(val ?: "1", &on);

	if (!ret)
		boot_disabled = !on;
	return ret;
}
early_param("regionpm.enable", boot_enable_param);

bool regionpm_boot_no_defer(void)
{
	return boot_bias && !boot_disabled;
}

/*
 * With movablecore= (or kernelcore=) the top of each node is ZONE_MOVABLE,
 * and the top-down placement above splits the unmovable boot memory in
 * two: memblock (the memmap, about 1.6 % of memory, and the per-CPU and
 * node data) at the top of the node, inside ZONE_MOVABLE, and the early
 * slab at the top of the zones below it, in another region.  With
 * regionpm.bottom_up=1 memblock allocates bottom-up for the whole of boot,
 * as it does with movable_node until the SRAT is parsed, and the buddy
 * lists keep their ascending order: all of it then lies in the lowest
 * regions of each node, next to the kernel image and below the memory the
 * bias keeps for movable pages.  The price, on a machine without memory
 * above 4 GiB, is the low end of DMA32 instead of its top (see the floors
 * below).
 */
static bool boot_bottom_up __ro_after_init;

static int __init boot_bottom_up_param(char *val)
{
	return kstrtobool(val ?: "1", &boot_bottom_up);
}
early_param("regionpm.bottom_up", boot_bottom_up_param);

bool regionpm_boot_bottom_up(void)
{
	return boot_bottom_up && !boot_disabled;
}

/*
 * Where a bottom-up memblock allocation in [@start, @end) starts looking;
 * when nothing fits above it, memblock asks again with the floor as @end
 * for the next lower one, down to @start.  Kernel allocations prefer the
 * highest zone below ZONE_MOVABLE, so the early slab lies at the bottom
 * of ZONE_NORMAL: memblock's memory goes there too, rather than into
 * DMA32, which stays for devices that need it; and above ZONE_DMA, which
 * stays for legacy GFP_DMA users.
 */
phys_addr_t regionpm_memblock_floor(phys_addr_t start, phys_addr_t end)
{
	phys_addr_t floor = 0;

	if (!regionpm_boot_bottom_up())
		return start;
#if defined(CONFIG_ZONE_DMA32) && defined(MAX_DMA32_PFN)
	if (end > PFN_PHYS(MAX_DMA32_PFN) &&
	    memblock_end_of_DRAM() > PFN_PHYS(MAX_DMA32_PFN))
		floor = PFN_PHYS(MAX_DMA32_PFN);
#endif
#if defined(CONFIG_ZONE_DMA) && defined(MAX_DMA_PFN)
	if (!floor && end > PFN_PHYS(MAX_DMA_PFN))
		floor = PFN_PHYS(MAX_DMA_PFN);
#endif
	return max(start, floor);
}

/*
 * Does region @id hold online pages that are neither managed nor parked
 * (reserved at boot, gigantic pages taken from memblock, ballooned pages,
 * the memmap of a hotplugged block)?
 */
static bool region_has_unmanaged(unsigned long id)
{
	struct regionpm_region *r = &regionpm.regions[id];

	return READ_ONCE(r->present) >
	       atomic_long_read(&r->managed) + READ_ONCE(r->parked);
}

/*
 * Does region @id hold an unmovable or reclaimable pageblock of @zone in
 * use?  A wholly free one keeps its type after its slab is freed but pins
 * nothing: counting it would keep an empty region in front, attracting
 * new slab where the region could be parked.
 */
static bool region_has_unmovable_blocks(struct zone *zone, unsigned long id)
{
	unsigned long pb, last;

	region_blocks(zone, id, &pb, &last);
	for (; pb < last; pb++) {
		struct page *page = pfn_to_online_page(pb << pageblock_order);
		int mt;

		if (!page || page_zone(page) != zone || test_bit(pb, free_blocks))
			continue;
		mt = get_pageblock_migratetype(page);
		if (mt == MIGRATE_UNMOVABLE || mt == MIGRATE_RECLAIMABLE)
			return true;
	}
	return false;
}

static unsigned long retyped;
module_param(retyped, ulong, 0444);
MODULE_PARM_DESC(retyped, "Free pageblocks behind the front made movable (statistics)");

/*
 * Free unmovable and reclaimable blocks behind the front become movable.
 * A pageblock keeps its type when the slab or driver memory in it is
 * freed, and __rmqueue_smallest() takes a free block of the type asked
 * for before any claim is tried: the next unmovable allocation would
 * start a new unmovable pageblock there (a region just emptied of
 * dentries, or of a driver's buffer), behind the front, ahead of the
 * claims that place such pageblocks in front.  Page reporting makes the
 * free blocks it isolates movable the same way.  The frontier work (every
 * second) runs it after such a block was freed (retype_wanted) and every
 * 16 s for blocks a moved frontier left behind; until then a block keeps
 * its type.
 * Bits and types are read without zone->lock and checked under it, one
 * block at a time; a region not behind is skipped whole (the front and
 * the pinned set change per region).  Returns the blocks retyped.
 */
static unsigned long retype_free_blocks_behind(struct zone *zone)
{
	unsigned long first = zone->zone_start_pfn >> pageblock_order;
	unsigned long last = min(DIV_ROUND_UP(zone_end_pfn(zone), pageblock_nr_pages),
				 nr_blocks);
	unsigned long pb, flags, n = 0, seen = 0;

	for (pb = find_next_bit(free_blocks, last, first); pb < last;
	     pb = find_next_bit(free_blocks, last, pb + 1)) {
		unsigned long pfn = pb << pageblock_order;
		struct page *page = pfn_to_online_page(pfn);
		int mt, order;

		if (!(++seen & 255))
			cond_resched();
		if (!page || page_zone(page) != zone)
			continue;
		if (!__regionpm_bias_pfn(pfn)) {
			/* On to the region's last pageblock. */
			pb = (regionpm_start_pfn((pfn >> regionpm.shift) + 1) >>
			      pageblock_order) - 1;
			continue;
		}
		mt = get_pageblock_migratetype(page);
		if (mt != MIGRATE_UNMOVABLE && mt != MIGRATE_RECLAIMABLE)
			continue;
		spin_lock_irqsave(&zone->lock, flags);
		page = free_block_at(zone, pb, pageblock_order, &order);
		if (page && __regionpm_bias_pfn(page_to_pfn(page))) {
			mt = get_pageblock_migratetype(page);
			if (mt == MIGRATE_UNMOVABLE || mt == MIGRATE_RECLAIMABLE) {
				regionpm_free_block_movable(zone, page, order);
				n += 1UL << (order - pageblock_order);
			}
		}
		spin_unlock_irqrestore(&zone->lock, flags);
	}
	return n;
}

/*
 * The frontier of each zone: its pinned regions, then its lowest regions,
 * until they hold everything in use in the zone except page cache, plus
 * bias_headroom_pct of the zone's memory.  Per node and zone, because
 * "low" means low within a zone: with one global pfn every zone of a
 * second node, and ZONE_NORMAL above a 4 GiB hole, would lie wholly behind
 * it.  A region shared by two zones counts whole in both.
 */
static void frontier_workfn(struct work_struct *work)
{
	static unsigned int passes;
	int want = READ_ONCE(frontier_param);
	struct zone *zone;

	for_each_populated_zone(zone) {
		unsigned long managed = zone_managed_pages(zone), used, sum = 0;
		unsigned long id, first, last, pfn = ULONG_MAX;

		zone_regions(zone, &first, &last);
		if (want >= 0) {
			for (id = first; id <= last; id++)
				clear_bit(id, pinned);
			pfn = min_t(unsigned long, want, regionpm.nr) << regionpm.shift;
			WRITE_ONCE(regionpm.frontier_pfn[regionpm_zone_slot(zone)], pfn);
			continue;
		}
		/*
		 * Page cache fills whatever is free; counting it would push
		 * the frontier to the top.  Keep in front what cannot simply
		 * be dropped, plus headroom.
		 */
		used = managed - min(managed, zone_page_state(zone, NR_FREE_PAGES) +
				     zone_page_state(zone, NR_ZONE_ACTIVE_FILE) +
				     zone_page_state(zone, NR_ZONE_INACTIVE_FILE));
		used += managed / 100 * READ_ONCE(bias_headroom_pct);
		for (id = first; id <= last; id++) {
			if (!(id & 63))
				cond_resched();
			if (region_has_unmanaged(id))
				set_bit(id, pinned_unmanaged);
			else
				clear_bit(id, pinned_unmanaged);
			if (test_bit(id, pinned_unmanaged) ||
			    region_has_unmovable_blocks(zone, id)) {
				set_bit(id, pinned);
				sum += atomic_long_read(&regionpm.regions[id].managed);
			} else {
				clear_bit(id, pinned);
			}
		}
		if (sum >= used)
			pfn = zone->zone_start_pfn;
		for (id = first; id <= last && sum < used; id++) {
			if (test_bit(id, pinned))
				continue;
			sum += atomic_long_read(&regionpm.regions[id].managed);
			if (sum >= used)
				pfn = regionpm_start_pfn(id + 1);
		}
		WRITE_ONCE(regionpm.frontier_pfn[regionpm_zone_slot(zone)], pfn);
	}
	/*
	 * Retype when such a block was freed, when the bias is switched on
	 * (called directly), and every 16th pass for the blocks a moving
	 * frontier or pinned set left behind.
	 */
	if (READ_ONCE(bias) && (!work || READ_ONCE(retype_wanted) || !(++passes & 15))) {
		WRITE_ONCE(retype_wanted, false);
		for_each_populated_zone(zone)
			if (zone_tracked(zone))
				retyped += retype_free_blocks_behind(zone);
	}
	if (READ_ONCE(bias)) {
		if (READ_ONCE(bias_front_blocks))
			queue_work(system_unbound_wq, &front_work);
		queue_delayed_work(system_wq, &frontier_work, HZ);
	}
}

/*
 * The front keeper.  Pageblocks that could not be emptied (an unmovable
 * or pinned page, isolation refused) are not tried again for a minute.
 * Pages it migrated: regionpm.front_moved (read only), for the bench.
 */
static unsigned long *front_failed;
static unsigned long front_failed_since;
static unsigned long front_moved;
module_param(front_moved, ulong, 0444);
MODULE_PARM_DESC(front_moved, "Pages the front keeper migrated (statistics)");

static void front_irq_workfn(struct irq_work *work)
{
	queue_work(system_unbound_wq, &front_work);
}

/* Free pageblocks in pageblocks [@pb, @last), counted up to @limit. */
static unsigned int count_free_blocks(unsigned long pb, unsigned long last,
				      unsigned int limit)
{
	unsigned int n = 0;

	for (pb = find_next_bit(free_blocks, last, pb); pb < last && n < limit;
	     pb = find_next_bit(free_blocks, last, pb + 1))
		n++;
	return n;
}

struct front_pick {
	struct zone *zone;
	unsigned int n, max;
	unsigned long pfn[REGIONPM_CLEAR_MAX];
};

/*
 * Collect movable pageblocks of @p->zone in [@pb, @last) that are in use
 * and not known to resist, lowest first; with @skip_pinned, not those of
 * pinned regions (the caller went through them first).
 */
static void pick_blocks(struct front_pick *p, unsigned long pb, unsigned long last,
			bool skip_pinned)
{
	for (; pb < last && p->n < p->max; pb++) {
		unsigned long pfn = pb << pageblock_order;
		struct page *page;

		if (!(pb & 1023))
			cond_resched();
		if (test_bit(pb, free_blocks) || test_bit(pb, front_failed) ||
		    (skip_pinned && region_pinned(pfn)))
			continue;
		page = pfn_to_online_page(pfn);
		if (!page || page_zone(page) != p->zone ||
		    get_pageblock_migratetype(page) != MIGRATE_MOVABLE)
			continue;
		p->pfn[p->n++] = pfn;
	}
}

/* Empty the picked pageblocks, one call per region. */
static void clear_picked(struct front_pick *p)
{
	unsigned int i = 0, j, k;

	while (i < p->n) {
		unsigned long id = p->pfn[i] >> regionpm.shift, freed;
		int moved;

		for (j = i; j < p->n && p->pfn[j] >> regionpm.shift == id; j++)
			;
		moved = regionpm_clear_blocks(id, &p->pfn[i], j - i, &freed);
		if (moved == -EBUSY)
			return;
		front_moved += moved;
		for (k = i; k < j; k++)
			if (!(freed & BIT(k - i)))
				set_bit(p->pfn[k] >> pageblock_order, front_failed);
		i = j;
	}
}

/* Free pageblocks of @zone in its pinned regions (*@free: their free pages). */
static unsigned int pinned_free_blocks(struct zone *zone, unsigned int limit, long *free)
{
	unsigned long id, first, last, pb, pb_end;
	unsigned int n = 0;

	zone_regions(zone, &first, &last);
	for (id = find_next_bit(pinned, last + 1, first); id <= last;
	     id = find_next_bit(pinned, last + 1, id + 1)) {
		region_blocks(zone, id, &pb, &pb_end);
		n += count_free_blocks(pb, pb_end, limit);
		*free += regionpm_region_free(&regionpm.regions[id]);
	}
	return n;
}

/* The same for the regions below the frontier that are not pinned. */
static unsigned int bottom_free_blocks(struct zone *zone, unsigned int limit, long *free)
{
	unsigned long id, first, last, pb, pb_end, end = front_blocks_end(zone);
	unsigned int n = 0;

	zone_regions(zone, &first, &last);
	for (id = first; id <= last; id++) {
		region_blocks(zone, id, &pb, &pb_end);
		if (test_bit(id, pinned) || pb >= end)
			continue;
		n += count_free_blocks(pb, min(pb_end, end), limit);
		*free += regionpm_region_free(&regionpm.regions[id]);
	}
	return n;
}

/*
 * How many of @want pageblocks to empty: as many as the free pages of
 * @zone outside the front (@front_free) can take.  With no room, one
 * when nothing is free in front (@have): reclaim then makes room for its
 * pages, as it would have for the unmovable memory that needs the block
 * (a zone that is full evicts cache either way); more than one would
 * evict for nothing.
 */
static unsigned int room_for(struct zone *zone, long front_free, unsigned int want,
			     unsigned int have)
{
	long room = (long)zone_page_state(zone, NR_FREE_PAGES) - front_free -
		    (long)high_wmark_pages(zone);
	unsigned long n = room > 0 ? room / pageblock_nr_pages : 0;

	if (!n && !have)
		n = 1;
	return min_t(unsigned long, want, n);
}

/*
 * Per zone, while fewer than bias_front_blocks pageblocks are free where
 * the next unmovable claims go, and the memory behind has room for what
 * the pageblocks emptied hold (see room_for()): empty up to REGIONPM_CLEAR_MAX movable
 * pageblocks of the pinned regions, in the order claims take them; only when those have
 * none left (their pageblocks are all unmovable) the lowest below the
 * frontier, i.e. a new region for unmovable memory.  Free pageblocks below
 * the frontier count only then: otherwise the claims take the pinned
 * regions' first.  Runs after each frontier update and after each claim.
 */
static void front_workfn(struct work_struct *work)
{
	unsigned int mark = READ_ONCE(bias_front_blocks);
	struct zone *zone;

	if (!mark || !READ_ONCE(bias))
		return;
	if (time_after(jiffies, front_failed_since + 60 * HZ)) {
		bitmap_zero(front_failed, nr_blocks);
		front_failed_since = jiffies;
	}
	for_each_populated_zone(zone) {
		struct front_pick p = { .zone = zone };
		unsigned long id, first, last, pb, pb_end;
		unsigned int have;
		long front_free = 0;
		int pass = 0;

		if (!zone_tracked(zone) || zone_idx(zone) == ZONE_MOVABLE)
			continue;
		have = pinned_free_blocks(zone, mark, &front_free);
		if (have >= mark)
			continue;
		p.max = room_for(zone, front_free,
				 min_t(unsigned int, mark - have, REGIONPM_CLEAR_MAX), have);
		zone_regions(zone, &first, &last);
		for (id = next_pinned(first, first, last, &pass); id <= last && p.n < p.max;
		     id = next_pinned(id + 1, first, last, &pass)) {
			region_blocks(zone, id, &pb, &pb_end);
			pick_blocks(&p, pb, pb_end, false);
		}
		if (p.n < p.max) {
			/* The pinned regions are full of unmovable pageblocks. */
			have += p.n + bottom_free_blocks(zone, mark, &front_free);
			if (have < mark) {
				p.max = min(p.max, p.n + mark - have);
				pick_blocks(&p, zone->zone_start_pfn >> pageblock_order,
					    front_blocks_end(zone), true);
			}
		}
		clear_picked(&p);
	}
}

bool regionpm_region_has_memory(unsigned long id)
{
	struct regionpm_region *r = &regionpm.regions[id];

	return atomic_long_read(&r->managed) || r->parked;
}

/*
 * The pages of the free buddy block @page heads, 0 if none.  Unlocked: an
 * order above MAX_PAGE_ORDER (a block being merged or split) counts as no
 * block, and the caller steps one page.
 */
unsigned long regionpm_buddy_pages(struct page *page)
{
	unsigned int order;

	if (!PageBuddy(page))
		return 0;
	order = buddy_order_unsafe(page);
	return order <= MAX_PAGE_ORDER ? 1UL << order : 0;
}

unsigned long regionpm_range_free(unsigned long start_pfn, unsigned long nr)
{
	unsigned long pfn, free = 0, n;

	for (pfn = start_pfn; pfn < start_pfn + nr; pfn++) {
		struct page *page = pfn_to_online_page(pfn);

		n = page ? regionpm_buddy_pages(page) : 0;
		if (n) {
			free += n;
			pfn += n - 1;
		}
		if (!(pfn & 1023))
			cond_resched();
	}
	return min(free, nr);
}

/*
 * The pages at the start of the memory block of @pfn that hold the
 * block's own memmap (memory_hotplug.memmap_on_memory; ACPI DIMMs and
 * dax/kmem add memory so): in use by the kernel for as long as the block
 * is present, not managed, and never free.  A region holding them can
 * never be emptied: powering it down would take the struct pages of its
 * other pages with it.  Under get_online_mems() (the altmap goes with the
 * block).
 */
unsigned long regionpm_block_memmap_pages(unsigned long pfn)
{
	unsigned long n = 0;
#ifdef CONFIG_MHP_MEMMAP_ON_MEMORY
	struct memory_block *mem = find_memory_block(pfn_to_section_nr(pfn));

	if (mem) {
		if (mem->altmap)
			n = mem->altmap->free;
		put_device(&mem->dev);
	}
#endif
	return n;
}

/*
 * The O(pages) breakdown of one region; racy by nature, like /proc/kpageflags.
 * Under get_online_mems().
 */
void regionpm_region_detail(unsigned long id, struct regionpm_detail *d)
{
	unsigned long block_pages = PHYS_PFN(memory_block_size_bytes());
	unsigned long pfn, start = regionpm_start_pfn(id);
	unsigned long block_end = 0, memmap_end = 0;

	memset(d, 0, sizeof(*d));
	for (pfn = start; pfn < start + regionpm_pages(); pfn++) {
		struct page *page = pfn_to_online_page(pfn);

		if (!(pfn & 1023))
			cond_resched();
		if (!page)
			continue;
		if (pfn >= block_end) {
			unsigned long block = ALIGN_DOWN(pfn, block_pages);

			block_end = block + block_pages;
			memmap_end = block + regionpm_block_memmap_pages(block);
		}
		/* The block's own memmap: reserved for as long as the block is. */
		if (pfn < memmap_end) {
			d->reserved++;
			continue;
		}
		if (PageBuddy(page)) {
			unsigned long n = regionpm_buddy_pages(page);

			d->free += n;
			pfn += n ? n - 1 : 0;
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
 * Give the regions of [@start_pfn, @start_pfn + @nr_pages) a counter slot
 * for @zone, if one is left.  Under track_mutex and @zone->lock: only this
 * zone's hooks compare a slot with @zone, and they hold its lock; the
 * hooks of other zones read either NULL or @zone, neither of which is
 * theirs.  The slot starts at zero; pages counted in free_other before
 * come off the slot when they leave, so the sum stays right.
 */
static void give_slots(struct zone *zone, unsigned long start_pfn, unsigned long nr_pages)
{
	unsigned long id, last;
	int i;

	if (!nr_pages)
		return;
	last = min((start_pfn + nr_pages - 1) >> regionpm.shift, regionpm.nr - 1);
	for (id = start_pfn >> regionpm.shift; id <= last; id++) {
		struct regionpm_region *r = &regionpm.regions[id];

		for (i = 0; i < REGIONPM_ZONE_SLOTS; i++) {
			if (r->zone[i] == zone)
				break;
			if (!r->zone[i]) {
				WRITE_ONCE(r->zone[i], zone);
				break;
			}
		}
	}
}

/*
 * Count the free blocks of one zone into the regions and start tracking it.
 * When counting starts, for every populated zone; on MEM_ONLINE for a zone
 * that was empty until then (the hooks ignored it, so nothing is counted
 * twice).  Under track_mutex.
 */
static void track_zone_locked(struct zone *zone)
{
	unsigned long flags;
	unsigned int order;
	int mt;

	lockdep_assert_held(&track_mutex);
	spin_lock_irqsave(&zone->lock, flags);
	if (zone_tracked(zone))
		goto unlock;
	give_slots(zone, zone->zone_start_pfn, zone->spanned_pages);
	for (order = 0; order < NR_PAGE_ORDERS; order++) {
		for (mt = 0; mt < MIGRATE_TYPES; mt++) {
			struct page *page;

			list_for_each_entry(page, &zone->free_area[order].free_list[mt],
					    buddy_list) {
				unsigned long pfn = page_to_pfn(page);
				struct regionpm_region *r = regionpm_region(pfn);

				if (!r)
					continue;
				if (!count_free(r, zone, 1L << order))
					atomic_long_add(1L << order, &r->free_other);
				if (order >= pageblock_order && mt < MIGRATE_PCPTYPES)
					note_free_blocks(pfn, order, true);
			}
		}
	}
	set_bit(zone_to_nid(zone) * MAX_NR_ZONES + zone_idx(zone), tracked_zones);
unlock:
	spin_unlock_irqrestore(&zone->lock, flags);
}

/* MEM_ONLINE: count a zone that just got its first memory. */
void regionpm_track_zone(struct zone *zone)
{
	mutex_lock(&track_mutex);
	if (static_key_enabled(&regionpm_track_key))
		track_zone_locked(zone);
	mutex_unlock(&track_mutex);
}

/*
 * MEM_GOING_ONLINE: the zone grew to cover the block, whose pages are not
 * free yet; give its regions a slot for the zone so that they count
 * without atomics.  (Without one they would count in free_other.)
 */
void regionpm_track_range(unsigned long start_pfn, unsigned long nr_pages)
{
	struct zone *zone = page_zone(pfn_to_page(start_pfn));
	unsigned long flags;

	mutex_lock(&track_mutex);
	spin_lock_irqsave(&zone->lock, flags);
	/*
	 * Only in a counted zone: in one that is not, a slot would count
	 * before the zone's free lists are, and those would count twice.
	 */
	if (zone_tracked(zone))
		give_slots(zone, start_pfn, nr_pages);
	spin_unlock_irqrestore(&zone->lock, flags);
	mutex_unlock(&track_mutex);
}

/*
 * Start counting free pages per region: enable the hooks, then count each
 * zone's free lists under its lock (the hooks skip a zone until then).
 * Counting cannot stop again: parked regions and events depend on it.
 * Walking a zone's free lists with its lock held takes a while on a big,
 * fragmented zone, once.
 */
int regionpm_track_start(const char *who)
{
	struct zone *zone;
	unsigned long id;

	if (static_key_enabled(&regionpm_track_key))
		return 0;
	/* Pairs with the release in regionpm_init(): the table is ready. */
	if (!smp_load_acquire(&initialised))
		return -ENODEV;
	mutex_lock(&track_mutex);
	if (!static_key_enabled(&regionpm_track_key)) {
		static_branch_enable(&regionpm_track_key);
		for_each_populated_zone(zone)
			track_zone_locked(zone);
		for (id = 0; id < regionpm.nr; id++)
			if (atomic_long_read(&regionpm.regions[id].managed) &&
			    region_all_free(&regionpm.regions[id]))
				set_bit(id, region_empty);
		WRITE_ONCE(track, true);
		pr_info("counting free pages per region (%s)\n", who);
	}
	mutex_unlock(&track_mutex);
	return 0;
}

/*
 * Pages the buddy allocator got in [@pfn, @pfn + @nr): not reserved; the
 * online pages go to *@online.
 */
static unsigned long __init count_managed(unsigned long pfn, unsigned long nr,
					  unsigned long *online)
{
	unsigned long n = 0, end = pfn + nr;

	for (; pfn < end; pfn++) {
		struct page *page = pfn_to_online_page(pfn);

		if (!page)
			continue;
		(*online)++;
		/* Offline pages (balloons, virtio-mem) are not managed. */
		if (!PageReserved(page) && !PageOffline(page))
			n++;
	}
	return n;
}

/* Memory hotplug: @nr_pages from @start_pfn went online (> 0) or offline. */
void regionpm_present_changed(unsigned long start_pfn, long nr_pages)
{
	unsigned long pfn = start_pfn, left = abs(nr_pages);

	/* Pairs with the release in regionpm_init(): the table is ready. */
	if (!smp_load_acquire(&initialised))
		return;
	while (left) {
		struct regionpm_region *r = regionpm_region(pfn);
		unsigned long n = min(left, ALIGN(pfn + 1, regionpm_pages()) - pfn);

		if (!r)
			break;
		if (nr_pages > 0)
			WRITE_ONCE(r->present, r->present + n);
		else
			WRITE_ONCE(r->present, r->present - min(n, r->present));
		left -= n;
		pfn += n;
	}
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
	nr_blocks = (regionpm.nr << regionpm.shift) >> pageblock_order;
	free_blocks = bitmap_zalloc(nr_blocks, GFP_KERNEL);
	front_failed = bitmap_zalloc(nr_blocks, GFP_KERNEL);
	pinned = bitmap_zalloc(regionpm.nr, GFP_KERNEL);
	pinned_unmanaged = bitmap_zalloc(regionpm.nr, GFP_KERNEL);
	regionpm.frontier_pfn = kcalloc(nr_node_ids * MAX_NR_ZONES, sizeof(*regionpm.frontier_pfn),
					GFP_KERNEL);
	if (!regionpm.regions || !alloc_pending || !region_empty || !free_blocks ||
	    !front_failed || !pinned || !pinned_unmanaged || !regionpm.frontier_pfn) {
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
			unsigned long n;

			if (!r)
				continue;
			n = count_managed(pfn, step, &r->present);
			atomic_long_add(n, &r->managed);
			sum += n;
		}
		cond_resched();
	}
	if (sum != totalram_pages())
		pr_warn("regions hold %lu managed pages, the allocator %lu\n",
			sum, totalram_pages());
	/* Pairs with the acquire in the hooks: the table is ready. */
	smp_store_release(&initialised, true);

	if (track || bias) {
		ret = regionpm_track_start("boot");
		if (ret)
			goto err_free;
	}

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
	pr_info("%lu regions of %lu MiB, counting %s, bias %s\n", regionpm.nr,
		region_size >> 20, track ? "on" : "off", bias ? "on" : "off");
	return 0;

err_evacuate:
	regionpm_evacuate_exit();
err_track:
	/* Hooks run with interrupts off: after a grace period none is left. */
	static_branch_disable(&regionpm_track_key);
	bitmap_zero(tracked_zones, MAX_NUMNODES * MAX_NR_ZONES);
	synchronize_rcu();
	/* ... but the events they raised may still be queued. */
	irq_work_sync(&event_irq_work);
	cancel_delayed_work_sync(&event_work);
err_free:
	/* Pairs with the acquires: nobody uses the table after this. */
	smp_store_release(&initialised, false);
	bitmap_free(region_empty);
	bitmap_free(alloc_pending);
	bitmap_free(free_blocks);
	bitmap_free(front_failed);
	bitmap_free(pinned);
	bitmap_free(pinned_unmanaged);
	kfree(regionpm.frontier_pfn);
	kvfree(regionpm.regions);
	regionpm.regions = NULL;
	regionpm.nr = 0;
	pr_err("disabled: %d\n", ret);
	return ret;
}

/*
 * As early as its users allow (genetlink registers at core_initcall): the
 * pages the bias cannot steer, those allocated before it is on, are the
 * unmovable ones that end up in the lowest region of each zone.  Started
 * at late_initcall, the drivers' slab pinned ZONE_NORMAL's lowest region
 * for good.
 */
postcore_initcall(regionpm_init);
