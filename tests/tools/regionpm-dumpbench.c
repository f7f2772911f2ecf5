// SPDX-License-Identifier: GPL-2.0
/*
 * regionpm-dumpbench: time full region-get dumps (no detail), to show that
 * their cost is flat per region (the counts are kept by the allocator, a
 * dump walks no pfns).
 *
 *   regionpm-dumpbench [ITERATIONS]
 *
 * Prints: regions, dumps, total ns, ns per dump, ns per region.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/regionpm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char buf[65536];

static int family_attr_cb(const struct nlattr *attr, void *data)
{
	if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_ID &&
	    mnl_attr_validate(attr, MNL_TYPE_U16) >= 0)
		*(int *)data = mnl_attr_get_u16(attr);
	return MNL_CB_OK;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), family_attr_cb, data);
}

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	++*(unsigned long *)data;
	return MNL_CB_OK;
}

static int request(struct mnl_socket *nl, uint16_t type, uint8_t cmd, uint16_t flags,
		   mnl_cb_t cb, void *data, void (*put)(struct nlmsghdr *))
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
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
		put(nlh);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	while ((ret = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		ret = mnl_cb_run(buf, ret, seq, portid, cb, data);
		if (ret <= MNL_CB_STOP)
			break;
	}
	return ret < 0 ? -errno : 0;
}

static void put_family_name(struct nlmsghdr *nlh)
{
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, REGIONPM_FAMILY_NAME);
}

int main(int argc, char **argv)
{
	unsigned long iterations = argc > 1 ? strtoul(argv[1], NULL, 0) : 200, regions = 0, i;
	struct mnl_socket *nl = mnl_socket_open(NETLINK_GENERIC);
	struct timespec t0, t1;
	int family = -1;

	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("netlink");
		return 1;
	}
	if (request(nl, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_ACK, family_cb, &family,
		    put_family_name) || family < 0) {
		fprintf(stderr, "regionpm family not found\n");
		return 1;
	}
	if (request(nl, family, REGIONPM_CMD_REGION_GET, NLM_F_DUMP, count_cb, &regions, NULL)) {
		perror("dump");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < iterations; i++) {
		unsigned long n = 0;

		if (request(nl, family, REGIONPM_CMD_REGION_GET, NLM_F_DUMP, count_cb, &n, NULL))
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	printf("regions %lu dumps %lu total_ns %.0f ns_per_dump %.0f ns_per_region %.0f\n",
	       regions, iterations, ns, ns / iterations, ns / iterations / regions);
	mnl_socket_close(nl);
	return 0;
}
