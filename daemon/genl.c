// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * regionpmd: generic netlink client of the regionpm family, on libmnl.
 * See genl.h.  Parsers first (pure, unit tested), then the sockets.
 */
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/regionpm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "genl.h"

#define RPM_RXBUF	(64 * 1024)
#define RPM_TXBUF	1024
/*
 * How long a request may wait for the kernel's answer.  Shorter than
 * regionpmd.service's WatchdogSec=1min, so that a request the kernel does
 * not answer fails (and is logged) instead of the watchdog killing the
 * daemon; every compaction the daemon asks for is bounded by a page budget
 * (BudgetPagesPerRegion=), which takes well under a second on real hardware
 * and a few seconds under TCG.  A late answer is skipped by its sequence
 * number.
 */
#define RPM_RECV_TIMEOUT_S 20
#define RPM_EVENT_RCVBUF (1 << 20)

/* ---- attribute tables ----------------------------------------------------- */

/* MNL_TYPE_UNSPEC entries (pads, request-only flags) are not looked at. */
static const enum mnl_attr_data_type info_types[REGIONPM_A_INFO_MAX + 1] = {
	[REGIONPM_A_INFO_REGION_SIZE] = MNL_TYPE_U64,
	[REGIONPM_A_INFO_REGION_COUNT] = MNL_TYPE_U32,
	[REGIONPM_A_INFO_BIAS] = MNL_TYPE_U8,
	[REGIONPM_A_INFO_FRONTIER] = MNL_TYPE_U32,
	[REGIONPM_A_INFO_PARKED_PAGES] = MNL_TYPE_U64,
	[REGIONPM_A_INFO_HELD_PAGES] = MNL_TYPE_U64,
};

static const enum mnl_attr_data_type region_types[REGIONPM_A_REGION_MAX + 1] = {
	[REGIONPM_A_REGION_ID] = MNL_TYPE_U32,
	[REGIONPM_A_REGION_START_PFN] = MNL_TYPE_U64,
	[REGIONPM_A_REGION_SPANNED_PAGES] = MNL_TYPE_U64,
	[REGIONPM_A_REGION_MANAGED_PAGES] = MNL_TYPE_U64,
	[REGIONPM_A_REGION_FREE_PAGES] = MNL_TYPE_U64,
	[REGIONPM_A_REGION_NODE] = MNL_TYPE_U32,
	[REGIONPM_A_REGION_ZONE] = MNL_TYPE_NUL_STRING,
	[REGIONPM_A_REGION_STATE] = MNL_TYPE_U32,
	[REGIONPM_A_REGION_OWNER_PORTID] = MNL_TYPE_U32,
	[REGIONPM_A_REGION_PARKED_PAGES] = MNL_TYPE_U64,
	[REGIONPM_A_REGION_DETAIL] = MNL_TYPE_NESTED,
	[REGIONPM_A_REGION_HELD_PAGES] = MNL_TYPE_U64,
};

static const enum mnl_attr_data_type detail_types[REGIONPM_A_DETAIL_MAX + 1] = {
	[REGIONPM_A_DETAIL_FREE ... REGIONPM_A_DETAIL_HUGE] = MNL_TYPE_U64,
};

static const enum mnl_attr_data_type compact_types[REGIONPM_A_COMPACT_MAX + 1] = {
	[REGIONPM_A_COMPACT_ID] = MNL_TYPE_U32,
	[REGIONPM_A_COMPACT_SCANNED] = MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_MIGRATED] = MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_DROPPED] = MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_SKIPPED] = MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_FAILED] = MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_OBSTACLE] = MNL_TYPE_U32,
	[REGIONPM_A_COMPACT_OBSTACLE_PFN] = MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_FREE_PAGES] = MNL_TYPE_U64,
	[REGIONPM_A_COMPACT_ELAPSED_NS] = MNL_TYPE_U64,
};

static const enum mnl_attr_data_type event_types[REGIONPM_A_EVENT_MAX + 1] = {
	[REGIONPM_A_EVENT_ID] = MNL_TYPE_U32,
	[REGIONPM_A_EVENT_REASON] = MNL_TYPE_U32,
	[REGIONPM_A_EVENT_PAGES] = MNL_TYPE_U64,
};

/*
 * Walk the attributes in [p, p + len): every attribute must be well formed
 * and fit; known ones (type <= max with a type in @types) must validate.
 * Newer attributes (type > max) are skipped.  tb[type] = last occurrence.
 */
