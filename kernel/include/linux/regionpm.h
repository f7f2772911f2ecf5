/* SPDX-License-Identifier: GPL-2.0 */
/*
 * regionpm: physical memory regions for DRAM power management.
 *
 * The buddy allocator calls the hooks below when pages enter, leave or
 * move between its free lists.  All are static-key gated: until regionpm
 * starts counting (its first netlink request, regionpm.track=1 or the
 * bias) they cost a patched-out jump on the allocator paths, and the bias
 * hooks until the bias is turned on.
 */
#ifndef _LINUX_REGIONPM_H
#define _LINUX_REGIONPM_H

#include <linux/jump_label.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mmzone.h>

struct zone;

/* Per-socket state of the netlink family: the regions a socket parked or holds. */
struct regionpm_sock {
	struct list_head parked;
};

#ifdef CONFIG_REGIONPM
DECLARE_STATIC_KEY_FALSE(regionpm_track_key);
DECLARE_STATIC_KEY_FALSE(regionpm_bias_key);

bool __regionpm_buddy_add(struct page *page, struct zone *zone,
			  unsigned int order, int migratetype, bool tail);
void __regionpm_buddy_del(struct page *page, struct zone *zone,
			  unsigned int order);
void __regionpm_buddy_move(struct page *page, struct zone *zone,
			   unsigned int order, int migratetype);
bool __regionpm_bias_pfn(unsigned long pfn);
struct page *__regionpm_lowest_free_block(struct zone *zone,
					  unsigned int min_order, int *order,
					  bool pinned_only);
struct page *__regionpm_low_block(struct list_head *list);
struct page *__regionpm_movable_block(struct list_head *list, struct page *page);
void regionpm_free_block_movable(struct zone *zone, struct page *page,
				 unsigned int order);
void regionpm_managed_changed(struct page *page, long count);
bool regionpm_boot_free_to_head(enum meminit_context context);
bool regionpm_boot_no_defer(void);
bool regionpm_boot_bottom_up(void);
phys_addr_t regionpm_memblock_floor(phys_addr_t start, phys_addr_t end);

/*
 * A block of 2^order pages goes onto a free list.  Returns whether it should
 * go to the tail: @tail as asked by the caller, or because the allocation
 * bias wants pages above the frontier to be used last.
 */
static __always_inline bool regionpm_buddy_add(struct page *page,
					       struct zone *zone,
					       unsigned int order,
					       int migratetype, bool tail)
{
	if (static_branch_unlikely(&regionpm_track_key))
		return __regionpm_buddy_add(page, zone, order, migratetype, tail);
	return tail;
}

/* A block of 2^order pages leaves the free lists (allocated or merged). */
static __always_inline void regionpm_buddy_del(struct page *page,
					       struct zone *zone,
					       unsigned int order)
{
	if (static_branch_unlikely(&regionpm_track_key))
		__regionpm_buddy_del(page, zone, order);
}

/* A free block of 2^order pages moves to the @migratetype free list. */
static __always_inline void regionpm_buddy_move(struct page *page,
						struct zone *zone,
						unsigned int order,
						int migratetype)
{
	if (static_branch_unlikely(&regionpm_track_key))
		__regionpm_buddy_move(page, zone, order, migratetype);
}

void __regionpm_release_range(unsigned long start_pfn, unsigned long end_pfn);

/*
 * alloc_contig_range() is about to take [@start_pfn, @end_pfn): regions
 * parked or held there are given back first (virtio-mem unplug, gigantic
 * huge pages, CMA), unless the rest of the range holds a page isolation
 * refuses for certain.  Nothing can be parked before regionpm counts.
 */
static inline void regionpm_release_range(unsigned long start_pfn,
					  unsigned long end_pfn)
{
	if (static_branch_unlikely(&regionpm_track_key))
		__regionpm_release_range(start_pfn, end_pfn);
}

void __regionpm_release_holds(unsigned long start_pfn, unsigned long end_pfn);

/*
 * offline_pages() is about to isolate [@start_pfn, @end_pfn): the holds
 * there end first, or the isolation would fail on their pageblocks.
 */
static inline void regionpm_release_holds(unsigned long start_pfn,
					  unsigned long end_pfn)
{
	if (static_branch_unlikely(&regionpm_track_key))
		__regionpm_release_holds(start_pfn, end_pfn);
}

/* Is the allocation bias on? */
static __always_inline bool regionpm_bias_on(void)
{
	return static_branch_unlikely(&regionpm_bias_key);
}

