/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The little generic netlink client the regionpm benchmark tools share:
 * one request with an optional attribute writer, its replies run through
 * a libmnl callback, and the family id looked up by name.
 */
#ifndef RPM_TOOL_H
#define RPM_TOOL_H

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/regionpm.h>
#include <time.h>

static char rpm_buf[65536];

/* Adds the request's attributes; @arg is what the caller passed. */
typedef void (*rpm_put_t)(struct nlmsghdr *nlh, const void *arg);

/* Send one request and run every reply through @cb; 0 or -errno. */
static int rpm_request(struct mnl_socket *nl, uint16_t type, uint8_t cmd, uint16_t flags,
		       mnl_cb_t cb, void *data, rpm_put_t put, const void *arg)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(rpm_buf);
	struct genlmsghdr *g;
	unsigned int seq = time(NULL), portid = mnl_socket_get_portid(nl);
	int ret;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = 1;
	if (put)
		put(nlh, arg);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	while ((ret = mnl_socket_recvfrom(nl, rpm_buf, sizeof(rpm_buf))) > 0) {
		ret = mnl_cb_run(rpm_buf, ret, seq, portid, cb, data);
		if (ret <= MNL_CB_STOP)
			break;
	}
	return ret < 0 ? -errno : 0;
}

static int rpm_family_attr_cb(const struct nlattr *attr, void *data)
{
	if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_ID &&
	    mnl_attr_validate(attr, MNL_TYPE_U16) >= 0)
		*(int *)data = mnl_attr_get_u16(attr);
	return MNL_CB_OK;
}

static int rpm_family_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), rpm_family_attr_cb, data);
}

static void rpm_put_family_name(struct nlmsghdr *nlh, const void *arg)
{
	(void)arg;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, REGIONPM_FAMILY_NAME);
}

/* The regionpm family id, or -1. */
static int rpm_family(struct mnl_socket *nl)
{
	int family = -1;

	if (rpm_request(nl, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_ACK, rpm_family_cb,
			&family, rpm_put_family_name, NULL))
		return -1;
	return family;
}

#endif /* RPM_TOOL_H */