static int parse_range(const void *p, size_t len,
		       const enum mnl_attr_data_type *types, unsigned max,
		       const struct nlattr **tb)
{
	const char *c = p;

	memset(tb, 0, (max + 1) * sizeof(*tb));
	while (len >= sizeof(struct nlattr)) {
		const struct nlattr *a = (const struct nlattr *)c;
		uint16_t type = mnl_attr_get_type(a);
		size_t step;

		if (a->nla_len < sizeof(struct nlattr) || a->nla_len > len)
			return -EBADMSG;		/* truncated */
		if (type <= max && types[type] != MNL_TYPE_UNSPEC) {
			if (mnl_attr_validate(a, types[type]) < 0)
				return -EBADMSG;	/* wrong size for its type */
			tb[type] = a;
		}
		/* else: newer than us (type > max) or not ours to read: skip */
		step = MNL_ALIGN(a->nla_len);
		if (step > len)
			step = len;			/* last attribute, unpadded */
		c += step;
		len -= step;
	}
	return len ? -EBADMSG : 0;
}

static int parse_genl(const struct nlmsghdr *nlh,
		      const enum mnl_attr_data_type *types, unsigned max,
		      const struct nlattr **tb)
{
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + GENL_HDRLEN)
		return -EBADMSG;
	return parse_range(mnl_nlmsg_get_payload_offset(nlh, GENL_HDRLEN),
			   nlh->nlmsg_len - MNL_NLMSG_HDRLEN - GENL_HDRLEN,
			   types, max, tb);
}

static bool have_all(const struct nlattr **tb, const int *req)
{
	for (; *req; req++)
		if (!tb[*req])
			return false;
	return true;
}

static uint64_t u64_or(const struct nlattr *a, uint64_t dflt)
{
	return a ? mnl_attr_get_u64(a) : dflt;
}

static uint32_t u32_or(const struct nlattr *a, uint32_t dflt)
{
	return a ? mnl_attr_get_u32(a) : dflt;
}

/* ---- parsers -------------------------------------------------------------- */

struct ctrl_parse {
	const char *grp_name;
	bool have_family, bad;
	uint16_t family;
	uint32_t grp;
};

static int ctrl_grp_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;
	uint16_t type = mnl_attr_get_type(a);

	if (type == CTRL_ATTR_MCAST_GRP_NAME) {
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
			return MNL_CB_ERROR;
		tb[0] = a;
	} else if (type == CTRL_ATTR_MCAST_GRP_ID) {
		if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
			return MNL_CB_ERROR;
		tb[1] = a;
	}
	return MNL_CB_OK;
}

static int ctrl_attr_cb(const struct nlattr *a, void *data)
{
	struct ctrl_parse *c = data;
	const struct nlattr *grp;

	switch (mnl_attr_get_type(a)) {
	case CTRL_ATTR_FAMILY_ID:
		if (mnl_attr_validate(a, MNL_TYPE_U16) < 0)
			goto bad;
		c->family = mnl_attr_get_u16(a);
		c->have_family = true;
		break;
	case CTRL_ATTR_MCAST_GROUPS:
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) < 0)
			goto bad;
		mnl_attr_for_each_nested(grp, a) {
			const struct nlattr *tb[2] = { NULL, NULL };

			if (mnl_attr_parse_nested(grp, ctrl_grp_cb, tb) < 0)
				goto bad;
			if (tb[0] && tb[1] && c->grp_name &&
			    !strcmp(mnl_attr_get_str(tb[0]), c->grp_name))
				c->grp = mnl_attr_get_u32(tb[1]);
		}
		break;
	}
	return MNL_CB_OK;
bad:
	c->bad = true;
	return MNL_CB_ERROR;
}

int rpm_parse_ctrl(const struct nlmsghdr *nlh, const char *grp_name,
		   uint16_t *family, uint32_t *grp)
{
	struct ctrl_parse c = { .grp_name = grp_name };

	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + GENL_HDRLEN)
		return -EBADMSG;
	if (mnl_attr_parse(nlh, GENL_HDRLEN, ctrl_attr_cb, &c) < 0 || c.bad ||
	    !c.have_family)
		return -EBADMSG;
	*family = c.family;
	if (grp)
		*grp = c.grp;
	return 0;
}

