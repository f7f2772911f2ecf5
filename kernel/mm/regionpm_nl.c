// SPDX-License-Identifier: GPL-2.0
/*
 * regionpm generic netlink handlers.  The policy and op tables are generated
 * from Documentation/netlink/specs/regionpm.yaml into regionpm_nl_gen.c;
 * attributes reaching these handlers are already validated by type and
 * range, so the handlers check only what a policy cannot express.
 */
#include <linux/capability.h>
#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "regionpm_internal.h"
#include "regionpm_nl_gen.h"

/*
 * The family exists in the initial network namespace only (netnsok is
 * false in the spec); generic netlink checks CAP_NET_ADMIN (admin-perm) and
 * this CAP_SYS_ADMIN, both for the opener of the socket and the sender.
 */
static int check_caller(struct sk_buff *skb, struct netlink_ext_ack *extack)
{
	int ret;

	if (!netlink_capable(skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(extack, "regionpm needs CAP_SYS_ADMIN");
		return -EPERM;
	}
	/* The first request of a client starts the counting it reads. */
	ret = regionpm_track_start("netlink");
	if (ret)
		NL_SET_ERR_MSG(extack, "regionpm cannot count free pages");
	return ret;
}

/*
 * info-get's frontier: that of the zone GFP_KERNEL allocations use on the
 * first node (its highest populated zone up to ZONE_NORMAL).
 */
static u32 first_frontier(void)
{
	pg_data_t *pgdat = NODE_DATA(first_online_node);
	unsigned long pfn = ULONG_MAX;
	int z;

	for (z = ZONE_NORMAL; z >= 0; z--) {
		struct zone *zone = &pgdat->node_zones[z];

		if (populated_zone(zone)) {
			pfn = READ_ONCE(regionpm.frontier_pfn[regionpm_zone_slot(zone)]);
			break;
		}
	}
	return min_t(unsigned long, pfn >> regionpm.shift, regionpm.nr);
}

int regionpm_nl_pre_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
			 struct genl_info *info)
{
	return check_caller(skb, info->extack);
}

int regionpm_nl_pre_dumpit(struct netlink_callback *cb)
{
	return check_caller(cb->skb, cb->extack);
}

static int get_id(struct genl_info *info, int attr, unsigned long *id)
{
	if (GENL_REQ_ATTR_CHECK(info, attr))
		return -EINVAL;
	*id = nla_get_u32(info->attrs[attr]);
	if (*id >= regionpm.nr) {
		NL_SET_ERR_MSG_ATTR_FMT(info->extack, info->attrs[attr],
					"no region %lu: there are %lu", *id, regionpm.nr);
		return -ERANGE;
	}
	if (!regionpm_region_has_memory(*id)) {
		NL_SET_ERR_MSG_ATTR_FMT(info->extack, info->attrs[attr],
					"region %lu holds no memory", *id);
		return -ENOENT;
	}
	return 0;
}

