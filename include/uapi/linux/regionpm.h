/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/regionpm.yaml */
/* YNL-GEN uapi header */

#ifndef _UAPI_LINUX_REGIONPM_H
#define _UAPI_LINUX_REGIONPM_H

#define REGIONPM_FAMILY_NAME	"regionpm"
#define REGIONPM_FAMILY_VERSION	1

/**
 * enum regionpm_region_state - State of a region.
 * @REGIONPM_REGION_STATE_ACTIVE: Normal memory, the buddy allocator may use
 *   it.
 * @REGIONPM_REGION_STATE_PARKED: All pages held by regionpm; nothing can be
 *   allocated from it.
 * @REGIONPM_REGION_STATE_BUSY: A compaction or park operation is running on
 *   it.
 * @REGIONPM_REGION_STATE_HELD: Held by region-hold: every pageblock of the
 *   region that could be isolated is, so its free pages are on isolated free
 *   lists and nothing (no allocation, no migration target) is taken from them.
 *   Pages still in use stay where they are.
 */
enum regionpm_region_state {
	REGIONPM_REGION_STATE_ACTIVE,
	REGIONPM_REGION_STATE_PARKED,
	REGIONPM_REGION_STATE_BUSY,
	REGIONPM_REGION_STATE_HELD,
};

/**
 * enum regionpm_compact_mode - How region-compact evacuates a range.
 * @REGIONPM_COMPACT_MODE_MIGRATE: Migrate every movable page out of the range.
 * @REGIONPM_COMPACT_MODE_DROP: Drop cold clean page cache (not mapped, not on
 *   the active list); do not migrate anything. Dirty and writeback pages, and
 *   mapped or active (hot) page cache, are never dropped.
 * @REGIONPM_COMPACT_MODE_BOTH: Drop cold clean page cache, migrate everything
 *   else that moves, hot page cache included.
 */
enum regionpm_compact_mode {
	REGIONPM_COMPACT_MODE_MIGRATE,
	REGIONPM_COMPACT_MODE_DROP,
	REGIONPM_COMPACT_MODE_BOTH,
};

/**
 * enum regionpm_release_reason - Why a parked or held region was given back to
 *   the allocator.
 * @REGIONPM_RELEASE_REASON_UNPARK: An explicit region-unpark request.
 * @REGIONPM_RELEASE_REASON_OWNER_CLOSED: The netlink socket that parked it was
 *   closed (or its owner died).
 * @REGIONPM_RELEASE_REASON_SHRINKER: Memory pressure, through the regionpm
 *   shrinker.
 * @REGIONPM_RELEASE_REASON_OOM: The OOM notifier, before the OOM killer would
 *   have run.
 * @REGIONPM_RELEASE_REASON_HOTPLUG: The memory is being offlined.
 * @REGIONPM_RELEASE_REASON_TIMEOUT: A hold was not renewed within
 *   regionpm.hold_timeout_ms (holds only; parked regions do not expire).
 * @REGIONPM_RELEASE_REASON_RANGE_CLAIMED: A kernel user claimed physical
 *   memory in the region with alloc_contig_range(): virtio-mem unplugging
 *   memory, a gigantic huge page, a CMA allocation.
 */
enum regionpm_release_reason {
	REGIONPM_RELEASE_REASON_UNPARK,
	REGIONPM_RELEASE_REASON_OWNER_CLOSED,
	REGIONPM_RELEASE_REASON_SHRINKER,
	REGIONPM_RELEASE_REASON_OOM,
	REGIONPM_RELEASE_REASON_HOTPLUG,
	REGIONPM_RELEASE_REASON_TIMEOUT,
	REGIONPM_RELEASE_REASON_RANGE_CLAIMED,
};

/**
 * enum regionpm_obstacle - Kind of page that kept a range from being
 *   evacuated.
 * @REGIONPM_OBSTACLE_HUGETLB: A hugetlb page that could not be isolated, or a
 *   free one for which no replacement could be allocated outside the range.
 * @REGIONPM_OBSTACLE_ISOLATION: A pageblock could not be isolated although
 *   nothing in it is in use: CMA, or isolated by someone else (an offline,
 *   another contiguous allocation).
 * @REGIONPM_OBSTACLE_MODE: The mode does not move this page: anonymous, shmem,
 *   dirty or hot (mapped or active) page cache in drop mode.
 * @REGIONPM_OBSTACLE_NO_ROOM: Migrating the next batch of pages would take
 *   free memory below the kernel's marks (each zone's high watermark and
 *   lowmem reserve): kswapd would evict page cache to make room for it. The
 *   request stopped there; nothing in the range is in the way.
 */
enum regionpm_obstacle {
	REGIONPM_OBSTACLE_NONE,
	REGIONPM_OBSTACLE_RESERVED,
	REGIONPM_OBSTACLE_SLAB,
	REGIONPM_OBSTACLE_PAGE_TABLE,
	REGIONPM_OBSTACLE_KERNEL,
	REGIONPM_OBSTACLE_PINNED,
	REGIONPM_OBSTACLE_DIRTY,
	REGIONPM_OBSTACLE_WRITEBACK,
	REGIONPM_OBSTACLE_UNEVICTABLE,
	REGIONPM_OBSTACLE_HUGETLB,
	REGIONPM_OBSTACLE_ISOLATION,
	REGIONPM_OBSTACLE_MODE,
	REGIONPM_OBSTACLE_NO_ROOM,
};

