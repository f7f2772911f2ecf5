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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpm-tool.h"

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	++*(unsigned long *)data;
	return MNL_CB_OK;
}

int main(int argc, char **argv)
{
	unsigned long iterations = argc > 1 ? strtoul(argv[1], NULL, 0) : 200, regions = 0, i;
	struct mnl_socket *nl = mnl_socket_open(NETLINK_GENERIC);
	struct timespec t0, t1;
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
	if (rpm_request(nl, family, REGIONPM_CMD_REGION_GET, NLM_F_DUMP, count_cb, &regions, NULL, NULL)) {
		perror("dump");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < iterations; i++) {
		unsigned long n = 0;

		if (rpm_request(nl, family, REGIONPM_CMD_REGION_GET, NLM_F_DUMP, count_cb, &n, NULL, NULL))
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	printf("regions %lu dumps %lu total_ns %.0f ns_per_dump %.0f ns_per_region %.0f\n",
	       regions, iterations, ns, ns / iterations, ns / iterations / regions);
	mnl_socket_close(nl);
	return 0;
}
