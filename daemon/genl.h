/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * regionpmd's generic netlink client of the regionpm family (libmnl).
 *
 * Two sockets: the command socket (requests, replies, extended ACKs; it is
 * the owner of every region the daemon parks, so it stays open for the
 * daemon's lifetime and closing it gives every parked region back), and the
 * event socket (joined to the "events" multicast group, non-blocking, read
 * from an sd-event io source).
 *
 * Every function returns 0 or a negative errno.  After a failed request the
 * kernel's extended ACK message (if any) is in rpm_genl_extack().
 *
 * The message parsers take a buffer (struct nlmsghdr *) and no socket, so
 * they are unit tested with hand-built messages (daemon/test-genl.c).  They
 * skip attributes newer than this client (type > *_MAX), validate every
 * attribute they use and return -EBADMSG for a wrong type, a truncated
 * message or a missing mandatory attribute.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "region.h"

struct nlmsghdr;
struct rpm_genl;

/* Reply of region-compact and region-park, and the region-compact-ntf event. */
struct rpm_compact_result {
	uint32_t id;
	uint64_t scanned, migrated, dropped, skipped, failed;
	uint32_t obstacle;		/* enum regionpm_obstacle */
	uint64_t obstacle_pfn;
	uint64_t free_pages;
	uint64_t elapsed_ns;
};

enum rpm_event_kind {
	RPM_EVENT_ALLOC = 1,		/* region-alloc-ntf: first page of a free region handed out */
	RPM_EVENT_RELEASE,		/* region-release-ntf: a parked or held region was given back */
	RPM_EVENT_COMPACT,		/* region-compact-ntf */
};

struct rpm_event {
	enum rpm_event_kind kind;
	uint32_t id;
	uint32_t reason;		/* RELEASE: enum regionpm_release_reason */
	uint64_t pages;			/* RELEASE: pages given back (0 if absent) */
	struct rpm_compact_result compact; /* COMPACT */
};

/* ---- parsers (pure; unit tested) ---------------------------------------- */

/* CTRL_CMD_NEWFAMILY reply: family id (mandatory) and the id of mcast group
 * @grp_name (0 if the family has no such group). */
int rpm_parse_ctrl(const struct nlmsghdr *nlh, const char *grp_name,
		   uint16_t *family, uint32_t *grp);
int rpm_parse_info(const struct nlmsghdr *nlh, struct rpm_kernel_info *info);
/* Fills the kernel view of @r (the daemon view is left untouched). */
int rpm_parse_region(const struct nlmsghdr *nlh, struct rpm_region *r);
int rpm_parse_compact(const struct nlmsghdr *nlh, struct rpm_compact_result *res);
/* -EOPNOTSUPP for an event command this client does not know (skip it). */
int rpm_parse_event(const struct nlmsghdr *nlh, struct rpm_event *ev);
/* NLMSG_ERROR: returns the (negative) error, 0 for an ACK, and copies the
 * extack message (NLMSGERR_ATTR_MSG) into msg ("" if none). */
int rpm_parse_ack(const struct nlmsghdr *nlh, char *msg, size_t msglen);

const char *rpm_obstacle_name(uint32_t obstacle);
const char *rpm_release_reason_name(uint32_t reason);
const char *rpm_compact_mode_name(uint32_t mode);

/* ---- sockets ------------------------------------------------------------- */

/*
 * Opens the command socket (NETLINK_EXT_ACK, NETLINK_CAP_ACK), resolves the
 * family and its "events" group, opens the event socket and joins the
 * group.  -ENOENT: the kernel has no regionpm family.  With @debug every
 * packet sent and received is dumped to @debug (mnl_nlmsg_fprintf).
 */
int rpm_genl_open(struct rpm_genl **ret, FILE *debug);
void rpm_genl_close(struct rpm_genl *g);	/* releases every region we parked */

int rpm_genl_event_fd(const struct rpm_genl *g);
uint32_t rpm_genl_portid(const struct rpm_genl *g);	/* command socket: owner of our parks */
uint16_t rpm_genl_family(const struct rpm_genl *g);
const char *rpm_genl_extack(const struct rpm_genl *g);	/* last extack message, "" if none */
void rpm_genl_set_debug(struct rpm_genl *g, FILE *debug);

int rpm_genl_info(struct rpm_genl *g, struct rpm_kernel_info *info);
int rpm_genl_region_get(struct rpm_genl *g, uint32_t id, bool scan,
			struct rpm_region *r);

/* Dump every region; @cb gets each one parsed into a scratch struct (kernel
 * view only).  A non-zero return of @cb aborts with that value. */
typedef int (*rpm_region_cb)(const struct rpm_region *r, void *userdata);
int rpm_genl_dump(struct rpm_genl *g, bool scan, rpm_region_cb cb, void *userdata);

/* @budget 0: no budget attribute (the whole range). */
int rpm_genl_compact(struct rpm_genl *g, uint32_t id, uint32_t mode,
		     uint64_t budget, struct rpm_compact_result *res);
/* @compact_first sets the park flag (compact with mode/budget, then park). */
int rpm_genl_park(struct rpm_genl *g, uint32_t id, bool compact_first,
		  uint32_t mode, uint64_t budget, struct rpm_compact_result *res);
/* Ends a park, or a hold of ours (-EBUSY: held by another socket). */
int rpm_genl_unpark(struct rpm_genl *g, uint32_t id);
/*
 * Holds @id for the command socket, or renews our hold: its pageblocks
 * stay isolated (nothing is allocated there, compaction targets go
 * elsewhere) until it is parked, unparked, or the kernel ends the hold
 * (socket closed, pressure, offline, regionpm.hold_timeout_ms without a
 * renewal).  @r (may be NULL) gets the region as the kernel replied it.
 */
int rpm_genl_hold(struct rpm_genl *g, uint32_t id, struct rpm_region *r);

/*
 * Reads every pending event (non-blocking) and calls @cb for each.  Returns
 * the number of events, or -ENOBUFS when the kernel dropped events because
 * the receive buffer overflowed: the caller must re-dump all regions.
 */
typedef void (*rpm_event_cb)(const struct rpm_event *ev, void *userdata);
int rpm_genl_read_events(struct rpm_genl *g, rpm_event_cb cb, void *userdata);
