// SPDX-License-Identifier: GPL-2.0
/*
 * regionpm allocation test interface (CONFIG_REGIONPM_ALLOC_TEST), for the
 * regionpm selftests only: allocations user space cannot make by itself --
 * limited to ZONE_DMA32, or to one node with __GFP_THISNODE -- so a test
 * can check that parked memory comes back where such an allocation needs
 * it, and that the OOM killer is not needed for that.
 *
 *   echo "dma32 -1 4096" > /sys/kernel/debug/regionpm/alloc
 *   echo "any 1 4096" > /sys/kernel/debug/regionpm/alloc
 *   cat /sys/kernel/debug/regionpm/alloc     -> "held N failed M"
 *   echo "block 10 16" > /sys/kernel/debug/regionpm/alloc
 *   echo halve > /sys/kernel/debug/regionpm/alloc
 *   cat /sys/kernel/debug/regionpm/alloc     -> "held N failed M bad B"
 *   echo free > /sys/kernel/debug/regionpm/alloc
 *   echo drain > /sys/kernel/debug/regionpm/alloc
 *   echo "contig 0x48000 512" > /sys/kernel/debug/regionpm/alloc
 *
 * A write asks for that many order-0 pages (GFP_KERNEL, __GFP_RETRY_MAYFAIL
 * so a failure is reported instead of killing a task, plus __GFP_DMA32 or
 * __GFP_THISNODE as asked) and holds them until "free".  Every page held is
 * freed when the file is written "free" and nothing else keeps them: the
 * test must free what it took.
 *
 * "block ORDER COUNT" asks for COUNT unmovable blocks of 2^ORDER pages and
 * checks each one the allocator returns: aligned to its size, no page of it
 * still free in the buddy allocator, no page of it in a block held already.
 * A block that fails is counted as bad (since boot) and never freed: its
 * real size is unknown, so freeing it could only do more harm.  "halve"
 * frees the upper half of every block held, which leaves free blocks of
 * half the size next to allocated ones: the shape in which a claim for a
 * larger block must not take a smaller one (the bias's lowest free
 * pageblock search once did).  "drain" empties every CPU's per-CPU free
 * lists into the buddy allocator: pages freed there are free, but a region
 * breakdown (like /proc/kpageflags) shows them as kernel pages until then,
 * and a test that asks which regions hold kernel pages must not count them.
 *
 * "contig PFN NR" takes the NR pages from PFN with alloc_contig_range(), as
 * virtio-mem does to unplug a sub-block of online memory and hugetlb does
 * for a gigantic page, and holds them until "free".  The range must be
 * online memory of one zone, at most 1 GiB; the write fails with the
 * error alloc_contig_range() returned.
 */
#define pr_fmt(fmt) "regionpm-alloc-test: " fmt

#include <linux/debugfs.h>
#include <linux/gfp.h>
#include <linux/init.h>
#include <linux/list.h>
#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

static DEFINE_MUTEX(test_lock);
static LIST_HEAD(held);		/* pages held, under test_lock */
static LIST_HEAD(blocks);	/* struct held_block, under test_lock */
static LIST_HEAD(ranges);	/* struct held_range, under test_lock */
static unsigned long nr_held, nr_failed, nr_bad;

/* Pages taken with alloc_contig_range(). */
struct held_range {
	struct list_head list;
	unsigned long pfn, nr;
};

#define CONTIG_MAX_PAGES (SZ_1G >> PAGE_SHIFT)

/* A block of 2^order pages; after "halve", its lower half as order-0 pages. */
struct held_block {
	struct list_head list;
	struct page *page;
	unsigned int order;
	bool halved;
};

static unsigned long block_pages(const struct held_block *b)
{
	return b->halved ? 1UL << (b->order - 1) : 1UL << b->order;
}