enum {
	REGIONPM_A_INFO_REGION_SIZE = 1,
	REGIONPM_A_INFO_REGION_COUNT,
	REGIONPM_A_INFO_BIAS,
	REGIONPM_A_INFO_FRONTIER,
	REGIONPM_A_INFO_PARKED_PAGES,
	REGIONPM_A_INFO_HELD_PAGES,

	__REGIONPM_A_INFO_MAX,
	REGIONPM_A_INFO_MAX = (__REGIONPM_A_INFO_MAX - 1)
};

enum {
	REGIONPM_A_DETAIL_FREE = 1,
	REGIONPM_A_DETAIL_ANON,
	REGIONPM_A_DETAIL_FILE_CLEAN,
	REGIONPM_A_DETAIL_FILE_DIRTY,
	REGIONPM_A_DETAIL_WRITEBACK,
	REGIONPM_A_DETAIL_SHMEM,
	REGIONPM_A_DETAIL_UNEVICTABLE,
	REGIONPM_A_DETAIL_SLAB,
	REGIONPM_A_DETAIL_PAGE_TABLE,
	REGIONPM_A_DETAIL_RESERVED,
	REGIONPM_A_DETAIL_KERNEL_OTHER,
	REGIONPM_A_DETAIL_OFFLINE,
	REGIONPM_A_DETAIL_HUGE,
	REGIONPM_A_DETAIL_PAD,

	__REGIONPM_A_DETAIL_MAX,
	REGIONPM_A_DETAIL_MAX = (__REGIONPM_A_DETAIL_MAX - 1)
};

enum {
	REGIONPM_A_REGION_ID = 1,
	REGIONPM_A_REGION_START_PFN,
	REGIONPM_A_REGION_SPANNED_PAGES,
	REGIONPM_A_REGION_MANAGED_PAGES,
	REGIONPM_A_REGION_FREE_PAGES,
	REGIONPM_A_REGION_NODE,
	REGIONPM_A_REGION_ZONE,
	REGIONPM_A_REGION_STATE,
	REGIONPM_A_REGION_OWNER_PORTID,
	REGIONPM_A_REGION_PARKED_PAGES,
	REGIONPM_A_REGION_SCAN,
	REGIONPM_A_REGION_DETAIL,
	REGIONPM_A_REGION_PAD,
	REGIONPM_A_REGION_HELD_PAGES,

	__REGIONPM_A_REGION_MAX,
	REGIONPM_A_REGION_MAX = (__REGIONPM_A_REGION_MAX - 1)
};

enum {
	REGIONPM_A_COMPACT_ID = 1,
	REGIONPM_A_COMPACT_START_PFN,
	REGIONPM_A_COMPACT_NR_PAGES,
	REGIONPM_A_COMPACT_MODE,
	REGIONPM_A_COMPACT_BUDGET,
	REGIONPM_A_COMPACT_SCANNED,
	REGIONPM_A_COMPACT_MIGRATED,
	REGIONPM_A_COMPACT_DROPPED,
	REGIONPM_A_COMPACT_SKIPPED,
	REGIONPM_A_COMPACT_FAILED,
	REGIONPM_A_COMPACT_OBSTACLE,
	REGIONPM_A_COMPACT_OBSTACLE_PFN,
	REGIONPM_A_COMPACT_FREE_PAGES,
	REGIONPM_A_COMPACT_ELAPSED_NS,
	REGIONPM_A_COMPACT_PARK,
	REGIONPM_A_COMPACT_PAD,

	__REGIONPM_A_COMPACT_MAX,
	REGIONPM_A_COMPACT_MAX = (__REGIONPM_A_COMPACT_MAX - 1)
};

enum {
	REGIONPM_A_EVENT_ID = 1,
	REGIONPM_A_EVENT_REASON,
	REGIONPM_A_EVENT_PAGES,
	REGIONPM_A_EVENT_PAD,

	__REGIONPM_A_EVENT_MAX,
	REGIONPM_A_EVENT_MAX = (__REGIONPM_A_EVENT_MAX - 1)
};

enum {
	REGIONPM_CMD_INFO_GET = 1,
	REGIONPM_CMD_REGION_GET,
	REGIONPM_CMD_REGION_COMPACT,
	REGIONPM_CMD_REGION_PARK,
	REGIONPM_CMD_REGION_UNPARK,
	REGIONPM_CMD_REGION_ALLOC_NTF,
	REGIONPM_CMD_REGION_RELEASE_NTF,
	REGIONPM_CMD_REGION_COMPACT_NTF,
	REGIONPM_CMD_REGION_HOLD,

	__REGIONPM_CMD_MAX,
	REGIONPM_CMD_MAX = (__REGIONPM_CMD_MAX - 1)
};

#define REGIONPM_MCGRP_EVENTS	"events"

#endif /* _UAPI_LINUX_REGIONPM_H */