int regionpm_nl_info_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_iput(msg, info);
	if (!hdr ||
	    nla_put_u64_64bit(msg, REGIONPM_A_INFO_REGION_SIZE,
			      (u64)regionpm_pages() << PAGE_SHIFT, 0) ||
	    nla_put_u32(msg, REGIONPM_A_INFO_REGION_COUNT, regionpm.nr) ||
	    nla_put_u8(msg, REGIONPM_A_INFO_BIAS, regionpm_bias_on()) ||
	    nla_put_u32(msg, REGIONPM_A_INFO_FRONTIER, first_frontier()) ||
	    nla_put_u64_64bit(msg, REGIONPM_A_INFO_PARKED_PAGES,
			      READ_ONCE(regionpm.parked_pages), 0) ||
	    nla_put_u64_64bit(msg, REGIONPM_A_INFO_HELD_PAGES,
			      READ_ONCE(regionpm.held_pages), 0)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int put_detail(struct sk_buff *skb, unsigned long id)
{
	struct regionpm_detail d;
	struct nlattr *nest;

	/* The memmap of the region stays while it is walked. */
	get_online_mems();
	regionpm_region_detail(id, &d);
	put_online_mems();
	nest = nla_nest_start(skb, REGIONPM_A_REGION_DETAIL);
	if (!nest ||
	    nla_put_u64_64bit(skb, REGIONPM_A_DETAIL_FREE, d.free, REGIONPM_A_DETAIL_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_DETAIL_ANON, d.anon, REGIONPM_A_DETAIL_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_DETAIL_FILE_CLEAN, d.file_clean,
			      REGIONPM_A_DETAIL_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_DETAIL_FILE_DIRTY, d.file_dirty,
			      REGIONPM_A_DETAIL_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_DETAIL_WRITEBACK, d.writeback,
			      REGIONPM_A_DETAIL_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_DETAIL_SHMEM, d.shmem, REGIONPM_A_DETAIL_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_DETAIL_UNEVICTABLE, d.unevictable,
			      REGIONPM_A_DETAIL_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_DETAIL_SLAB, d.slab, REGIONPM_A_DETAIL_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_DETAIL_PAGE_TABLE, d.page_table,
			      REGIONPM_A_DETAIL_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_DETAIL_RESERVED, d.reserved,
			      REGIONPM_A_DETAIL_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_DETAIL_KERNEL_OTHER, d.kernel_other,
			      REGIONPM_A_DETAIL_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_DETAIL_OFFLINE, d.offline, REGIONPM_A_DETAIL_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_DETAIL_HUGE, d.huge, REGIONPM_A_DETAIL_PAD))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int put_zones(struct sk_buff *skb, unsigned long start, unsigned long nr)
{
	struct zone *zone;

	for_each_populated_zone(zone) {
		if (zone_intersects(zone, start, nr) &&
		    nla_put_string(skb, REGIONPM_A_REGION_ZONE, zone->name))
			return -EMSGSIZE;
	}
	return 0;
}

static int fill_region(struct sk_buff *skb, unsigned long id, bool detail,
		       u32 portid, u32 seq, int flags, u8 cmd)
{
	struct regionpm_region *r = &regionpm.regions[id];
	unsigned long start = regionpm_start_pfn(id), nr = regionpm_pages();
	u8 state = READ_ONCE(r->state);
	struct page *page;
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &regionpm_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	page = pfn_to_online_page(start);
	if (nla_put_u32(skb, REGIONPM_A_REGION_ID, id) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_REGION_START_PFN, start, REGIONPM_A_REGION_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_REGION_SPANNED_PAGES, nr, REGIONPM_A_REGION_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_REGION_MANAGED_PAGES,
			      max(0L, atomic_long_read(&r->managed)), REGIONPM_A_REGION_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_REGION_FREE_PAGES,
			      max(0L, regionpm_region_free(r)), REGIONPM_A_REGION_PAD) ||
	    (page && nla_put_u32(skb, REGIONPM_A_REGION_NODE, page_to_nid(page))) ||
	    put_zones(skb, start, nr) ||
	    nla_put_u32(skb, REGIONPM_A_REGION_STATE, state) ||
	    ((state == REGIONPM_REGION_STATE_PARKED || state == REGIONPM_REGION_STATE_HELD) &&
	     nla_put_u32(skb, REGIONPM_A_REGION_OWNER_PORTID, READ_ONCE(r->owner_portid))) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_REGION_PARKED_PAGES, READ_ONCE(r->parked),
			      REGIONPM_A_REGION_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_REGION_HELD_PAGES, READ_ONCE(r->held),
			      REGIONPM_A_REGION_PAD) ||
	    (detail && put_detail(skb, id))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* Reply to @info with region @id as region-get describes it. */
static int reply_region(struct genl_info *info, unsigned long id, bool detail, u8 cmd)
{
	struct sk_buff *msg = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	int ret;

	if (!msg)
		return -ENOMEM;
	ret = fill_region(msg, id, detail, info->snd_portid, info->snd_seq, 0, cmd);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

int regionpm_nl_region_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	bool detail = nla_get_flag(info->attrs[REGIONPM_A_REGION_SCAN]);
	unsigned long id;
	int ret;

	ret = get_id(info, REGIONPM_A_REGION_ID, &id);
	if (ret)
		return ret;
	return reply_region(info, id, detail, REGIONPM_CMD_REGION_GET);
}

int regionpm_nl_region_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct genl_info *info = genl_info_dump(cb);
	bool detail = nla_get_flag(info->attrs[REGIONPM_A_REGION_SCAN]);
	unsigned long id;
	int ret = 0;

	for (id = cb->args[0]; id < regionpm.nr; id++) {
		if (!regionpm_region_has_memory(id))
			continue;
		ret = fill_region(skb, id, detail, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, NLM_F_MULTI, REGIONPM_CMD_REGION_GET);
		if (ret)
			break;
	}
	cb->args[0] = id;
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret;
}

static int put_compact(struct sk_buff *skb, unsigned long id,
		       const struct regionpm_compact_res *res)
{
	if (nla_put_u32(skb, REGIONPM_A_COMPACT_ID, id) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_COMPACT_SCANNED, res->scanned,
			      REGIONPM_A_COMPACT_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_COMPACT_MIGRATED, res->migrated,
			      REGIONPM_A_COMPACT_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_COMPACT_DROPPED, res->dropped,
			      REGIONPM_A_COMPACT_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_COMPACT_SKIPPED, res->skipped,
			      REGIONPM_A_COMPACT_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_COMPACT_FAILED, res->failed,
			      REGIONPM_A_COMPACT_PAD) ||
	    nla_put_u32(skb, REGIONPM_A_COMPACT_OBSTACLE, res->obstacle) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_COMPACT_OBSTACLE_PFN, res->obstacle_pfn,
			      REGIONPM_A_COMPACT_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_COMPACT_FREE_PAGES, res->free_pages,
			      REGIONPM_A_COMPACT_PAD) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_COMPACT_ELAPSED_NS, res->elapsed_ns,
			      REGIONPM_A_COMPACT_PAD))
		return -EMSGSIZE;
	return 0;
}

