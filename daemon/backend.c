// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Choosing a backend (backend.h): auto takes the regionpm netlink family
 * when the kernel has it, the stock backend otherwise.
 */
#include <errno.h>
#include <string.h>

#include "backend.h"
#include "log.h"

int backend_open(enum rpm_backend_choice want, const char *root, FILE *debug,
		 struct rpm_backend **ret)
{
	int r;

	if (want != RPM_BACKEND_STOCK) {
		r = rpm_backend_netlink.open(ret, root, debug);
		if (r != -ENOENT || want == RPM_BACKEND_NETLINK)
			return r;
		log_info("no regionpm netlink family: using the stock kernel backend");
	}
	r = rpm_backend_stock.probe(root);
	if (r < 0)
		return r;
	return rpm_backend_stock.open(ret, root, debug);
}

void backend_close(struct rpm_backend *b)
{
	if (b)
		b->ops->close(b);
}

static const char *const cap_names[] = {
	"exact occupancy", "events", "migrate", "drop", "park", "kernel release",
	"bias", "budget",
};

const char *backend_cap_name(unsigned cap)
{
	for (unsigned i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
		if (cap == 1u << i)
			return cap_names[i];
	return "?";
}

char *backend_missing(const struct rpm_backend *b, char *buf, size_t len)
{
	unsigned caps = backend_caps(b);
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	for (unsigned i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]) && n < len; i++)
		if (!(caps & (1u << i)))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
					      cap_names[i]);
	return buf;
}
