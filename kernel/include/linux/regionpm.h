/* SPDX-License-Identifier: GPL-2.0 */
/*
 * regionpm: physical memory regions for DRAM power management.
 *
 * The buddy allocator calls the hooks below when pages enter or leave its
 * free lists.  Both are static-key gated: with regionpm disabled they cost a
 * patched-out jump on the allocator paths.
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
bool __regionpm_bias_pfn(unsigned long pfn);
void regionpm_managed_changed(struct page *page, long count);

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

/* Should __rmqueue_claim() look below the frontier first? */
static __always_inline bool regionpm_bias_claim(int start_migratetype)
{
	return static_branch_unlikely(&regionpm_bias_key) &&
	       start_migratetype != MIGRATE_MOVABLE;
}
#else
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

static inline void regionpm_managed_changed(struct page *page, long count)
{
}
#endif

#endif /* _LINUX_REGIONPM_H */
