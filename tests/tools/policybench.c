// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * policybench: how long one policy_decide() pass takes on large hosts.
 *
 *   policybench [regions...]	(default: 1024 4096 16384)
 *
 * Each fixture is a host of N regions of 128 MiB after a fragmenting
 * workload: a mix of full, partly used, empty, pinned (slab) and parked
 * regions, some without a fresh breakdown, page cache with and without
 * idleness samples, drawn from a fixed seed so runs compare.  Every pass
 * starts from the same region array and policy state (the policy marks
 * regions as it plans), so the time is that of a pass with work to plan,
 * not of a converged one.  Prints microseconds per pass: the median and
 * the fastest of many.  A number for the benchmark, not a test: these
 * machines are shared and noisy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../daemon/policy.h"

#define RP		32768ULL	/* pages per region */
#define SEC		1000000ULL
#define T0		(1000 * SEC)
#define MAX_ACTIONS	64

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void fixture(struct rpm_region *r, size_t n, struct rpm_system *sys)
{
	uint64_t free = 0, parked = 0;

	memset(r, 0, n * sizeof(*r));
	for (size_t i = 0; i < n; i++) {
		uint64_t used, roll = next_rand() % 100;

		r[i].id = (uint32_t)i;
		r[i].start_pfn = i * RP;
		r[i].spanned_pages = r[i].managed_pages = RP;
		snprintf(r[i].zones, sizeof(r[i].zones), "%s", i < 32 ? "DMA32" : "Normal");
		r[i].node = (uint32_t)(i * 2 / n);
		if (roll < 10) {		/* parked by us earlier */
			r[i].state = RPM_REGION_PARKED;
			r[i].ours = true;
			r[i].parked_pages = RP;
			r[i].managed_pages = 0;
			r[i].last_vacated = T0 - (next_rand() % 600) * SEC;
			parked += RP;
			continue;
		}
		if (roll < 25)
			used = RP;			/* full */
		else if (roll < 40)
			used = 0;			/* empty */
		else
			used = next_rand() % RP;	/* partly used */
		r[i].free_pages = RP - used;
		free += RP - used;
		r[i].detail.valid = next_rand() % 8 != 0;
		r[i].detail.when = T0 - (next_rand() % 90) * SEC;
		r[i].detail.free = RP - used;
		r[i].detail.file_clean = used / 2;
		r[i].detail.anon = used - used / 2;
		if (next_rand() % 5 == 0)
			r[i].detail.slab = 1 + next_rand() % 64;	/* pinned */
		if (next_rand() % 3 == 0) {
			r[i].idle_valid = true;
			r[i].idle_when = T0 - (next_rand() % 20) * SEC;
			r[i].idle_file_pages = r[i].detail.file_clean / 2;
		}
	}
	*sys = (struct rpm_system) {
		.now = T0,
		.mem_total_pages = n * RP - parked,
		.mem_free_pages = free,
		.mem_available_pages = free + (n * RP - parked - free) / 3,
		.page_size = 4096,
		.vmstat_valid = true,
		.file_pages = (n * RP - parked - free) / 2,
		.max_parked_pct = 80,	/* the kernel's default cap */
	};
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int bench(size_t n)
{
	struct rpm_region *base = calloc(n, sizeof(*base)), *work = calloc(n, sizeof(*work));
	struct rpm_policy_state st0, st;
	struct rpm_policy_config cfg;
	struct rpm_action out[MAX_ACTIONS];
	struct rpm_system sys;
	unsigned runs = n <= 4096 ? 400 : 100;
	uint64_t *t = calloc(runs, sizeof(*t));
	size_t actions = 0;

	if (!base || !work || !t) {
		fprintf(stderr, "policybench: out of memory\n");
		return 1;
	}
	fixture(base, n, &sys);
	policy_config_defaults(&cfg);
	cfg.bias = false;
	policy_state_init(&st0);
	st0.last_pass = T0 - SEC;	/* a second of budget in the bucket */
	for (unsigned i = 0; i < runs; i++) {
		uint64_t t0;

		memcpy(work, base, n * sizeof(*work));
		st = st0;
		t0 = now_ns();
		actions = policy_decide(&cfg, &st, &sys, work, n, out, MAX_ACTIONS);
		t[i] = now_ns() - t0;
	}
	qsort(t, runs, sizeof(*t), cmp_u64);
	printf("policy pass, %6zu regions: median %8.1f us, fastest %8.1f us "
	       "(%u passes; plan: keep %u (%u for the zone cap), targets %u, pinned %u, spare %u; %zu actions)\n",
	       n, t[runs / 2] / 1e3, t[0] / 1e3, runs, st.plan.keep, st.plan.capped, st.plan.targets,
	       st.plan.pinned, st.plan.spare, actions);
	free(base);
	free(work);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	static const size_t def[] = { 1024, 4096, 16384 };
	int rc = 0;

	if (argc > 1) {
		for (int i = 1; i < argc; i++) {
			char *end;
			unsigned long v = strtoul(argv[i], &end, 10);

			if (*end || !v || v > 1u << 22) {
				fprintf(stderr, "policybench: bad region count '%s' (1-4194304)\n", argv[i]);
				return 2;
			}
			rc |= bench(v);
		}
		return rc;
	}
	for (size_t i = 0; i < sizeof(def) / sizeof(def[0]); i++)
		rc |= bench(def[i]);
	return rc;
}