/*
 * Should a freed page skip the per-cpu lists?  Pages above the frontier go
 * straight to the buddy tail while the bias is on; on a pcp list they would
 * be handed out again first.
 */
static __always_inline bool regionpm_bias_pfn(unsigned long pfn)
{
	if (static_branch_unlikely(&regionpm_bias_key))
		return __regionpm_bias_pfn(pfn);
	return false;
}

/*
 * A page of @migratetype is freed: should it bypass the per-cpu lists?
 * Only non-movable pages are biased (movable ones stay where the allocator
 * puts them), and the static key is tested first so a disabled bias costs
 * one patched-out jump.
 */
static __always_inline bool regionpm_bias_free(unsigned long pfn,
					       int migratetype)
{
	if (static_branch_unlikely(&regionpm_bias_key))
		return migratetype != MIGRATE_MOVABLE &&
		       __regionpm_bias_pfn(pfn);
	return false;
}

/* Should __rmqueue_claim() and __rmqueue_steal() look below the frontier first? */
static __always_inline bool regionpm_bias_claim(int start_migratetype)
{
	return static_branch_unlikely(&regionpm_bias_key) &&
	       start_migratetype != MIGRATE_MOVABLE;
}

/*
 * With the bias on, the first free pageblock of @zone in a region pinned by
 * unmovable memory already, else (unless @pinned_only) the lowest below its
 * zone's frontier, as the head of a free block of *@order pages, at least
 * @min_order (the order asked for); or NULL.
 */
static __always_inline struct page *
regionpm_lowest_free_block(struct zone *zone, unsigned int min_order,
			   int *order, bool pinned_only)
{
	return __regionpm_lowest_free_block(zone, min_order, order,
					    pinned_only);
}

/* With the bias on, a block of @list below its node's frontier, or NULL. */
static __always_inline struct page *regionpm_low_block(struct list_head *list)
{
	return __regionpm_low_block(list);
}

/*
 * __rmqueue_smallest() is about to split @page, the head of the free list
 * of order @order and @migratetype: with the bias on, movable memory that
 * splits a free pageblock or more gets one behind the frontier when there
 * is one, so the free pageblocks in front stay for unmovable claims.
 */
static __always_inline struct page *
regionpm_movable_block(struct free_area *area, unsigned int order,
		       int migratetype, struct page *page)
{
	if (static_branch_unlikely(&regionpm_bias_key) &&
	    migratetype == MIGRATE_MOVABLE && order >= pageblock_order)
		return __regionpm_movable_block(&area->free_list[migratetype], page);
	return page;
}
#else
static inline struct page *
regionpm_movable_block(struct free_area *area, unsigned int order,
		       int migratetype, struct page *page)
{
	return page;
}

static inline void regionpm_buddy_move(struct page *page, struct zone *zone,
				       unsigned int order, int migratetype)
{
}

static inline struct page *
regionpm_lowest_free_block(struct zone *zone, unsigned int min_order,
			   int *order, bool pinned_only)
{
	return NULL;
}

static inline struct page *regionpm_low_block(struct list_head *list)
{
	return NULL;
}

static inline bool regionpm_bias_free(unsigned long pfn, int migratetype)
{
	return false;
}

static inline bool regionpm_bias_claim(int start_migratetype)
{
	return false;
}

static inline bool regionpm_buddy_add(struct page *page, struct zone *zone,
				      unsigned int order, int migratetype,
				      bool tail)
{
	return tail;
}

static inline void regionpm_buddy_del(struct page *page, struct zone *zone,
				      unsigned int order)
{
}

static inline bool regionpm_bias_pfn(unsigned long pfn)
{
	return false;
}

static inline bool regionpm_bias_on(void)
{
	return false;
}

static inline void regionpm_release_range(unsigned long start_pfn,
					  unsigned long end_pfn)
{
}

static inline void regionpm_release_holds(unsigned long start_pfn,
					  unsigned long end_pfn)
{
}

static inline void regionpm_managed_changed(struct page *page, long count)
{
}

static inline bool regionpm_boot_free_to_head(enum meminit_context context)
{
	return false;
}

static inline bool regionpm_boot_no_defer(void)
{
	return false;
}

static inline bool regionpm_boot_bottom_up(void)
{
	return false;
}

static inline phys_addr_t regionpm_memblock_floor(phys_addr_t start, phys_addr_t end)
{
	return start;
}
#endif

#endif /* _LINUX_REGIONPM_H */
