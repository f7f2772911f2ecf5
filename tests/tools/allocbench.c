// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * allocbench: the page allocator's cost, for comparing kernels and boot
 * options side by side (regionpm off, tracking on, bias on, stock).
 *
 *   allocbench [MiB] [rounds]		(default 256 MiB, 40 rounds)
 *
 * Each round maps MiB of anonymous memory with MAP_POPULATE (the kernel
 * faults every page in: one page allocation each, through the per-CPU
 * lists and the buddy free lists the regionpm hooks sit on) and unmaps it
 * again (every page freed).  Transparent huge pages are off for the
 * process, so every allocation is order 0; a second series with THP on
 * allocates order-9 blocks straight from the buddy lists.  Prints the
 * median and the fastest ns per 4 KiB page of each series, and the
 * mmap/munmap page rate of four processes at once (zone lock contention).
 * A benchmark, not a test: run it on a quiet machine, compare ratios.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One round: ns per 4 KiB page for populate + unmap; < 0 on error. */
static double round_ns(size_t bytes, bool huge)
{
	uint64_t t0 = now_ns();
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (huge ? 0 : MAP_POPULATE), -1, 0);

	if (p == MAP_FAILED)
		return -1;
	if (huge) {
		/* THP needs an aligned, advised range: fault it by touching. */
		madvise(p, bytes, MADV_HUGEPAGE);
		for (size_t off = 0; off < bytes; off += 4096)
			((volatile char *)p)[off] = 1;
	}
	munmap(p, bytes);
	return (double)(now_ns() - t0) / (double)(bytes / 4096);
}

static int series(const char *name, size_t bytes, unsigned rounds, bool huge)
{
	double *v = calloc(rounds, sizeof(*v));

	if (!v)
		return -1;
	prctl(PR_SET_THP_DISABLE, huge ? 0 : 1, 0, 0, 0);
	round_ns(bytes, huge);	/* warm up: page tables, per-CPU lists */
	for (unsigned i = 0; i < rounds; i++) {
		v[i] = round_ns(bytes, huge);
		if (v[i] < 0) {
			fprintf(stderr, "allocbench: mmap of %zu bytes: %s\n", bytes, strerror(errno));
			free(v);
			return -1;
		}
	}
	qsort(v, rounds, sizeof(*v), cmp_double);
	printf("allocbench %s: median %.1f ns/page, fastest %.1f ns/page (%u rounds of %zu MiB)\n",
	       name, v[rounds / 2], v[0], rounds, bytes >> 20);
	free(v);
	return 0;
}

/* Four processes mapping and unmapping at once: pages per second. */
static int parallel(size_t bytes, unsigned rounds)
{
	uint64_t t0 = now_ns();
	unsigned n = 4;

	for (unsigned i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (!pid) {
			prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
			for (unsigned k = 0; k < rounds; k++)
				if (round_ns(bytes / n, false) < 0)
					_exit(1);
			_exit(0);
		}
	}
	for (unsigned i = 0; i < n; i++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			return -1;
	}
	printf("allocbench parallel-4: %.0f pages/s (%u processes, %u rounds of %zu MiB each)\n",
	       (double)(bytes / 4096) * rounds / ((double)(now_ns() - t0) / 1e9), n, rounds,
	       (bytes / n) >> 20);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
	unsigned long rounds = argc > 2 ? strtoul(argv[2], NULL, 10) : 40;
	size_t bytes;

	if (!mib || mib > 65536 || !rounds || rounds > 100000) {
		fprintf(stderr, "usage: allocbench [MiB 1-65536] [rounds 1-100000]\n");
		return 2;
	}
	bytes = (size_t)mib << 20;
	if (series("order-0", bytes, rounds, false) ||
	    series("thp", bytes, rounds, true) ||
	    parallel(bytes, rounds / 2 ? rounds / 2 : 1))
		return 1;
	return 0;
}
