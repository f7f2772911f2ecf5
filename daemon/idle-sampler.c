// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "idle-sampler.h"
#include "log.h"

#define KPF_LRU		5
#define KPF_ANON	12
#define KPF_NOPAGE	20
#define CHUNK		4096	/* pfns per read, a multiple of 64 */

static int open_at(const char *root, const char *rel, int flags)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s%s", root ? root : "", rel);
	fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int pread_full(int fd, void *buf, size_t len, off_t off, size_t *got)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += n;
	}
	*got = done;
	return 0;
}

/*
 * Walk the range in chunks aligned to 64 pfns.  For each chunk, @fn gets
 * the kpageflags words of the pfns and the matching bitmap words.
 */
static int walk(const char *root, uint64_t start_pfn, uint64_t nr, bool mark,
		struct idle_counts *c)
{
	uint64_t flags[CHUNK], bits[CHUNK / 64];
	uint64_t first = start_pfn & ~63ULL, end = start_pfn + nr, pfn;
	int kfd, bfd, r = 0;

	kfd = open_at(root, "/proc/kpageflags", O_RDONLY);
	if (kfd < 0)
		return kfd;
	bfd = open_at(root, "/sys/kernel/mm/page_idle/bitmap", mark ? O_RDWR : O_RDONLY);
	if (bfd < 0) {
		close(kfd);
		return bfd;
	}
	for (pfn = first; pfn < end; pfn += CHUNK) {
		uint64_t n = end - pfn < CHUNK ? end - pfn : CHUNK, words;
		size_t got;

		n = (n + 63) & ~63ULL;
		words = n / 64;
		r = pread_full(kfd, flags, n * 8, (off_t)pfn * 8, &got);
		if (r < 0)
			break;
		n = got / 8;
		if (!n)
			break;
		if (mark) {
			memset(bits, 0, sizeof(bits));
		} else {
			r = pread_full(bfd, bits, words * 8, (off_t)(pfn / 64) * 8, &got);
			if (r < 0)
				break;
			if (got < words * 8)
				memset((char *)bits + got, 0, words * 8 - got);
		}
		for (uint64_t i = 0; i < n; i++) {
			uint64_t p = pfn + i, f = flags[i];
			bool bit;

			if (p < start_pfn || p >= end)
				continue;
			if ((f & (1ULL << KPF_NOPAGE)) || !(f & (1ULL << KPF_LRU)))
				continue;
			if (mark) {
				bits[i / 64] |= 1ULL << (i % 64);
				c->lru++;
				continue;
			}
			bit = bits[i / 64] & (1ULL << (i % 64));
			if (!bit)
				continue;
			if (f & (1ULL << KPF_ANON))
				c->idle_anon++;
			else
				c->idle_file++;
		}
		if (mark) {
			/* write only words that have a bit: 8-byte writes at 8-byte offsets */
			for (uint64_t w = 0; w < (n + 63) / 64; w++) {
				if (!bits[w])
					continue;
				if (pwrite(bfd, &bits[w], 8, (off_t)(pfn / 64 + w) * 8) != 8) {
					r = -errno;
					goto out;
				}
			}
		}
	}
out:
	close(kfd);
	close(bfd);
	return r;
}

int idle_mark(const char *root, uint64_t start_pfn, uint64_t nr, struct idle_counts *c)
{
	c->lru = 0;
	return walk(root, start_pfn, nr, true, c);
}

int idle_count(const char *root, uint64_t start_pfn, uint64_t nr, struct idle_counts *c)
{
	c->idle_file = c->idle_anon = 0;
	return walk(root, start_pfn, nr, false, c);
}

struct idle_sample {
	sd_event_source *timer;
	char *root;
	uint64_t start_pfn, nr;
	struct idle_counts counts;
	idle_sample_cb cb;
	void *userdata;
};

static void sample_free(struct idle_sample *s)
{
	sd_event_source_disable_unref(s->timer);
	free(s->root);
	free(s);
}

static int on_sample_timer(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct idle_sample *s = userdata;
	int r;

	(void)src;
	(void)usec;
	r = idle_count(s->root, s->start_pfn, s->nr, &s->counts);
	s->cb(s, r, &s->counts, s->userdata);
	sample_free(s);
	return 0;
}

int idle_sample_start(sd_event *e, const char *root, uint64_t start_pfn,
		      uint64_t nr, unsigned sample_sec, idle_sample_cb cb,
		      void *userdata, struct idle_sample **ret)
{
	struct idle_sample *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->root = strdup(root ? root : "");
	s->start_pfn = start_pfn;
	s->nr = nr;
	s->cb = cb;
	s->userdata = userdata;
	if (!s->root) {
		free(s);
		return -ENOMEM;
	}
	r = idle_mark(s->root, start_pfn, nr, &s->counts);
	if (r < 0)
		goto fail;
	r = sd_event_add_time_relative(e, &s->timer, CLOCK_MONOTONIC,
				       (uint64_t)sample_sec * 1000000, 10000,
				       on_sample_timer, s);
	if (r < 0)
		goto fail;
	sd_event_source_set_description(s->timer, "idle-sample");
	if (ret)
		*ret = s;
	return 0;
fail:
	sample_free(s);
	return r;
}

void idle_sample_cancel(struct idle_sample *s)
{
	if (s)
		sample_free(s);
}