static void free_held_blocks(void)
{
	struct held_block *b, *tmp;
	unsigned long i;

	list_for_each_entry_safe(b, tmp, &blocks, list) {
		if (b->halved) {
			for (i = 0; i < block_pages(b); i++)
				__free_page(b->page + i);
		} else {
			__free_pages(b->page, b->order);
		}
		nr_held -= block_pages(b);
		list_del(&b->list);
		kfree(b);
		cond_resched();
	}
}

/* Is [@pfn, @pfn + @nr) a block the allocator may hand out, and ours alone? */
static const char *block_wrong(unsigned long pfn, unsigned long nr)
{
	struct held_block *b;
	unsigned long i;

	if (!IS_ALIGNED(pfn, nr))
		return "not aligned to its size";
	for (i = 0; i < nr; i++) {
		if (!pfn_valid(pfn + i))
			return "runs past the memory map";
		if (PageBuddy(pfn_to_page(pfn + i)))
			return "holds pages still free";
	}
	list_for_each_entry(b, &blocks, list) {
		unsigned long start = page_to_pfn(b->page);

		if (pfn < start + block_pages(b) && start < pfn + nr)
			return "overlaps a block held already";
	}
	return NULL;
}

static int alloc_blocks(unsigned int order, unsigned long nr)
{
	gfp_t gfp = GFP_KERNEL | __GFP_RETRY_MAYFAIL | __GFP_NOWARN;
	unsigned long i;

	if (order < 1 || order > MAX_PAGE_ORDER)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		struct held_block *b;
		struct page *page = NULL;
		const char *why;

		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
		b = kzalloc(sizeof(*b), GFP_KERNEL);
		if (b)
			page = alloc_pages(gfp, order);
		if (!page) {
			kfree(b);
			nr_failed++;
			continue;
		}
		why = block_wrong(page_to_pfn(page), 1UL << order);
		if (why) {
			pr_err("order-%u block at pfn %#lx %s: kept, not freed\n",
			       order, page_to_pfn(page), why);
			kfree(b);
			nr_bad++;
			continue;
		}
		b->page = page;
		b->order = order;
		list_add_tail(&b->list, &blocks);
		nr_held += 1UL << order;
	}
	return 0;
}

static void halve_blocks(void)
{
	struct held_block *b;
	unsigned long i, half;

	list_for_each_entry(b, &blocks, list) {
		if (b->halved)
			continue;
		half = 1UL << (b->order - 1);
		split_page(b->page, b->order);
		for (i = half; i < 2 * half; i++)
			__free_page(b->page + i);
		b->halved = true;
		nr_held -= half;
		cond_resched();
	}
	/* Order-0 frees may sit on per-CPU lists: merge them into blocks. */
	drain_all_pages(NULL);
}

static void free_held_ranges(void)
{
	struct held_range *h, *tmp;

	list_for_each_entry_safe(h, tmp, &ranges, list) {
		free_contig_range(h->pfn, h->nr);
		nr_held -= h->nr;
		list_del(&h->list);
		kfree(h);
		cond_resched();
	}
}

/* [@pfn, @pfn + @nr) online, in one zone, and not overlapping a range held. */
static bool contig_range_ok(unsigned long pfn, unsigned long nr)
{
	struct held_range *h;
	struct zone *zone;
	unsigned long i;
	struct page *page;

	if (!nr || nr > CONTIG_MAX_PAGES || pfn + nr < pfn)
		return false;
	page = pfn_to_online_page(pfn);
	if (!page)
		return false;
	zone = page_zone(page);
	for (i = 1; i < nr; i++) {
		page = pfn_to_online_page(pfn + i);
		if (!page || page_zone(page) != zone)
			return false;
	}
	list_for_each_entry(h, &ranges, list)
		if (pfn < h->pfn + h->nr && h->pfn < pfn + nr)
			return false;
	return true;
}

