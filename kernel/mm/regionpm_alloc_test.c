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
 *   echo free > /sys/kernel/debug/regionpm/alloc
 *
 * A write asks for that many order-0 pages (GFP_KERNEL, __GFP_RETRY_MAYFAIL
 * so a failure is reported instead of killing a task, plus __GFP_DMA32 or
 * __GFP_THISNODE as asked) and holds them until "free".  Every page is freed
 * when the file is written "free" and nothing else keeps them: the test
 * must free what it took.
 */
#define pr_fmt(fmt) "regionpm-alloc-test: " fmt

#include <linux/debugfs.h>
#include <linux/gfp.h>
#include <linux/init.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

static DEFINE_MUTEX(test_lock);
static LIST_HEAD(held);		/* pages held, under test_lock */
static unsigned long nr_held, nr_failed;

static void free_held(void)
{
	struct page *page, *tmp;

	list_for_each_entry_safe(page, tmp, &held, lru) {
		list_del(&page->lru);
		__free_page(page);
		if (!(--nr_held & 1023))
			cond_resched();
	}
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
		struct page *page = nid == NUMA_NO_NODE ? alloc_page(gfp) :
				    alloc_pages_node(nid, gfp, 0);

		if (!page) {
			nr_failed++;
			continue;
		}
		list_add(&page->lru, &held);
		nr_held++;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

static ssize_t alloc_write(struct file *file, const char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	char buf[64], zone[16];
	unsigned long nr;
	int nid, ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';

	mutex_lock(&test_lock);
	if (sysfs_streq(buf, "free")) {
		free_held();
		ret = 0;
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
	len = scnprintf(buf, sizeof(buf), "held %lu failed %lu\n", nr_held, nr_failed);
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
