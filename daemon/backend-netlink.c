// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The netlink backend: the regionpm kernel helper through genl.c, one op
 * per request.  Nothing here decides anything.
 */
#include <errno.h>
#include <stdlib.h>

#include "backend.h"

struct backend_netlink {
	struct rpm_backend b;
	struct rpm_genl *g;
};

#define G(b) (((struct backend_netlink *)(b))->g)

static int nl_probe(const char *root)
{
	struct rpm_genl *g;
	int r;

	(void)root;
	r = rpm_genl_open(&g, NULL);
	if (r == 0)
		rpm_genl_close(g);
	return r;
}

static int nl_open(struct rpm_backend **ret, const char *root, FILE *debug)
{
	struct backend_netlink *n = calloc(1, sizeof(*n));
	int r;

	(void)root;
	if (!n)
		return -ENOMEM;
	n->b.ops = &rpm_backend_netlink;
	r = rpm_genl_open(&n->g, debug);
	if (r < 0) {
		free(n);
		return r;
	}
	*ret = &n->b;
	return 0;
}

static void nl_close(struct rpm_backend *b)
{
	rpm_genl_close(G(b));	/* the kernel releases whatever is still ours */
	free(b);
}

static unsigned nl_caps(const struct rpm_backend *b)
{
	(void)b;
	return RPM_CAP_ALL;
}

static int nl_info(struct rpm_backend *b, struct rpm_kernel_info *info)
{
	return rpm_genl_info(G(b), info);
}

static int nl_dump(struct rpm_backend *b, rpm_region_cb cb, void *userdata)
{
	return rpm_genl_dump(G(b), false, cb, userdata);
}

static int nl_region_get(struct rpm_backend *b, uint32_t id, bool scan, struct rpm_region *r)
{
	return rpm_genl_region_get(G(b), id, scan, r);
}

static int nl_compact(struct rpm_backend *b, uint32_t id, uint32_t mode, uint64_t budget,
		      struct rpm_compact_result *res)
{
	return rpm_genl_compact(G(b), id, mode, budget, res);
}

static int nl_park(struct rpm_backend *b, uint32_t id, bool compact_first, uint32_t mode,
		   uint64_t budget, struct rpm_compact_result *res)
{
	return rpm_genl_park(G(b), id, compact_first, mode, budget, res);
}

static int nl_unpark(struct rpm_backend *b, uint32_t id)
{
	return rpm_genl_unpark(G(b), id);
}

static int nl_hold(struct rpm_backend *b, uint32_t id)
{
	return rpm_genl_hold(G(b), id, NULL);
}

static int nl_event_fd(const struct rpm_backend *b)
{
	return rpm_genl_event_fd(((const struct backend_netlink *)b)->g);
}

static int nl_read_events(struct rpm_backend *b, rpm_event_cb cb, void *userdata)
{
	return rpm_genl_read_events(G(b), cb, userdata);
}

static uint32_t nl_owner(const struct rpm_backend *b)
{
	return rpm_genl_portid(((const struct backend_netlink *)b)->g);
}

static const char *nl_error(const struct rpm_backend *b)
{
	return rpm_genl_extack(((const struct backend_netlink *)b)->g);
}

static void nl_set_debug(struct rpm_backend *b, FILE *debug)
{
	rpm_genl_set_debug(G(b), debug);
}

const struct rpm_backend_ops rpm_backend_netlink = {
	.name = "regionpm-netlink",
	.probe = nl_probe,
	.open = nl_open,
	.close = nl_close,
	.caps = nl_caps,
	.info = nl_info,
	.dump = nl_dump,
	.region_get = nl_region_get,
	.compact = nl_compact,
	.park = nl_park,
	.unpark = nl_unpark,
	.hold = nl_hold,
	.event_fd = nl_event_fd,
	.read_events = nl_read_events,
	.owner = nl_owner,
	.error = nl_error,
	.set_debug = nl_set_debug,
};