int rpm_parse_info(const struct nlmsghdr *nlh, struct rpm_kernel_info *info)
{
	static const int req[] = { REGIONPM_A_INFO_REGION_SIZE,
				   REGIONPM_A_INFO_REGION_COUNT, 0 };
	const struct nlattr *tb[REGIONPM_A_INFO_MAX + 1];
	int r;

	r = parse_genl(nlh, info_types, REGIONPM_A_INFO_MAX, tb);
	if (r < 0)
		return r;
	if (!have_all(tb, req))
		return -EBADMSG;
	*info = (struct rpm_kernel_info) {
		.region_size = mnl_attr_get_u64(tb[REGIONPM_A_INFO_REGION_SIZE]),
		.region_count = mnl_attr_get_u32(tb[REGIONPM_A_INFO_REGION_COUNT]),
		.bias = tb[REGIONPM_A_INFO_BIAS] && mnl_attr_get_u8(tb[REGIONPM_A_INFO_BIAS]),
		.frontier = u32_or(tb[REGIONPM_A_INFO_FRONTIER], 0),
		.parked_pages = u64_or(tb[REGIONPM_A_INFO_PARKED_PAGES], 0),
		.held_pages = u64_or(tb[REGIONPM_A_INFO_HELD_PAGES], 0),
	};
	if (!info->region_size)
		return -EBADMSG;
	return 0;
}

static int parse_detail(const struct nlattr *nest, struct rpm_region_detail *d)
{
	const struct nlattr *tb[REGIONPM_A_DETAIL_MAX + 1];
	struct timespec ts;
	int r;

	r = parse_range(mnl_attr_get_payload(nest), mnl_attr_get_payload_len(nest),
			detail_types, REGIONPM_A_DETAIL_MAX, tb);
	if (r < 0)
		return r;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	*d = (struct rpm_region_detail) {
		.valid = true,
		.when = (usec_t_)ts.tv_sec * 1000000 + ts.tv_nsec / 1000,
		.free = u64_or(tb[REGIONPM_A_DETAIL_FREE], 0),
		.anon = u64_or(tb[REGIONPM_A_DETAIL_ANON], 0),
		.file_clean = u64_or(tb[REGIONPM_A_DETAIL_FILE_CLEAN], 0),
		.file_dirty = u64_or(tb[REGIONPM_A_DETAIL_FILE_DIRTY], 0),
		.writeback = u64_or(tb[REGIONPM_A_DETAIL_WRITEBACK], 0),
		.shmem = u64_or(tb[REGIONPM_A_DETAIL_SHMEM], 0),
		.unevictable = u64_or(tb[REGIONPM_A_DETAIL_UNEVICTABLE], 0),
		.slab = u64_or(tb[REGIONPM_A_DETAIL_SLAB], 0),
		.page_table = u64_or(tb[REGIONPM_A_DETAIL_PAGE_TABLE], 0),
		.reserved = u64_or(tb[REGIONPM_A_DETAIL_RESERVED], 0),
		.kernel_other = u64_or(tb[REGIONPM_A_DETAIL_KERNEL_OTHER], 0),
		.offline = u64_or(tb[REGIONPM_A_DETAIL_OFFLINE], 0),
		.huge = u64_or(tb[REGIONPM_A_DETAIL_HUGE], 0),
	};
	return 0;
}

/* A state newer than this client is treated as busy: leave the region alone. */
static enum rpm_region_state region_state(uint32_t s)
{
	switch (s) {
	case REGIONPM_REGION_STATE_ACTIVE:
		return RPM_REGION_ACTIVE;
	case REGIONPM_REGION_STATE_PARKED:
		return RPM_REGION_PARKED;
	case REGIONPM_REGION_STATE_HELD:
		return RPM_REGION_HELD;
	case REGIONPM_REGION_STATE_BUSY:
	default:
		return RPM_REGION_BUSY;
	}
}

