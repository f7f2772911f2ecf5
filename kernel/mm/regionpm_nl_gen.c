// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/regionpm.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "regionpm_nl_gen.h"

#include <uapi/linux/regionpm.h>
#include <linux/regionpm.h>

/* Integer value ranges */
static const struct netlink_range_validation regionpm_a_region_id_range = {
	.max	= S32_MAX,
};

static const struct netlink_range_validation regionpm_a_compact_id_range = {
	.max	= S32_MAX,
};

/* REGIONPM_CMD_REGION_GET - do */
static const struct nla_policy regionpm_region_get_do_nl_policy[REGIONPM_A_REGION_SCAN + 1] = {
	[REGIONPM_A_REGION_ID] = NLA_POLICY_FULL_RANGE(NLA_U32, &regionpm_a_region_id_range),
	[REGIONPM_A_REGION_SCAN] = { .type = NLA_FLAG, },
};

/* REGIONPM_CMD_REGION_GET - dump */
static const struct nla_policy regionpm_region_get_dump_nl_policy[REGIONPM_A_REGION_SCAN + 1] = {
	[REGIONPM_A_REGION_SCAN] = { .type = NLA_FLAG, },
};

/* REGIONPM_CMD_REGION_COMPACT - do */
static const struct nla_policy regionpm_region_compact_nl_policy[REGIONPM_A_COMPACT_BUDGET + 1] = {
	[REGIONPM_A_COMPACT_ID] = NLA_POLICY_FULL_RANGE(NLA_U32, &regionpm_a_compact_id_range),
	[REGIONPM_A_COMPACT_START_PFN] = { .type = NLA_U64, },
	[REGIONPM_A_COMPACT_NR_PAGES] = { .type = NLA_U64, },
	[REGIONPM_A_COMPACT_MODE] = NLA_POLICY_MAX(NLA_U32, 2),
	[REGIONPM_A_COMPACT_BUDGET] = { .type = NLA_U64, },
};

/* REGIONPM_CMD_REGION_PARK - do */
static const struct nla_policy regionpm_region_park_nl_policy[REGIONPM_A_COMPACT_PARK + 1] = {
	[REGIONPM_A_COMPACT_ID] = NLA_POLICY_FULL_RANGE(NLA_U32, &regionpm_a_compact_id_range),
	[REGIONPM_A_COMPACT_MODE] = NLA_POLICY_MAX(NLA_U32, 2),
	[REGIONPM_A_COMPACT_BUDGET] = { .type = NLA_U64, },
	[REGIONPM_A_COMPACT_PARK] = { .type = NLA_FLAG, },
};

/* REGIONPM_CMD_REGION_UNPARK - do */
static const struct nla_policy regionpm_region_unpark_nl_policy[REGIONPM_A_REGION_ID + 1] = {
	[REGIONPM_A_REGION_ID] = NLA_POLICY_FULL_RANGE(NLA_U32, &regionpm_a_region_id_range),
};

/* REGIONPM_CMD_REGION_HOLD - do */
static const struct nla_policy regionpm_region_hold_nl_policy[REGIONPM_A_REGION_ID + 1] = {
	[REGIONPM_A_REGION_ID] = NLA_POLICY_FULL_RANGE(NLA_U32, &regionpm_a_region_id_range),
};

/* Ops table for regionpm */
static const struct genl_split_ops regionpm_nl_ops[] = {
	{
		.cmd		= REGIONPM_CMD_INFO_GET,
		.pre_doit	= regionpm_nl_pre_doit,
		.doit		= regionpm_nl_info_get_doit,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= REGIONPM_CMD_REGION_GET,
		.pre_doit	= regionpm_nl_pre_doit,
		.doit		= regionpm_nl_region_get_doit,
		.policy		= regionpm_region_get_do_nl_policy,
		.maxattr	= REGIONPM_A_REGION_SCAN,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= REGIONPM_CMD_REGION_GET,
		.start		= regionpm_nl_pre_dumpit,
		.dumpit		= regionpm_nl_region_get_dumpit,
		.policy		= regionpm_region_get_dump_nl_policy,
		.maxattr	= REGIONPM_A_REGION_SCAN,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= REGIONPM_CMD_REGION_COMPACT,
		.pre_doit	= regionpm_nl_pre_doit,
		.doit		= regionpm_nl_region_compact_doit,
		.policy		= regionpm_region_compact_nl_policy,
		.maxattr	= REGIONPM_A_COMPACT_BUDGET,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= REGIONPM_CMD_REGION_PARK,
		.pre_doit	= regionpm_nl_pre_doit,
		.doit		= regionpm_nl_region_park_doit,
		.policy		= regionpm_region_park_nl_policy,
		.maxattr	= REGIONPM_A_COMPACT_PARK,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= REGIONPM_CMD_REGION_UNPARK,
		.pre_doit	= regionpm_nl_pre_doit,
		.doit		= regionpm_nl_region_unpark_doit,
		.policy		= regionpm_region_unpark_nl_policy,
		.maxattr	= REGIONPM_A_REGION_ID,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= REGIONPM_CMD_REGION_HOLD,
		.pre_doit	= regionpm_nl_pre_doit,
		.doit		= regionpm_nl_region_hold_doit,
		.policy		= regionpm_region_hold_nl_policy,
		.maxattr	= REGIONPM_A_REGION_ID,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
};

static const struct genl_multicast_group regionpm_nl_mcgrps[] = {
	[REGIONPM_NLGRP_EVENTS] = {
		.name = "events",
		.flags = GENL_MCAST_CAP_NET_ADMIN | GENL_MCAST_CAP_SYS_ADMIN,
	},
};

static void __regionpm_nl_sock_priv_init(void *priv)
{
	regionpm_nl_sock_priv_init(priv);
}

static void __regionpm_nl_sock_priv_destroy(void *priv)
{
	regionpm_nl_sock_priv_destroy(priv);
}

struct genl_family regionpm_nl_family __ro_after_init = {
	.name		= REGIONPM_FAMILY_NAME,
	.version	= REGIONPM_FAMILY_VERSION,
	.netnsok	= false,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.split_ops	= regionpm_nl_ops,
	.n_split_ops	= ARRAY_SIZE(regionpm_nl_ops),
	.mcgrps		= regionpm_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(regionpm_nl_mcgrps),
	.sock_priv_size	= sizeof(struct regionpm_sock),
	.sock_priv_init	= __regionpm_nl_sock_priv_init,
	.sock_priv_destroy = __regionpm_nl_sock_priv_destroy,
};