static int reply_compact(struct genl_info *info, unsigned long id,
			 const struct regionpm_compact_res *res)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_iput(msg, info);
	if (!hdr || put_compact(msg, id, res)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/* Range, mode and budget of a compact or park request, with defaults. */
static int parse_compact(struct genl_info *info, struct regionpm_compact_req *req)
{
	struct nlattr **tb = info->attrs;
	unsigned long rstart, rend;
	int ret;

	ret = get_id(info, REGIONPM_A_COMPACT_ID, &req->id);
	if (ret)
		return ret;
	rstart = regionpm_start_pfn(req->id);
	rend = rstart + regionpm_pages();
	req->start_pfn = rstart;
	if (tb[REGIONPM_A_COMPACT_START_PFN])
		req->start_pfn = nla_get_u64(tb[REGIONPM_A_COMPACT_START_PFN]);
	req->nr_pages = rend - req->start_pfn;
	if (tb[REGIONPM_A_COMPACT_NR_PAGES])
		req->nr_pages = nla_get_u64(tb[REGIONPM_A_COMPACT_NR_PAGES]);
	if (!IS_ALIGNED(req->start_pfn, pageblock_nr_pages) ||
	    !IS_ALIGNED(req->nr_pages, pageblock_nr_pages) || !req->nr_pages) {
		NL_SET_ERR_MSG_FMT(info->extack,
				   "range must be a non-empty multiple of pageblocks (%lu pages)",
				   (unsigned long)pageblock_nr_pages);
		return -EINVAL;
	}
	if (req->start_pfn < rstart || req->start_pfn >= rend ||
	    req->nr_pages > rend - req->start_pfn) {
		NL_SET_ERR_MSG_FMT(info->extack, "range is outside region %lu [%#lx, %#lx)",
				   req->id, rstart, rend);
		return -ERANGE;
	}
	req->budget = req->nr_pages;
	if (tb[REGIONPM_A_COMPACT_BUDGET]) {
		u64 budget = nla_get_u64(tb[REGIONPM_A_COMPACT_BUDGET]);

		if (!budget) {
			NL_SET_ERR_MSG_ATTR(info->extack, tb[REGIONPM_A_COMPACT_BUDGET],
					    "budget must be positive");
			return -EINVAL;
		}
		if (budget > regionpm_pages()) {
			NL_SET_ERR_MSG_ATTR(info->extack, tb[REGIONPM_A_COMPACT_BUDGET],
					    "budget is larger than a region");
			return -ERANGE;
		}
		req->budget = budget;
	}
	req->mode = REGIONPM_COMPACT_MODE_BOTH;
	if (tb[REGIONPM_A_COMPACT_MODE])
		req->mode = nla_get_u32(tb[REGIONPM_A_COMPACT_MODE]);
	return 0;
}

/* The socket's state: who owns a parked or held region. */
static struct regionpm_sock *caller(struct sk_buff *skb)
{
	return genl_sk_priv_get(&regionpm_nl_family, NETLINK_CB(skb).sk);
}

int regionpm_nl_region_compact_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct regionpm_compact_res res = {};
	struct regionpm_compact_req req;
	struct regionpm_sock *owner;
	int ret;

	ret = parse_compact(info, &req);
	if (ret)
		return ret;
	owner = caller(skb);
	if (IS_ERR(owner))
		return PTR_ERR(owner);
	ret = regionpm_compact(&req, owner, &res, info->extack);
	if (!ret)
		ret = reply_compact(info, req.id, &res);
	return ret;
}