int rpm_parse_region(const struct nlmsghdr *nlh, struct rpm_region *r)
{
	static const int req[] = {
		REGIONPM_A_REGION_ID, REGIONPM_A_REGION_START_PFN,
		REGIONPM_A_REGION_SPANNED_PAGES, REGIONPM_A_REGION_MANAGED_PAGES,
		REGIONPM_A_REGION_FREE_PAGES, REGIONPM_A_REGION_STATE, 0 };
	const struct nlattr *tb[REGIONPM_A_REGION_MAX + 1], *a;
	struct rpm_region_detail detail = { .valid = false };
	size_t zl = 0;
	int ret;

	ret = parse_genl(nlh, region_types, REGIONPM_A_REGION_MAX, tb);
	if (ret < 0)
		return ret;
	if (!have_all(tb, req))
		return -EBADMSG;
	if (tb[REGIONPM_A_REGION_DETAIL]) {
		ret = parse_detail(tb[REGIONPM_A_REGION_DETAIL], &detail);
		if (ret < 0)
			return ret;
	}
	r->id = mnl_attr_get_u32(tb[REGIONPM_A_REGION_ID]);
	r->start_pfn = mnl_attr_get_u64(tb[REGIONPM_A_REGION_START_PFN]);
	r->spanned_pages = mnl_attr_get_u64(tb[REGIONPM_A_REGION_SPANNED_PAGES]);
	r->managed_pages = mnl_attr_get_u64(tb[REGIONPM_A_REGION_MANAGED_PAGES]);
	r->free_pages = mnl_attr_get_u64(tb[REGIONPM_A_REGION_FREE_PAGES]);
	r->node = u32_or(tb[REGIONPM_A_REGION_NODE], UINT32_MAX);
	r->state = region_state(mnl_attr_get_u32(tb[REGIONPM_A_REGION_STATE]));
	r->owner_portid = u32_or(tb[REGIONPM_A_REGION_OWNER_PORTID], 0);
	r->parked_pages = u64_or(tb[REGIONPM_A_REGION_PARKED_PAGES], 0);
	r->held_pages = u64_or(tb[REGIONPM_A_REGION_HELD_PAGES], 0);
	if (detail.valid)
		r->detail = detail;
	/* zone is a multi-attr: every occurrence was validated above */
	r->zones[0] = '\0';
	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		if (mnl_attr_get_type(a) != REGIONPM_A_REGION_ZONE)
			continue;
		int n = snprintf(r->zones + zl, sizeof(r->zones) - zl, "%s%s",
				 zl ? "," : "", mnl_attr_get_str(a));
		if (n < 0 || (size_t)n >= sizeof(r->zones) - zl)
			break;
		zl += n;
	}
	return 0;
}

int rpm_parse_compact(const struct nlmsghdr *nlh, struct rpm_compact_result *res)
{
	static const int req[] = { REGIONPM_A_COMPACT_ID, REGIONPM_A_COMPACT_MIGRATED,
				   REGIONPM_A_COMPACT_DROPPED, 0 };
	const struct nlattr *tb[REGIONPM_A_COMPACT_MAX + 1];
	int ret;

	ret = parse_genl(nlh, compact_types, REGIONPM_A_COMPACT_MAX, tb);
	if (ret < 0)
		return ret;
	if (!have_all(tb, req))
		return -EBADMSG;
	*res = (struct rpm_compact_result) {
		.id = mnl_attr_get_u32(tb[REGIONPM_A_COMPACT_ID]),
		.scanned = u64_or(tb[REGIONPM_A_COMPACT_SCANNED], 0),
		.migrated = mnl_attr_get_u64(tb[REGIONPM_A_COMPACT_MIGRATED]),
		.dropped = mnl_attr_get_u64(tb[REGIONPM_A_COMPACT_DROPPED]),
		.skipped = u64_or(tb[REGIONPM_A_COMPACT_SKIPPED], 0),
		.failed = u64_or(tb[REGIONPM_A_COMPACT_FAILED], 0),
		.obstacle = u32_or(tb[REGIONPM_A_COMPACT_OBSTACLE], REGIONPM_OBSTACLE_NONE),
		.obstacle_pfn = u64_or(tb[REGIONPM_A_COMPACT_OBSTACLE_PFN], 0),
		.free_pages = u64_or(tb[REGIONPM_A_COMPACT_FREE_PAGES], 0),
		.elapsed_ns = u64_or(tb[REGIONPM_A_COMPACT_ELAPSED_NS], 0),
	};
	return 0;
}

