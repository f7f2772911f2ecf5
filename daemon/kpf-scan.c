// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /proc/kpageflags scan of a physical range (kpf-scan.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kpf-scan.h"

/* include/uapi/linux/kernel-page-flags.h */
#define KPF_DIRTY	4
#define KPF_LRU		5
#define KPF_SLAB	7
#define KPF_WRITEBACK	8
#define KPF_BUDDY	10
#define KPF_MMAP	11
#define KPF_ANON	12
#define KPF_SWAPBACKED	14
#define KPF_HUGE	17
#define KPF_UNEVICTABLE	18
#define KPF_NOPAGE	20
#define KPF_THP		22
#define KPF_OFFLINE	23
#define KPF_PGTABLE	26
#define KPF_RESERVED	32

#define B(bit)		(1ULL << (bit))

void kpf_classify(const uint64_t *flags, size_t n, struct rpm_region_detail *d,
		  uint64_t *present)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t f = flags[i];

		if (f & B(KPF_NOPAGE))
			continue;
		(*present)++;
		if (f & B(KPF_THP))
			d->huge++;	/* counted again below by its kind */
		if (f & B(KPF_BUDDY))
			d->free++;
		else if (f & B(KPF_OFFLINE))
			d->offline++;
		else if (f & B(KPF_SLAB))
			d->slab++;
		else if (f & B(KPF_PGTABLE))
			d->page_table++;
		else if (f & B(KPF_RESERVED))
			d->reserved++;
		else if (f & B(KPF_HUGE))
			d->unevictable++;	/* hugetlb: not migrated by offline here */
		else if (f & B(KPF_UNEVICTABLE))
			d->unevictable++;
		else if (f & B(KPF_ANON))
			d->anon++;
		else if (f & B(KPF_SWAPBACKED))
			d->shmem++;
		else if (f & B(KPF_WRITEBACK))
			d->writeback++;
		else if (f & B(KPF_DIRTY))
			d->file_dirty++;
		else if (f & (B(KPF_LRU) | B(KPF_MMAP)))
			d->file_clean++;
		else
			d->kernel_other++;
	}
}

int kpf_scan(const char *root, uint64_t start_pfn, uint64_t n,
	     struct rpm_region_detail *d, uint64_t *present)
{
	uint64_t buf[4096];
	char path[PATH_MAX];
	int fd, r = 0;

	memset(d, 0, sizeof(*d));
	*present = 0;
	snprintf(path, sizeof(path), "%s" RPM_PROC_KPAGEFLAGS, root ? root : "");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (uint64_t pfn = start_pfn; pfn < start_pfn + n;) {
		uint64_t left = start_pfn + n - pfn;
		size_t want = left < 4096 ? (size_t)left : 4096;
		ssize_t got = pread(fd, buf, want * 8, (off_t)(pfn * 8));

		if (got < 0) {
			r = -errno;
			break;
		}
		if (got < 8)
			break;		/* past the end: no pages there */
		kpf_classify(buf, (size_t)got / 8, d, present);
		pfn += (uint64_t)got / 8;
	}
	close(fd);
	if (r == 0)
		d->valid = true;
	return r;
}
