// SPDX-License-Identifier: GPL-2.0
/*
 * kpageflags-regions: the independent judge.  Counts, per physical region,
 * free pages (buddy or offline), pages holding slab, page tables, reserved
 * memory or the huge zero page (what keeps a region from ever being emptied), other kernel pages
 * (in use, but with no flag of user memory or page cache: vmalloc, kernel
 * stacks, buffers -- also unmovable, though pages waiting on per-CPU free
 * lists look the same), and other used pages, from /proc/kpageflags alone
 * -- not from regionpm's own counters.
 *
 * Bounds on the empty regions: bound-simple = regions - ceil(used / region);
 * bound-tight also counts every region holding slab, page-table or reserved
 * pages as occupied; bound-strict counts regions holding other kernel pages
 * as occupied too.  With -k PAGES, bound-kept is bound-simple with PAGES
 * more in use: the free pages the kernel keeps (its watermarks and lowmem
 * reserves), which no packing can fill without reclaim evicting cache.
 *
 *   kpageflags-regions [-s REGION_BYTES] [-f KPAGEFLAGS] [-m MAX_PFN] [-k PAGES] [-j]
 *
 * Region size defaults to the memory block size.  Output: one line per
 * region with memory (column 7: how many of its unmovable pages are
 * reserved, e.g. the memmap memblock put there at boot or the one a hotplugged
 * block holds itself; column 8: how many of its used pages are hugetlb
 * pages, free pool pages included), then a summary line; -j prints JSON
 * instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KPF_SLAB	7
#define KPF_BUDDY	10
#define KPF_HUGE	17
#define KPF_NOPAGE	20
#define KPF_OFFLINE	23
#define KPF_ZERO_PAGE	24
#define KPF_PGTABLE	26
#define KPF_RESERVED	32
#define KPF_OWNER_PRIVATE 37

/* Flags any page of user memory or page cache carries at least one of. */
#define KPF_USER_MASK	((1ULL << 2) | (1ULL << 3) | (1ULL << 4) | (1ULL << 5) | \
			 (1ULL << 6) | (1ULL << 8) | (1ULL << 11) | (1ULL << 12) | \
			 (1ULL << 13) | (1ULL << 14) | (1ULL << 15) | (1ULL << 16) | \
			 (1ULL << 17) | (1ULL << 18) | (1ULL << 21) | (1ULL << 22))

struct region {
	uint64_t present, free, unmovable, kernel, used;
	uint64_t reserved;	/* of unmovable: reserved (memblock, e.g. the memmap) */
	uint64_t huge;		/* of used: hugetlb pages, in use or free in the pool */
	bool offline;		/* an offline memory block */
};

static uint64_t read_hex_file(const char *path)
{
	FILE *f = fopen(path, "re");
	uint64_t v = 0;

	if (!f || fscanf(f, "%" SCNx64, &v) != 1)
		v = 0;
	if (f)
		fclose(f);
	return v;
}

static uint64_t max_pfn_from_iomem(void)
{
	FILE *f = fopen("/proc/iomem", "re");
	char line[256];
	uint64_t end_max = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		const char *p = line + strspn(line, " ");
		uint64_t s, e;

		/*
		 * Nested entries too: memory a virtio-mem device (or dax/kmem)
		 * added is "System RAM (virtio_mem)" under the device's range.
		 */
		if (!strstr(p, "System RAM"))
			continue;
		if (sscanf(p, "%" SCNx64 "-%" SCNx64, &s, &e) == 2 && e > end_max)
			end_max = e;
	}
	fclose(f);
	return (end_max + 1) / 4096;
}