int rpm_parse_event(const struct nlmsghdr *nlh, struct rpm_event *ev)
{
	const struct nlattr *tb[REGIONPM_A_EVENT_MAX + 1];
	const struct genlmsghdr *gh;
	int ret;

	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + GENL_HDRLEN)
		return -EBADMSG;
	gh = mnl_nlmsg_get_payload(nlh);
	memset(ev, 0, sizeof(*ev));
	switch (gh->cmd) {
	case REGIONPM_CMD_REGION_COMPACT_NTF:
		ev->kind = RPM_EVENT_COMPACT;
		ret = rpm_parse_compact(nlh, &ev->compact);
		ev->id = ev->compact.id;
		return ret;
	case REGIONPM_CMD_REGION_ALLOC_NTF:
	case REGIONPM_CMD_REGION_RELEASE_NTF:
		ret = parse_genl(nlh, event_types, REGIONPM_A_EVENT_MAX, tb);
		if (ret < 0)
			return ret;
		if (!tb[REGIONPM_A_EVENT_ID])
			return -EBADMSG;
		ev->id = mnl_attr_get_u32(tb[REGIONPM_A_EVENT_ID]);
		if (gh->cmd == REGIONPM_CMD_REGION_ALLOC_NTF) {
			ev->kind = RPM_EVENT_ALLOC;
			return 0;
		}
		if (!tb[REGIONPM_A_EVENT_REASON])
			return -EBADMSG;
		ev->kind = RPM_EVENT_RELEASE;
		ev->reason = mnl_attr_get_u32(tb[REGIONPM_A_EVENT_REASON]);
		ev->pages = u64_or(tb[REGIONPM_A_EVENT_PAGES], 0);
		return 0;
	default:
		return -EOPNOTSUPP;	/* an event newer than this client */
	}
}

int rpm_parse_ack(const struct nlmsghdr *nlh, char *msg, size_t msglen)
{
	const struct nlmsgerr *e;
	size_t off, plen;
	const struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	static const enum mnl_attr_data_type ack_types[NLMSGERR_ATTR_MAX + 1] = {
		[NLMSGERR_ATTR_MSG] = MNL_TYPE_NUL_STRING,
	};

	if (msg && msglen)
		msg[0] = '\0';
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(*e))
		return -EBADMSG;
	e = mnl_nlmsg_get_payload(nlh);
	if (e->error > 0)
		return -EBADMSG;
	plen = nlh->nlmsg_len - MNL_NLMSG_HDRLEN;
	off = sizeof(*e);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < sizeof(struct nlmsghdr))
			return -EBADMSG;
		off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	}
	off = MNL_ALIGN(off);
	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) && off < plen && msg && msglen &&
	    parse_range((const char *)e + off, plen - off, ack_types,
			NLMSGERR_ATTR_MAX, tb) == 0 && tb[NLMSGERR_ATTR_MSG])
		snprintf(msg, msglen, "%s", mnl_attr_get_str(tb[NLMSGERR_ATTR_MSG]));
	return e->error;
}

const char *rpm_obstacle_name(uint32_t o)
{
	static const char *const names[] = {
		"none", "reserved", "slab", "page-table", "kernel", "pinned", "dirty",
		"writeback", "unevictable", "hugetlb", "isolation", "mode", "no-room",
	};
	return o < sizeof(names) / sizeof(names[0]) ? names[o] : "unknown";
}

const char *rpm_release_reason_name(uint32_t r)
{
	static const char *const names[] = {
		"unpark", "owner-closed", "shrinker", "oom", "hotplug", "timeout",
		"range-claimed",
	};
	return r < sizeof(names) / sizeof(names[0]) ? names[r] : "unknown";
}

const char *rpm_compact_mode_name(uint32_t m)
{
	static const char *const names[] = { "migrate", "drop", "both" };
	return m < sizeof(names) / sizeof(names[0]) ? names[m] : "unknown";
}

/* ---- sockets -------------------------------------------------------------- */

struct rpm_genl {
	struct mnl_socket *cmd, *ev;
	uint32_t portid, seq;
	uint16_t family;
	uint32_t grp;
	FILE *debug;
	char extack[256];
	char rx[RPM_RXBUF] __attribute__((aligned(8)));
	/* events have their own: an event callback may make a request */
	char evrx[RPM_RXBUF] __attribute__((aligned(8)));
};

static void dump_packet(struct rpm_genl *g, const char *dir, const void *buf, size_t len)
{
	if (!g->debug)
		return;
	fprintf(g->debug, "regionpmd: netlink %s %zu bytes\n", dir, len);
	mnl_nlmsg_fprintf(g->debug, buf, len, GENL_HDRLEN);
	fflush(g->debug);
}

