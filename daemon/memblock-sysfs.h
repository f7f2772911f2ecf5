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