int main(int argc, char **argv)
{
	const char *path = "/proc/kpageflags";
	uint64_t region_bytes = 0, max_pfn = 0, kept = 0, nr, pfn, buf[4096];
	bool kept_given = false;
	bool json = false;
	struct region *r;
	FILE *f;
	int c;

	while ((c = getopt(argc, argv, "s:f:m:k:j")) != -1) {
		switch (c) {
		case 's': region_bytes = strtoull(optarg, NULL, 0); break;
		case 'f': path = optarg; break;
		case 'm': max_pfn = strtoull(optarg, NULL, 0); break;
		case 'j': json = true; break;
		case 'k': kept = strtoull(optarg, NULL, 0); kept_given = true; break;
		default:
			fprintf(stderr, "usage: %s [-s REGION_BYTES] [-f KPAGEFLAGS] [-m MAX_PFN] [-k PAGES] [-j]\n", argv[0]);
			return 2;
		}
	}
	if (!region_bytes)
		region_bytes = read_hex_file("/sys/devices/system/memory/block_size_bytes");
	if (!max_pfn)
		max_pfn = max_pfn_from_iomem();
	if (!region_bytes || region_bytes % 4096 || !max_pfn) {
		fprintf(stderr, "kpageflags-regions: need a region size and a max pfn\n");
		return 2;
	}
	uint64_t region_pages = region_bytes / 4096;

	nr = (max_pfn + region_pages - 1) / region_pages;
	r = calloc(nr, sizeof(*r));
	f = fopen(path, "re");
	if (!r || !f) {
		fprintf(stderr, "kpageflags-regions: %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (pfn = 0; pfn < max_pfn;) {
		size_t want = max_pfn - pfn < 4096 ? max_pfn - pfn : 4096;
		size_t got = fread(buf, sizeof(buf[0]), want, f);

		if (!got)
			break;
		for (size_t i = 0; i < got; i++, pfn++) {
			uint64_t fl = buf[i];
			struct region *reg = &r[pfn / region_pages];

			if (fl & (1ULL << KPF_NOPAGE))
				continue;
			reg->present++;
			if (fl & ((1ULL << KPF_BUDDY) | (1ULL << KPF_OFFLINE)))
				reg->free++;
			/*
			 * The huge zero page is allocated movable but never
			 * migrates (a daemon test saw its 512 pages block an
			 * isolation): unmovable, like slab.
			 */
			else if (fl & ((1ULL << KPF_SLAB) | (1ULL << KPF_PGTABLE) |
				       (1ULL << KPF_RESERVED) | (1ULL << KPF_ZERO_PAGE))) {
				reg->unmovable++;
				if (fl & (1ULL << KPF_RESERVED))
					reg->reserved++;
			} else if (!(fl & KPF_USER_MASK) && (fl & (1ULL << KPF_OWNER_PRIVATE))) {
				/*
				 * PG_vmemmap_self_hosted: the memmap a hotplugged
				 * block holds itself (memory_hotplug.
				 * memmap_on_memory), there for as long as the
				 * block is.  Like the boot memmap, reserved.
				 */
				reg->unmovable++;
				reg->reserved++;
			} else if (!(fl & KPF_USER_MASK)) {
				reg->kernel++;
			} else {
				reg->used++;
				if (fl & (1ULL << KPF_HUGE))
					reg->huge++;
			}
		}
	}
	fclose(f);

	/*
	 * A memory block taken offline (regionpmd's stock backend, the
	 * offline peer) has no struct pages: all NOPAGE.  It is memory that
	 * can power down, so it counts as a present region, all free, when
	 * regions are memory blocks and sysfs says the block is offline.
	 */
	if (region_bytes == read_hex_file("/sys/devices/system/memory/block_size_bytes")) {
		for (uint64_t i = 0; i < nr; i++) {
			char p[128], st[16] = "";
			FILE *sf;

			if (r[i].present)
				continue;
			snprintf(p, sizeof(p), "/sys/devices/system/memory/memory%" PRIu64 "/state", i);
			sf = fopen(p, "re");
			if (!sf)
				continue;
			if (fgets(st, sizeof(st), sf) && !strncmp(st, "offline", 7)) {
				r[i].present = r[i].free = region_pages;
				r[i].offline = true;
			}
			fclose(sf);
		}
	}

	uint64_t present_regions = 0, empty = 0, with_unmovable = 0, with_kernel = 0;
	uint64_t used = 0, movable_used = 0, strict_used = 0, with_either = 0;

	for (uint64_t i = 0; i < nr; i++) {
		if (!r[i].present)
			continue;
		present_regions++;
		empty += r[i].free == r[i].present;
		with_unmovable += r[i].unmovable > 0;
		with_kernel += r[i].kernel > 0;
		with_either += r[i].unmovable + r[i].kernel > 0;
		used += r[i].unmovable + r[i].kernel + r[i].used;
		/* Best possible: every region without unmovable pages, minus
		 * those the remaining movable pages need once packed. */
		if (!r[i].unmovable)
			movable_used += r[i].kernel + r[i].used;
		if (!r[i].unmovable && !r[i].kernel)
			strict_used += r[i].used;
	}
	uint64_t bound_simple = present_regions - (used + region_pages - 1) / region_pages;
	uint64_t need_kept = (used + kept + region_pages - 1) / region_pages;
	uint64_t bound_kept = present_regions > need_kept ? present_regions - need_kept : 0;
	uint64_t need = (movable_used + region_pages - 1) / region_pages;
	uint64_t bound_tight = present_regions - with_unmovable > need ?
			       present_regions - with_unmovable - need : 0;
	uint64_t need_strict = (strict_used + region_pages - 1) / region_pages;
	uint64_t bound_strict = present_regions - with_either > need_strict ?
				present_regions - with_either - need_strict : 0;

	if (json) {
		printf("{\"region_bytes\": %" PRIu64 ", \"regions\": [", region_bytes);
		for (uint64_t i = 0, first = 1; i < nr; i++) {
			if (!r[i].present)
				continue;
			printf("%s{\"id\": %" PRIu64 ", \"present\": %" PRIu64 ", \"free\": %" PRIu64
			       ", \"unmovable\": %" PRIu64 ", \"kernel\": %" PRIu64 ", \"used\": %" PRIu64
			       ", \"reserved\": %" PRIu64 ", \"huge\": %" PRIu64 ", \"offline\": %s}",
			       first ? "" : ", ", i, r[i].present, r[i].free, r[i].unmovable,
			       r[i].kernel, r[i].used, r[i].reserved, r[i].huge,
			       r[i].offline ? "true" : "false");
			first = 0;
		}
		printf("], \"present_regions\": %" PRIu64 ", \"empty_regions\": %" PRIu64
		       ", \"regions_with_unmovable\": %" PRIu64 ", \"bound_simple\": %" PRIu64
		       ", \"bound_tight\": %" PRIu64 ", \"regions_with_kernel\": %" PRIu64
		       ", \"bound_strict\": %" PRIu64 ", \"bound_kept\": %" PRIu64 "}\n",
		       present_regions, empty, with_unmovable, bound_simple, bound_tight,
		       with_kernel, bound_strict, bound_kept);
		return 0;
	}
	printf("%6s %10s %10s %10s %10s %10s %10s %10s\n", "region", "present", "free",
	       "unmovable", "kernel", "used", "reserved", "huge");
	for (uint64_t i = 0; i < nr; i++)
		if (r[i].present)
			printf("%6" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
			       " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n", i, r[i].present,
			       r[i].free, r[i].unmovable, r[i].kernel, r[i].used, r[i].reserved,
			       r[i].huge);
	printf("regions %" PRIu64 " empty %" PRIu64 " with-unmovable %" PRIu64
	       " bound-simple %" PRIu64 " bound-tight %" PRIu64 " with-kernel %" PRIu64
	       " bound-strict %" PRIu64, present_regions, empty, with_unmovable, bound_simple,
	       bound_tight, with_kernel, bound_strict);
	/* Without -k it would only repeat bound-simple. */
	if (kept_given)
		printf(" bound-kept %" PRIu64, bound_kept);
	printf("\n");
	return 0;
}