static struct nlmsghdr *msg_start(struct rpm_genl *g, char *buf, uint16_t type,
				  uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *gh;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++g->seq;
	gh = mnl_nlmsg_put_extra_header(nlh, sizeof(*gh));
	gh->cmd = cmd;
	gh->version = type == GENL_ID_CTRL ? 1 : REGIONPM_FAMILY_VERSION;
	return nlh;
}

typedef int (*reply_cb)(const struct nlmsghdr *nlh, void *data);

/*
 * Send @nlh on the command socket and read until its ACK (do) or
 * NLMSG_DONE (dump).  Messages of another sequence number or port are late
 * answers to an earlier (timed-out) request and are skipped.  A parse error
 * in a reply is remembered but reading goes on to the ACK, so the socket
 * stays in step.
 */
static int transact(struct rpm_genl *g, struct nlmsghdr *nlh, uint16_t type,
		    reply_cb cb, void *data)
{
	uint32_t seq = nlh->nlmsg_seq;
	int cb_err = 0;

	g->extack[0] = '\0';
	dump_packet(g, "send", nlh, nlh->nlmsg_len);
	if (mnl_socket_sendto(g->cmd, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(g->cmd, g->rx, sizeof(g->rx));
		const struct nlmsghdr *h = (const struct nlmsghdr *)g->rx;
		int len;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		dump_packet(g, "recv", g->rx, n);
		len = (int)n;
		for (; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len)) {
			int r;

			if (h->nlmsg_seq != seq || h->nlmsg_pid != g->portid)
				continue;	/* not the answer to this request */
			switch (h->nlmsg_type) {
			case NLMSG_NOOP:
				continue;
			case NLMSG_OVERRUN:
				return -EOVERFLOW;
			case NLMSG_ERROR:
				r = rpm_parse_ack(h, g->extack, sizeof(g->extack));
				return r < 0 ? r : cb_err;
			case NLMSG_DONE:
				r = 0;
				if (mnl_nlmsg_get_payload_len(h) >= sizeof(int))
					memcpy(&r, mnl_nlmsg_get_payload(h), sizeof(r));
				return r < 0 ? r : cb_err;
			default:
				if (h->nlmsg_type != type) {
					cb_err = cb_err ?: -EBADMSG;
					continue;
				}
				if (!cb) {
					cb_err = cb_err ?: -EBADMSG; /* no reply expected */
					continue;
				}
				if (!cb_err) {
					r = cb(h, data);
					if (r < 0)
						cb_err = r;
				}
			}
		}
		if (len > 0)
			return -EBADMSG;	/* truncated message */
	}
}

static int ctrl_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rpm_genl *g = data;

	return rpm_parse_ctrl(nlh, REGIONPM_MCGRP_EVENTS, &g->family, &g->grp);
}

static struct mnl_socket *sock_open(bool ext_ack)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	int one = 1;

	if (!nl)
		return NULL;
	if ((ext_ack &&
	     (mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one)) < 0 ||
	      mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one)) < 0)) ||
	    mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int e = errno;

		mnl_socket_close(nl);
		errno = e;
		return NULL;
	}
	return nl;
}

int rpm_genl_open(struct rpm_genl **ret, FILE *debug)
{
	struct timeval tv = { .tv_sec = RPM_RECV_TIMEOUT_S };
	struct rpm_genl *g;
	struct nlmsghdr *nlh;
	char buf[RPM_TXBUF];
	int r, big = RPM_EVENT_RCVBUF, grp;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->debug = debug;
	g->seq = (uint32_t)time(NULL);
	g->cmd = sock_open(true);
	if (!g->cmd) {
		r = -errno;
		goto fail;
	}
	setsockopt(mnl_socket_get_fd(g->cmd), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	g->portid = mnl_socket_get_portid(g->cmd);

	nlh = msg_start(g, buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_ACK);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, REGIONPM_FAMILY_NAME);
	r = transact(g, nlh, GENL_ID_CTRL, ctrl_cb, g);
	if (r < 0)
		goto fail;		/* -ENOENT: no such family */
	if (!g->family) {
		r = -ENOENT;
		goto fail;
	}
	if (!g->grp) {
		snprintf(g->extack, sizeof(g->extack), "family has no \"%s\" group",
			 REGIONPM_MCGRP_EVENTS);
		r = -ENOENT;
		goto fail;
	}

	g->ev = sock_open(false);
	if (!g->ev) {
		r = -errno;
		goto fail;
	}
	/* a burst of alloc events must not overrun it; FORCE needs CAP_NET_ADMIN */
	if (setsockopt(mnl_socket_get_fd(g->ev), SOL_SOCKET, SO_RCVBUFFORCE, &big,
		       sizeof(big)) < 0)
		setsockopt(mnl_socket_get_fd(g->ev), SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	grp = (int)g->grp;
	if (mnl_socket_setsockopt(g->ev, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp)) < 0) {
		r = -errno;
		snprintf(g->extack, sizeof(g->extack), "joining the events group");
		goto fail;
	}
	r = fcntl(mnl_socket_get_fd(g->ev), F_GETFL);
	if (r < 0 || fcntl(mnl_socket_get_fd(g->ev), F_SETFL, r | O_NONBLOCK) < 0) {
		r = -errno;
		goto fail;
	}
	*ret = g;
	return 0;
fail:
	rpm_genl_close(g);
	return r;
}

