/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How regionpmd reads and changes physical regions: a backend.  The policy
 * (policy.c) is the same for all; the manager calls these ops only.
 *
 *   netlink  the regionpm kernel helper's generic netlink family
 *            (backend-netlink.c over genl.c): exact free counts, events,
 *            migrate/drop a range under a budget, park with kernel-side
 *            release (socket close, shrinker).
 *   stock    a kernel without the patch (backend-stock.c): regions are
 *            memory blocks, occupancy from /proc/kpageflags scans, idle page
 *            cache dropped by a DAMON paddr pageout scheme, "park" = offline
 *            the block (which migrates what is left), "unpark" = online it.
 *            The daemon alone guarantees release (offline-state.c).
 *
 * Every op returns 0 or a negative errno; after a failure the backend's
 * message (the kernel's extended ACK, or what the stock backend found in
 * the way) is in backend_error().  -EOPNOTSUPP from compact: this backend
 * cannot do that mode without parking; the manager parks instead.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "conf.h"
#include "genl.h"
#include "region.h"

/* What a backend can do; backend_missing() names what it cannot. */
enum rpm_backend_cap {
	RPM_CAP_EXACT_OCCUPANCY	= 1u << 0,	/* free counts kept by the kernel: O(regions) dump */
	RPM_CAP_EVENTS		= 1u << 1,	/* first-allocation and release events */
	RPM_CAP_MIGRATE		= 1u << 2,	/* migrate a range without parking it */
	RPM_CAP_DROP		= 1u << 3,	/* drop clean page cache of a range */
	RPM_CAP_PARK		= 1u << 4,	/* keep an emptied region empty */
	RPM_CAP_KERNEL_RELEASE	= 1u << 5,	/* the kernel gives parked memory back by itself */
	RPM_CAP_BIAS		= 1u << 6,	/* allocation bias away from high regions */
	RPM_CAP_BUDGET		= 1u << 7,	/* compaction stops after a page budget */
};
#define RPM_CAP_ALL	0xffu

struct rpm_backend;

struct rpm_backend_ops {
	const char *name;		/* "regionpm-netlink", "stock" */
	/* 0 if this kernel has what the backend needs, -ENOENT if not. */
	int (*probe)(const char *root);
	int (*open)(struct rpm_backend **ret, const char *root, FILE *debug);
	void (*close)(struct rpm_backend *b);
	unsigned (*caps)(const struct rpm_backend *b);
	int (*info)(struct rpm_backend *b, struct rpm_kernel_info *info);
	/* Every region, kernel view only (cheap: no full page scan). */
	int (*dump)(struct rpm_backend *b, rpm_region_cb cb, void *userdata);
	/* One region; @scan: with the detailed page breakdown. */
	int (*region_get)(struct rpm_backend *b, uint32_t id, bool scan, struct rpm_region *r);
	int (*compact)(struct rpm_backend *b, uint32_t id, uint32_t mode, uint64_t budget,
		       struct rpm_compact_result *res);
	int (*park)(struct rpm_backend *b, uint32_t id, bool compact_first, uint32_t mode,
		    uint64_t budget, struct rpm_compact_result *res);
	int (*unpark)(struct rpm_backend *b, uint32_t id);
	/* Keep the allocator out of a region being emptied (NULL: cannot). */
	int (*hold)(struct rpm_backend *b, uint32_t id);
	/* Event fd to poll (-1: none) and its reader (rpm_genl_read_events()). */
	int (*event_fd)(const struct rpm_backend *b);
	int (*read_events)(struct rpm_backend *b, rpm_event_cb cb, void *userdata);
	/* Owner id of the regions this daemon parked (rpm_region.owner_portid). */
	uint32_t (*owner)(const struct rpm_backend *b);
	const char *(*error)(const struct rpm_backend *b);
	void (*set_debug)(struct rpm_backend *b, FILE *debug);
};

/* Every backend starts with this. */
struct rpm_backend {
	const struct rpm_backend_ops *ops;
	/* A park that takes a while (stock: offline migrates) gives up when
	 * MemAvailable falls below this many pages; 0: never.  Set by the
	 * manager from the headroom before each park. */
	uint64_t guard_available_pages;
};

extern const struct rpm_backend_ops rpm_backend_netlink;
extern const struct rpm_backend_ops rpm_backend_stock;

/*
 * Open the backend @want asks for.  auto: netlink when the family answers,
 * else stock when its probe passes; -ENOENT when neither is there.
 */
int backend_open(enum rpm_backend_choice want, const char *root, FILE *debug,
		 struct rpm_backend **ret);
void backend_close(struct rpm_backend *b);

/* What the backend cannot do, as "events, migrate, ..." ("" if nothing)
 * into buf; returns buf. */
char *backend_missing(const struct rpm_backend *b, char *buf, size_t len);
const char *backend_cap_name(unsigned cap);

/* Thin wrappers, so the manager reads like before. */
static inline const char *backend_name(const struct rpm_backend *b)
{
	return b ? b->ops->name : "none";
}
static inline unsigned backend_caps(const struct rpm_backend *b)
{
	return b ? b->ops->caps(b) : 0;
}
static inline const char *backend_error(const struct rpm_backend *b)
{
	return b ? b->ops->error(b) : "";
}