int regionpm_nl_region_park_doit(struct sk_buff *skb, struct genl_info *info)
{
	bool compact_first = nla_get_flag(info->attrs[REGIONPM_A_COMPACT_PARK]);
	struct regionpm_compact_res res = {};
	struct regionpm_compact_req req;
	struct regionpm_sock *owner;
	int ret;

	if (info->attrs[REGIONPM_A_COMPACT_START_PFN] || info->attrs[REGIONPM_A_COMPACT_NR_PAGES]) {
		NL_SET_ERR_MSG(info->extack, "park takes a whole region, not a range");
		return -EINVAL;
	}
	ret = parse_compact(info, &req);
	if (ret)
		return ret;
	owner = caller(skb);
	if (IS_ERR(owner))
		return PTR_ERR(owner);
	ret = regionpm_park(&req, compact_first, owner, info->snd_portid, &res,
			    info->extack);
	if (!ret)
		ret = reply_compact(info, req.id, &res);
	return ret;
}

int regionpm_nl_region_unpark_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct regionpm_sock *owner;
	unsigned long id;
	int ret;

	ret = get_id(info, REGIONPM_A_REGION_ID, &id);
	if (ret)
		return ret;
	owner = caller(skb);
	if (IS_ERR(owner))
		return PTR_ERR(owner);
	return regionpm_unpark(id, owner, info->extack);
}

int regionpm_nl_region_hold_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct regionpm_sock *owner;
	unsigned long id;
	int ret;

	ret = get_id(info, REGIONPM_A_REGION_ID, &id);
	if (ret)
		return ret;
	owner = caller(skb);
	if (IS_ERR(owner))
		return PTR_ERR(owner);
	ret = regionpm_hold(id, owner, info->snd_portid, info->extack);
	if (ret)
		return ret;
	/* The hold stays even if the reply cannot be sent. */
	return reply_region(info, id, false, REGIONPM_CMD_REGION_HOLD);
}

void regionpm_nl_sock_priv_init(struct regionpm_sock *priv)
{
	INIT_LIST_HEAD(&priv->parked);
}

void regionpm_nl_sock_priv_destroy(struct regionpm_sock *priv)
{
	regionpm_release_owner(priv);
}

/* Events may be sent from reclaim (shrinker, OOM): never block for memory. */
static struct sk_buff *event_new(u8 cmd, void **hdr, gfp_t gfp)
{
	struct sk_buff *skb;

	if (!genl_has_listeners(&regionpm_nl_family, &init_net, REGIONPM_NLGRP_EVENTS))
		return NULL;
	skb = genlmsg_new(NLMSG_GOODSIZE, gfp);
	if (!skb)
		return NULL;
	*hdr = genlmsg_put(skb, 0, 0, &regionpm_nl_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(skb);
		return NULL;
	}
	return skb;
}

static void event_send(struct sk_buff *skb, void *hdr, gfp_t gfp)
{
	genlmsg_end(skb, hdr);
	genlmsg_multicast(&regionpm_nl_family, skb, 0, REGIONPM_NLGRP_EVENTS, gfp);
}

void regionpm_nl_notify_alloc(unsigned long id)
{
	struct sk_buff *skb;
	void *hdr;

	skb = event_new(REGIONPM_CMD_REGION_ALLOC_NTF, &hdr, GFP_KERNEL);
	if (!skb)
		return;
	if (nla_put_u32(skb, REGIONPM_A_EVENT_ID, id)) {
		nlmsg_free(skb);
		return;
	}
	event_send(skb, hdr, GFP_KERNEL);
}

void regionpm_nl_notify_release(unsigned long id, enum regionpm_release_reason reason,
				unsigned long pages)
{
	gfp_t gfp = GFP_NOWAIT | __GFP_NOWARN;
	struct sk_buff *skb;
	void *hdr;

	skb = event_new(REGIONPM_CMD_REGION_RELEASE_NTF, &hdr, gfp);
	if (!skb)
		return;
	if (nla_put_u32(skb, REGIONPM_A_EVENT_ID, id) ||
	    nla_put_u32(skb, REGIONPM_A_EVENT_REASON, reason) ||
	    nla_put_u64_64bit(skb, REGIONPM_A_EVENT_PAGES, pages, REGIONPM_A_EVENT_PAD)) {
		nlmsg_free(skb);
		return;
	}
	event_send(skb, hdr, gfp);
}

void regionpm_nl_notify_compact(unsigned long id, const struct regionpm_compact_res *res)
{
	struct sk_buff *skb;
	void *hdr;

	skb = event_new(REGIONPM_CMD_REGION_COMPACT_NTF, &hdr, GFP_KERNEL);
	if (!skb)
		return;
	if (put_compact(skb, id, res)) {
		nlmsg_free(skb);
		return;
	}
	event_send(skb, hdr, GFP_KERNEL);
}

int regionpm_nl_init(void)
{
	return genl_register_family(&regionpm_nl_family);
}
