// SPDX-License-Identifier: GPL-2.0
/*
 * regionpm-releasebench: how long does the kernel take to give parked
 * memory back?  Parks every region it can (compacting first), then closes
 * the socket, which releases them all in the kernel before close() returns
 * (the genl socket-private destructor), and times that close.
 *
 *   regionpm-releasebench
 *
 * Prints one line: regions parked, MiB parked, the time the parks took, the
 * time the release took, and ms per GiB released.  MemTotal before and
 * after is checked: a release that leaves memory out is an error (exit 1).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpm-tool.h"

struct ids {
	unsigned int n;
	unsigned int id[65536];
};

static int region_attr_cb(const struct nlattr *attr, void *data)
{
	struct ids *ids = data;

	if (mnl_attr_get_type(attr) == REGIONPM_A_REGION_ID &&
	    mnl_attr_validate(attr, MNL_TYPE_U32) >= 0 &&
	    ids->n < sizeof(ids->id) / sizeof(ids->id[0]))
		ids->id[ids->n++] = mnl_attr_get_u32(attr);
	return MNL_CB_OK;
}

static int region_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), region_attr_cb, data);
}

/* A park request for the region *@arg, compacting it first. */
static void put_park(struct nlmsghdr *nlh, const void *arg)
{
	mnl_attr_put_u32(nlh, REGIONPM_A_COMPACT_ID, *(const unsigned int *)arg);
	mnl_attr_put(nlh, REGIONPM_A_COMPACT_PARK, 0, NULL);
}

static long memtotal_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

int main(void)
{
	static struct ids ids;
	struct mnl_socket *nl = mnl_socket_open(NETLINK_GENERIC);
	long before, parked, after;
	unsigned int i, nparked = 0;
	double park_ms, release_ms, gib;
	struct timespec t0;
	int family;

	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("netlink");
		return 1;
	}
	family = rpm_family(nl);
	if (family < 0) {
		fprintf(stderr, "regionpm family not found\n");
		return 1;
	}
	if (rpm_request(nl, family, REGIONPM_CMD_REGION_GET, NLM_F_DUMP, region_cb, &ids, NULL, NULL)) {
		perror("dump");
		return 1;
	}
	before = memtotal_kb();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Highest first: the low regions hold the kernel. */
	for (i = ids.n; i-- > 0;)
		if (!rpm_request(nl, family, REGIONPM_CMD_REGION_PARK, NLM_F_ACK, NULL, NULL,
				 put_park, &ids.id[i]))
			nparked++;
	park_ms = ms_since(&t0);
	parked = before - memtotal_kb();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	mnl_socket_close(nl);
	release_ms = ms_since(&t0);
	after = memtotal_kb();
	gib = parked / 1048576.0;
	printf("regions_parked %u parked_mib %ld park_ms %.1f release_ms %.1f release_ms_per_gib %.1f memtotal_back %s\n",
	       nparked, parked / 1024, park_ms, release_ms, gib > 0 ? release_ms / gib : 0.0,
	       after == before ? "yes" : "no");
	return after == before && nparked ? 0 : 1;
}