static int alloc_contig(unsigned long pfn, unsigned long nr)
{
	struct held_range *h;
	int ret;

	get_online_mems();
	if (!contig_range_ok(pfn, nr)) {
		put_online_mems();
		return -EINVAL;
	}
	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h) {
		put_online_mems();
		return -ENOMEM;
	}
	/*
	 * The range stays online while it is taken; once taken, its pages
	 * hold a reference, which keeps memory offline away until "free".
	 */
	ret = alloc_contig_range(pfn, pfn + nr, MIGRATE_MOVABLE,
				 GFP_KERNEL | __GFP_NOWARN);
	put_online_mems();
	if (ret) {
		kfree(h);
		nr_failed += nr;
		return ret;
	}
	h->pfn = pfn;
	h->nr = nr;
	list_add_tail(&h->list, &ranges);
	nr_held += nr;
	return 0;
}

static void free_held(void)
{
	struct page *page, *tmp;

	list_for_each_entry_safe(page, tmp, &held, lru) {
		list_del(&page->lru);
		__free_page(page);
		if (!(--nr_held & 1023))
			cond_resched();
	}
	free_held_blocks();
	free_held_ranges();
	nr_held = 0;
	nr_failed = 0;
}

static int alloc_some(const char *zone, int nid, unsigned long nr)
{
	gfp_t gfp = GFP_KERNEL | __GFP_RETRY_MAYFAIL | __GFP_NOWARN;
	unsigned long i;

	if (!strcmp(zone, "dma32"))
		gfp |= __GFP_DMA32;
	else if (strcmp(zone, "any"))
		return -EINVAL;
	if (nid != NUMA_NO_NODE) {
		if (nid < 0 || nid >= MAX_NUMNODES || !node_online(nid))
			return -EINVAL;
		gfp |= __GFP_THISNODE;
	}
	for (i = 0; i < nr; i++) {
		struct page *page;

		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
		page = nid == NUMA_NO_NODE ? alloc_page(gfp) :
		       alloc_pages_node(nid, gfp, 0);
		if (!page) {
			nr_failed++;
			continue;
		}
		list_add(&page->lru, &held);
		nr_held++;
	}
	return 0;
}

static ssize_t alloc_write(struct file *file, const char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	char buf[64], zone[16];
	unsigned long nr, pfn;
	unsigned int order;
	int nid, ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';

	if (mutex_lock_killable(&test_lock))
		return -EINTR;
	if (sysfs_streq(buf, "free")) {
		free_held();
		ret = 0;
	} else if (sysfs_streq(buf, "halve")) {
		halve_blocks();
		ret = 0;
	} else if (sysfs_streq(buf, "drain")) {
		struct zone *zone;

		/* Per zone: drain_all_pages(NULL) skips if a drain is running. */
		for_each_populated_zone(zone)
			drain_all_pages(zone);
		ret = 0;
	} else if (sscanf(buf, "contig %lx %lu", &pfn, &nr) == 2) {
		ret = alloc_contig(pfn, nr);
	} else if (sscanf(buf, "block %u %lu", &order, &nr) == 2) {
		ret = alloc_blocks(order, nr);
	} else if (sscanf(buf, "%15s %d %lu", zone, &nid, &nr) == 3) {
		ret = alloc_some(zone, nid < 0 ? NUMA_NO_NODE : nid, nr);
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&test_lock);
	return ret ? ret : count;
}

static ssize_t alloc_read(struct file *file, char __user *ubuf, size_t count,
			  loff_t *ppos)
{
	char buf[64];
	int len;

	mutex_lock(&test_lock);
	len = scnprintf(buf, sizeof(buf), "held %lu failed %lu bad %lu\n",
			nr_held, nr_failed, nr_bad);
	mutex_unlock(&test_lock);
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static const struct file_operations alloc_fops = {
	.owner = THIS_MODULE,
	.read = alloc_read,
	.write = alloc_write,
	.llseek = default_llseek,
};

static int __init regionpm_alloc_test_init(void)
{
	struct dentry *dir = debugfs_create_dir("regionpm", NULL);

	debugfs_create_file("alloc", 0600, dir, NULL, &alloc_fops);
	return 0;
}
late_initcall(regionpm_alloc_test_init);