void rpm_genl_close(struct rpm_genl *g)
{
	if (!g)
		return;
	if (g->ev)
		mnl_socket_close(g->ev);
	if (g->cmd)
		mnl_socket_close(g->cmd);
	free(g);
}

int rpm_genl_event_fd(const struct rpm_genl *g)
{
	return mnl_socket_get_fd(g->ev);
}

uint32_t rpm_genl_portid(const struct rpm_genl *g)
{
	return g->portid;
}

uint16_t rpm_genl_family(const struct rpm_genl *g)
{
	return g->family;
}

const char *rpm_genl_extack(const struct rpm_genl *g)
{
	return g->extack;
}

void rpm_genl_set_debug(struct rpm_genl *g, FILE *debug)
{
	g->debug = debug;
}

static int info_cb(const struct nlmsghdr *nlh, void *data)
{
	return rpm_parse_info(nlh, data);
}

int rpm_genl_info(struct rpm_genl *g, struct rpm_kernel_info *info)
{
	char buf[RPM_TXBUF];
	struct nlmsghdr *nlh = msg_start(g, buf, g->family, REGIONPM_CMD_INFO_GET, NLM_F_ACK);
	struct rpm_kernel_info tmp = { .region_size = 0 };
	int r;

	r = transact(g, nlh, g->family, info_cb, &tmp);
	if (r < 0)
		return r;
	if (!tmp.region_size)
		return -EBADMSG;	/* ACK without a reply */
	*info = tmp;
	return 0;
}

struct region_do {
	struct rpm_region *r;
	bool got;
};

static int region_do_cb(const struct nlmsghdr *nlh, void *data)
{
	struct region_do *d = data;
	int r = rpm_parse_region(nlh, d->r);

	d->got = r == 0;
	return r;
}

int rpm_genl_region_get(struct rpm_genl *g, uint32_t id, bool scan, struct rpm_region *r)
{
	char buf[RPM_TXBUF];
	struct nlmsghdr *nlh = msg_start(g, buf, g->family, REGIONPM_CMD_REGION_GET, NLM_F_ACK);
	struct region_do d = { .r = r };
	int ret;

	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_ID, id);
	if (scan)
		mnl_attr_put(nlh, REGIONPM_A_REGION_SCAN, 0, NULL);
	ret = transact(g, nlh, g->family, region_do_cb, &d);
	if (ret < 0)
		return ret;
	return d.got ? 0 : -EBADMSG;
}

struct region_dump {
	rpm_region_cb cb;
	void *userdata;
};

static int region_dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct region_dump *d = data;
	struct rpm_region r;
	int ret;

	memset(&r, 0, sizeof(r));
	ret = rpm_parse_region(nlh, &r);
	if (ret < 0)
		return ret;
	return d->cb(&r, d->userdata);
}

int rpm_genl_dump(struct rpm_genl *g, bool scan, rpm_region_cb cb, void *userdata)
{
	char buf[RPM_TXBUF];
	struct nlmsghdr *nlh = msg_start(g, buf, g->family, REGIONPM_CMD_REGION_GET,
					 NLM_F_DUMP | NLM_F_ACK);
	struct region_dump d = { cb, userdata };

	if (scan)
		mnl_attr_put(nlh, REGIONPM_A_REGION_SCAN, 0, NULL);
	return transact(g, nlh, g->family, region_dump_cb, &d);
}

struct compact_do {
	struct rpm_compact_result *res;
	bool got;
};

static int compact_cb(const struct nlmsghdr *nlh, void *data)
{
	struct compact_do *d = data;
	int r = rpm_parse_compact(nlh, d->res);

	d->got = r == 0;
	return r;
}

