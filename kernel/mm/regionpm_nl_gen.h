/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/regionpm.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_REGIONPM_GEN_H
#define _LINUX_REGIONPM_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/linux/regionpm.h>
#include <linux/regionpm.h>

int regionpm_nl_pre_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
			 struct genl_info *info);
int regionpm_nl_pre_dumpit(struct netlink_callback *cb);

int regionpm_nl_info_get_doit(struct sk_buff *skb, struct genl_info *info);
int regionpm_nl_region_get_doit(struct sk_buff *skb, struct genl_info *info);
int regionpm_nl_region_get_dumpit(struct sk_buff *skb,
				  struct netlink_callback *cb);
int regionpm_nl_region_compact_doit(struct sk_buff *skb,
				    struct genl_info *info);
int regionpm_nl_region_park_doit(struct sk_buff *skb, struct genl_info *info);
int regionpm_nl_region_unpark_doit(struct sk_buff *skb, struct genl_info *info);
int regionpm_nl_region_hold_doit(struct sk_buff *skb, struct genl_info *info);

enum {
	REGIONPM_NLGRP_EVENTS,
};

extern struct genl_family regionpm_nl_family;

void regionpm_nl_sock_priv_init(struct regionpm_sock *priv);
void regionpm_nl_sock_priv_destroy(struct regionpm_sock *priv);

#endif /* _LINUX_REGIONPM_GEN_H */
