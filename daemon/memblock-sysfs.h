/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memory blocks through sysfs (/sys/devices/system/memory, see the kernel's
 * Documentation/admin-guide/mm/memory-hotplug.rst): block size, the list of
 * blocks with state, zone and node, and changing a block's state.  Every
 * path is under a root prefix ("" for /), so the parsers are unit tested
 * with a fixture tree.  Errors are negative errno.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPM_SYS_MEMORY	"/sys/devices/system/memory"

enum memblock_state {
	MEMBLOCK_UNKNOWN = 0,
	MEMBLOCK_ONLINE,
	MEMBLOCK_OFFLINE,
	MEMBLOCK_GOING_OFFLINE,
};

struct memblock {
	uint32_t id;			/* N of memoryN = phys address / block size */
	enum memblock_state state;
	uint32_t node;
	/* valid_zones: for an online block the zone it is in ("Normal",
	 * "Movable", "DMA32"; "none" when it spans zones), for an offline one
	 * the zones it may be onlined to, space separated, default first. */
	char zones[32];
};

/* Parse "online\n", "offline", "going-offline". */
enum memblock_state memblock_parse_state(const char *s);
const char *memblock_state_name(enum memblock_state s);

/* block_size_bytes (hex without 0x) in bytes. */
int memblock_block_size(const char *root, uint64_t *bytes);

/* Fill one block from memoryN/ (-ENOENT: no such block). */
int memblock_read(const char *root, uint32_t id, struct memblock *b);

/* Every memoryN, sorted by id; *v is malloc'ed (free it). */
int memblock_list(const char *root, struct memblock **v, size_t *n);

/*
 * Write @state ("offline", "online", "online_movable", "online_kernel") to
 * memoryN/state.  Returns the write's -errno: -EBUSY (offline failed:
 * unmovable or pinned pages), -EINVAL (already in that state, or the zone
 * is not possible), -EINTR (interrupted by a fatal signal).
 */
int memblock_write_state(const char *root, uint32_t id, const char *state);

/* Does valid_zones text name @zone ("Movable") as a word? */
bool memblock_zones_have(const char *zones, const char *zone);

/*
 * Can the online block v[i] of the sorted list v[0..n) be offlined and
 * onlined again into the zone it is in?  Onlining into a kernel zone takes
 * the lowest of ZONE_DMA and ZONE_DMA32 whose span the block intersects,
 * else ZONE_NORMAL (the kernel's default_kernel_zone_for_pfn()), and
 * offlining the first or last online block of a zone shrinks its span: a
 * block at either end of ZONE_DMA32 on its node (measured at 2 GiB with
 * movablecore=50%: the two blocks below ZONE_MOVABLE) came back in
 * ZONE_NORMAL, where GFP_DMA32 allocations cannot use it.  Blocks of
 * ZONE_NORMAL and ZONE_MOVABLE come back where they were; a block that
 * spans zones ("none") cannot be offlined at all.
 */
bool memblock_returns_to_zone(const struct memblock *v, size_t n, size_t i);

/*
 * Online block @id into @zone, the zone it had when it was offlined:
 * online_movable for "Movable" while valid_zones (@offered) offers it,
 * online_kernel for the others (a plain "online" follows
 * memory_hotplug.online_policy, and auto-movable may put a kernel block
 * into ZONE_MOVABLE), and a plain "online" if that is refused: the memory
 * comes back in whatever zone the kernel gives it.  Returns the write's
 * -errno.
 */
int memblock_online_into(const char *root, uint32_t id, const char *zone, const char *offered);
