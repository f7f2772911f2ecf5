/* SPDX-License-Identifier: GPL-2.0 */
/* regionpm: state shared by the core, evacuation and netlink parts. */
#ifndef _MM_REGIONPM_INTERNAL_H
#define _MM_REGIONPM_INTERNAL_H

#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/regionpm.h>
#include <uapi/linux/regionpm.h>

/*
 * Free pages per region are counted per zone, under that zone's lock (the
 * buddy hooks run under it), so a merge or a split costs a plain add
 * rather than a locked atomic.  Two zone slots cover every region but one
 * that straddles three zones; pages of a zone without a slot are counted
 * in free_other, atomically.
 */
#define REGIONPM_ZONE_SLOTS	2

struct regionpm_region {
	/* Kept by the buddy hooks; all of them share a cache line. */
	struct zone *zone[REGIONPM_ZONE_SLOTS];	/* set under track_mutex */
	long zone_free[REGIONPM_ZONE_SLOTS];	/* under zone[i]->lock */
	atomic_long_t free_other;	/* free pages of zones without a slot */
	atomic_long_t managed;		/* pages the buddy allocator manages */
	unsigned long present;		/* online pages (init, hotplug notifier) */
	/* Below: written under regionpm.park_lock. */
	u8 state;			/* enum regionpm_region_state */
	unsigned long parked;		/* pages held while parked */
	unsigned long held;		/* pages in pageblocks a hold isolated */
	struct regionpm_hold *hold;	/* while held (or busy in a hold) */
	struct regionpm_sock *owner;	/* socket that parked or holds it */
	u32 owner_portid;
	struct list_head owner_node;	/* on owner->parked */
	/* On the list of parked regions, or of held regions. */
	struct list_head parked_node;
};

struct regionpm_state {
	unsigned int shift;		/* log2 of pages per region */
	unsigned long nr;		/* number of regions */
	struct regionpm_region *regions;
	/* First pfn the bias keeps empty, per zone (regionpm_zone_slot()). */
	unsigned long *frontier_pfn;
	/*
	 * lock serialises the long operations (compact, park: migration can
	 * take seconds).  park_lock guards region state, parked pages and
	 * owners; nothing allocates memory while holding it, so the shrinker
	 * and the OOM notifier can always take it and give memory back even
	 * while a compaction runs.  Order: lock, then park_lock.
	 */
	struct mutex lock;		/* compact and park */
	struct mutex park_lock;		/* states, parked pages, owners */
	unsigned long parked_pages;	/* under park_lock */
	unsigned long held_pages;	/* under park_lock */
};

extern struct regionpm_state regionpm;

static inline unsigned long regionpm_pages(void)
{
	return 1UL << regionpm.shift;
}

static inline unsigned long regionpm_start_pfn(unsigned long id)
{
	return id << regionpm.shift;
}

/*
 * The helpers the free-list hooks use are always inlined: a kernel built
 * for size (-Os) made each of them a call, three or four per hook, on the
 * allocator's hot path.
 */
static __always_inline struct regionpm_region *regionpm_region(unsigned long pfn)
{
	unsigned long id = pfn >> regionpm.shift;

	return id < regionpm.nr ? &regionpm.regions[id] : NULL;
}

static __always_inline unsigned long regionpm_id(struct regionpm_region *r)
{
	return r - regionpm.regions;
}

/* Index of @zone in per-zone arrays of nr_node_ids * MAX_NR_ZONES entries. */
static inline unsigned int regionpm_zone_slot(struct zone *zone)
{
	return zone_to_nid(zone) * MAX_NR_ZONES + zone_idx(zone);
}

/* Pages on the buddy free lists; racy sum of counters kept under zone locks. */
static __always_inline long regionpm_region_free(struct regionpm_region *r)
{
	long free = atomic_long_read(&r->free_other);
	int i;

	for (i = 0; i < REGIONPM_ZONE_SLOTS; i++)
		free += READ_ONCE(r->zone_free[i]);
	return free;
}

/* What an LRU page holds, from one unlocked read of its folio's flags. */
enum regionpm_lru_kind {
	REGIONPM_LRU_UNEVICTABLE,
	REGIONPM_LRU_ANON,
	REGIONPM_LRU_SHMEM,
	REGIONPM_LRU_WRITEBACK,
	REGIONPM_LRU_DIRTY,
	REGIONPM_LRU_CLEAN,
};

enum regionpm_lru_kind regionpm_peek_lru(struct page *page);

struct regionpm_detail {
	unsigned long free, anon, file_clean, file_dirty, writeback, shmem;
	unsigned long unevictable, slab, page_table, reserved, kernel_other;
	unsigned long offline, huge;
};

struct regionpm_compact_req {
	unsigned long id, start_pfn, nr_pages, budget;
	enum regionpm_compact_mode mode;
};

struct regionpm_compact_res {
	unsigned long scanned, migrated, dropped, skipped, failed;
	enum regionpm_obstacle obstacle;
	unsigned long obstacle_pfn, free_pages;
	u64 elapsed_ns;
	bool kept_mlocked;	/* left mlocked pages (compact_unevictable_allowed=0) */
};

/* regionpm.c */
void regionpm_track_zone(struct zone *zone);
void regionpm_track_range(unsigned long start_pfn, unsigned long nr_pages);
int regionpm_track_start(const char *who);
bool regionpm_region_has_memory(unsigned long id);
void regionpm_present_changed(unsigned long start_pfn, long nr_pages);
unsigned long regionpm_block_memmap_pages(unsigned long pfn);
void regionpm_region_detail(unsigned long id, struct regionpm_detail *d);
unsigned long regionpm_buddy_pages(struct page *page);
unsigned long regionpm_range_free(unsigned long start_pfn, unsigned long nr);

/* regionpm_evacuate.c */
int regionpm_compact(const struct regionpm_compact_req *req,
		     struct regionpm_sock *owner,
		     struct regionpm_compact_res *res,
		     struct netlink_ext_ack *extack);
int regionpm_park(const struct regionpm_compact_req *req, bool compact_first,
		  struct regionpm_sock *owner, u32 portid,
		  struct regionpm_compact_res *res,
		  struct netlink_ext_ack *extack);
int regionpm_hold(unsigned long id, struct regionpm_sock *owner, u32 portid,
		  struct netlink_ext_ack *extack);
int regionpm_unpark(unsigned long id, struct regionpm_sock *owner,
		    struct netlink_ext_ack *extack);
void regionpm_release_owner(struct regionpm_sock *owner);
#define REGIONPM_CLEAR_MAX	8
int regionpm_clear_blocks(unsigned long id, const unsigned long *pfns,
			  unsigned int n, unsigned long *freed);
int regionpm_evacuate_init(void);
void regionpm_evacuate_exit(void);

/* regionpm_nl.c */
void regionpm_nl_notify_alloc(unsigned long id);
void regionpm_nl_notify_release(unsigned long id,
				enum regionpm_release_reason reason,
				unsigned long pages);
void regionpm_nl_notify_compact(unsigned long id,
				const struct regionpm_compact_res *res);
int regionpm_nl_init(void);

#endif /* _MM_REGIONPM_INTERNAL_H */