static int compact_like(struct rpm_genl *g, uint8_t cmd, uint32_t id, bool park_flag,
			uint32_t mode, uint64_t budget, struct rpm_compact_result *res)
{
	char buf[RPM_TXBUF];
	struct nlmsghdr *nlh = msg_start(g, buf, g->family, cmd, NLM_F_ACK);
	struct rpm_compact_result tmp;
	struct compact_do d = { .res = res ?: &tmp };
	int r;

	mnl_attr_put_u32(nlh, REGIONPM_A_COMPACT_ID, id);
	mnl_attr_put_u32(nlh, REGIONPM_A_COMPACT_MODE, mode);
	if (budget)
		mnl_attr_put_u64(nlh, REGIONPM_A_COMPACT_BUDGET, budget);
	if (park_flag)
		mnl_attr_put(nlh, REGIONPM_A_COMPACT_PARK, 0, NULL);
	r = transact(g, nlh, g->family, compact_cb, &d);
	if (r < 0)
		return r;
	return d.got ? 0 : -EBADMSG;
}

int rpm_genl_compact(struct rpm_genl *g, uint32_t id, uint32_t mode,
		     uint64_t budget, struct rpm_compact_result *res)
{
	return compact_like(g, REGIONPM_CMD_REGION_COMPACT, id, false, mode, budget, res);
}

int rpm_genl_park(struct rpm_genl *g, uint32_t id, bool compact_first,
		  uint32_t mode, uint64_t budget, struct rpm_compact_result *res)
{
	char buf[RPM_TXBUF];
	struct nlmsghdr *nlh;
	struct rpm_compact_result tmp;
	struct compact_do d = { .res = res ?: &tmp };
	int r;

	if (compact_first)
		return compact_like(g, REGIONPM_CMD_REGION_PARK, id, true, mode, budget, res);
	/* without the park flag, mode and budget mean nothing: send only the id */
	nlh = msg_start(g, buf, g->family, REGIONPM_CMD_REGION_PARK, NLM_F_ACK);
	mnl_attr_put_u32(nlh, REGIONPM_A_COMPACT_ID, id);
	r = transact(g, nlh, g->family, compact_cb, &d);
	if (r < 0)
		return r;
	return d.got ? 0 : -EBADMSG;
}

int rpm_genl_unpark(struct rpm_genl *g, uint32_t id)
{
	char buf[RPM_TXBUF];
	struct nlmsghdr *nlh = msg_start(g, buf, g->family, REGIONPM_CMD_REGION_UNPARK, NLM_F_ACK);

	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_ID, id);
	return transact(g, nlh, g->family, NULL, NULL);
}

int rpm_genl_hold(struct rpm_genl *g, uint32_t id, struct rpm_region *r)
{
	char buf[RPM_TXBUF];
	struct nlmsghdr *nlh = msg_start(g, buf, g->family, REGIONPM_CMD_REGION_HOLD, NLM_F_ACK);
	struct rpm_region tmp;
	struct region_do d = { .r = r ?: &tmp };
	int ret;

	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_ID, id);
	ret = transact(g, nlh, g->family, region_do_cb, &d);
	if (ret < 0)
		return ret;
	return d.got ? 0 : -EBADMSG;
}

int rpm_genl_read_events(struct rpm_genl *g, rpm_event_cb cb, void *userdata)
{
	bool lost = false;
	int count = 0;

	for (;;) {
		ssize_t n = recv(mnl_socket_get_fd(g->ev), g->evrx, sizeof(g->evrx), MSG_DONTWAIT);
		const struct nlmsghdr *h = (const struct nlmsghdr *)g->evrx;
		int len;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				lost = true;	/* events were dropped; keep draining */
				continue;
			}
			if (errno == EAGAIN)
				break;
			return -errno;
		}
		if (n == 0)
			break;
		dump_packet(g, "event", g->evrx, n);
		len = (int)n;
		for (; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len)) {
			struct rpm_event ev;

			/* events come from the kernel (port 0) with seq 0 */
			if (h->nlmsg_type != g->family || h->nlmsg_pid != 0)
				continue;
			if (rpm_parse_event(h, &ev) < 0)
				continue;	/* unknown or malformed: a hint lost */
			count++;
			if (cb)
				cb(&ev, userdata);
		}
	}
	return lost ? -ENOBUFS : count;
}
