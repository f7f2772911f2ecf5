// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of regionpmd's netlink message parsers with hand-built
 * messages: valid replies, truncated messages, wrong attribute types,
 * attributes and events newer than the client, missing mandatory
 * attributes, extended ACKs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/regionpm.h>

#include "genl.h"

static char buf[8192] __attribute__((aligned(8)));

static struct nlmsghdr *msg(uint8_t cmd)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *gh;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = 0x20;
	gh = mnl_nlmsg_put_extra_header(nlh, sizeof(*gh));
	gh->cmd = cmd;
	gh->version = 1;
	return nlh;
}

static struct nlmsghdr *info_msg(bool with_count)
{
	struct nlmsghdr *nlh = msg(REGIONPM_CMD_INFO_GET);

	mnl_attr_put_u64(nlh, REGIONPM_A_INFO_REGION_SIZE, 128 << 20);
	if (with_count)
		mnl_attr_put_u32(nlh, REGIONPM_A_INFO_REGION_COUNT, 16);
	mnl_attr_put_u8(nlh, REGIONPM_A_INFO_BIAS, 1);
	mnl_attr_put_u32(nlh, REGIONPM_A_INFO_FRONTIER, 5);
	mnl_attr_put_u64(nlh, REGIONPM_A_INFO_PARKED_PAGES, 32768);
	return nlh;
}

static void test_info_valid(void **state)
{
	struct rpm_kernel_info info;

	(void)state;
	assert_int_equal(rpm_parse_info(info_msg(true), &info), 0);
	assert_int_equal(info.region_size, 128 << 20);
	assert_int_equal(info.region_count, 16);
	assert_true(info.bias);
	assert_int_equal(info.frontier, 5);
	assert_int_equal(info.parked_pages, 32768);
}

static void test_info_missing(void **state)
{
	struct rpm_kernel_info info;

	(void)state;
	assert_int_equal(rpm_parse_info(info_msg(false), &info), -EBADMSG);
}

static void test_info_wrong_type(void **state)
{
	struct nlmsghdr *nlh = msg(REGIONPM_CMD_INFO_GET);
	struct rpm_kernel_info info;

	(void)state;
	mnl_attr_put_u64(nlh, REGIONPM_A_INFO_REGION_SIZE, 128 << 20);
	mnl_attr_put_u64(nlh, REGIONPM_A_INFO_REGION_COUNT, 16);	/* u32 expected */
	assert_int_equal(rpm_parse_info(nlh, &info), -EBADMSG);

	nlh = msg(REGIONPM_CMD_INFO_GET);
	mnl_attr_put_u32(nlh, REGIONPM_A_INFO_REGION_SIZE, 1);		/* u64 expected */
	mnl_attr_put_u32(nlh, REGIONPM_A_INFO_REGION_COUNT, 16);
	assert_int_equal(rpm_parse_info(nlh, &info), -EBADMSG);
}

static void test_info_newer_attrs_skipped(void **state)
{
	struct nlmsghdr *nlh = info_msg(true);
	struct rpm_kernel_info info;

	(void)state;
	/* attributes a newer kernel may add, of any size */
	mnl_attr_put_strz(nlh, REGIONPM_A_INFO_MAX + 1, "something new");
	mnl_attr_put_u64(nlh, REGIONPM_A_INFO_MAX + 7, 42);
	assert_int_equal(rpm_parse_info(nlh, &info), 0);
	assert_int_equal(info.region_count, 16);
}

static void test_info_truncated(void **state)
{
	struct nlmsghdr *nlh = info_msg(true);
	struct rpm_kernel_info info;

	(void)state;
	/* cut the last attribute in half */
	nlh->nlmsg_len -= 6;
	assert_int_equal(rpm_parse_info(nlh, &info), -EBADMSG);
	/* shorter than the genl header */
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + 2;
	assert_int_equal(rpm_parse_info(nlh, &info), -EBADMSG);
	/* an attribute claiming more than there is */
	nlh = info_msg(true);
	{
		struct nlattr *a = mnl_nlmsg_get_payload_offset(nlh, GENL_HDRLEN);

		a->nla_len = 4000;
	}
	assert_int_equal(rpm_parse_info(nlh, &info), -EBADMSG);
}

static struct nlmsghdr *region_msg(bool with_state, bool with_detail)
{
	struct nlmsghdr *nlh = msg(REGIONPM_CMD_REGION_GET);

	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_ID, 3);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_START_PFN, 3 * 32768);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_SPANNED_PAGES, 32768);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_MANAGED_PAGES, 32000);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_FREE_PAGES, 1000);
	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_NODE, 0);
	mnl_attr_put_strz(nlh, REGIONPM_A_REGION_ZONE, "DMA");
	mnl_attr_put_strz(nlh, REGIONPM_A_REGION_ZONE, "DMA32");
	if (with_state)
		mnl_attr_put_u32(nlh, REGIONPM_A_REGION_STATE, REGIONPM_REGION_STATE_PARKED);
	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_OWNER_PORTID, 1234);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_PARKED_PAGES, 77);
	if (with_detail) {
		struct nlattr *n = mnl_attr_nest_start(nlh, REGIONPM_A_REGION_DETAIL);

		mnl_attr_put_u64(nlh, REGIONPM_A_DETAIL_FREE, 1000);
		mnl_attr_put_u64(nlh, REGIONPM_A_DETAIL_ANON, 200);
		mnl_attr_put_u64(nlh, REGIONPM_A_DETAIL_FILE_CLEAN, 300);
		mnl_attr_put_u64(nlh, REGIONPM_A_DETAIL_SLAB, 4);
		mnl_attr_put_u64(nlh, REGIONPM_A_DETAIL_HUGE, 512);
		mnl_attr_put_u64(nlh, REGIONPM_A_DETAIL_MAX + 3, 9);	/* newer: skipped */
		mnl_attr_nest_end(nlh, n);
	}
	return nlh;
}

static void test_region_valid(void **state)
{
	struct rpm_region r;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.ours = true;		/* the daemon view survives */
	assert_int_equal(rpm_parse_region(region_msg(true, true), &r), 0);
	assert_int_equal(r.id, 3);
	assert_int_equal(r.start_pfn, 3 * 32768);
	assert_int_equal(r.spanned_pages, 32768);
	assert_int_equal(r.managed_pages, 32000);
	assert_int_equal(r.free_pages, 1000);
	assert_int_equal(r.state, RPM_REGION_PARKED);
	assert_int_equal(r.owner_portid, 1234);
	assert_int_equal(r.parked_pages, 77);
	assert_string_equal(r.zones, "DMA,DMA32");
	assert_true(r.detail.valid);
	assert_int_equal(r.detail.anon, 200);
	assert_int_equal(r.detail.file_clean, 300);
	assert_int_equal(r.detail.slab, 4);
	assert_int_equal(r.detail.huge, 512);
	assert_int_equal(r.detail.shmem, 0);
	assert_true(r.ours);
}

static void test_region_no_detail_keeps_old(void **state)
{
	struct rpm_region r;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(rpm_parse_region(region_msg(true, true), &r), 0);
	assert_int_equal(rpm_parse_region(region_msg(true, false), &r), 0);
	/* a dump without scan does not wipe the last scan */
	assert_true(r.detail.valid);
	assert_int_equal(r.detail.anon, 200);
}

static void test_region_held(void **state)
{
	struct nlmsghdr *nlh = msg(REGIONPM_CMD_REGION_HOLD);
	struct rpm_region r;

	(void)state;
	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_ID, 5);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_START_PFN, 5 * 32768);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_SPANNED_PAGES, 32768);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_MANAGED_PAGES, 32768);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_FREE_PAGES, 30000);
	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_STATE, REGIONPM_REGION_STATE_HELD);
	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_OWNER_PORTID, 4321);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_PARKED_PAGES, 0);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_HELD_PAGES, 32256);
	memset(&r, 0, sizeof(r));
	assert_int_equal(rpm_parse_region(nlh, &r), 0);
	assert_int_equal(RPM_REGION_HELD, 3);
	assert_int_equal(r.state, RPM_REGION_HELD);
	assert_int_equal(r.owner_portid, 4321);
	assert_int_equal(r.held_pages, 32256);
	assert_int_equal(r.parked_pages, 0);

	/* held-pages as u32: a malformed reply */
	nlh = msg(REGIONPM_CMD_REGION_HOLD);
	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_ID, 5);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_START_PFN, 5 * 32768);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_SPANNED_PAGES, 32768);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_MANAGED_PAGES, 32768);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_FREE_PAGES, 30000);
	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_STATE, REGIONPM_REGION_STATE_HELD);
	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_HELD_PAGES, 1);
	assert_int_equal(rpm_parse_region(nlh, &r), -EBADMSG);
}

/* A state newer than the client: busy, i.e. left alone. */
static void test_region_unknown_state(void **state)
{
	struct nlmsghdr *nlh = msg(REGIONPM_CMD_REGION_GET);
	struct rpm_region r;

	(void)state;
	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_ID, 1);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_START_PFN, 32768);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_SPANNED_PAGES, 32768);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_MANAGED_PAGES, 32768);
	mnl_attr_put_u64(nlh, REGIONPM_A_REGION_FREE_PAGES, 0);
	mnl_attr_put_u32(nlh, REGIONPM_A_REGION_STATE, REGIONPM_REGION_STATE_HELD + 7);
	memset(&r, 0, sizeof(r));
	assert_int_equal(rpm_parse_region(nlh, &r), 0);
	assert_int_equal(r.state, RPM_REGION_BUSY);
	assert_int_equal(r.held_pages, 0);
}

static void test_region_missing_state(void **state)
{
	struct rpm_region r;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(rpm_parse_region(region_msg(false, false), &r), -EBADMSG);
}

static void test_region_bad_zone(void **state)
{
	struct nlmsghdr *nlh = region_msg(true, false);
	struct rpm_region r;

	(void)state;
	/* a zone name without its NUL */
	mnl_attr_put(nlh, REGIONPM_A_REGION_ZONE, 6, "Normal");
	assert_int_equal(rpm_parse_region(nlh, &r), -EBADMSG);
}

static void test_region_bad_detail(void **state)
{
	struct nlmsghdr *nlh = region_msg(true, false);
	struct nlattr *n;
	struct rpm_region r;

	(void)state;
	n = mnl_attr_nest_start(nlh, REGIONPM_A_REGION_DETAIL);
	mnl_attr_put_u32(nlh, REGIONPM_A_DETAIL_ANON, 5);	/* u64 expected */
	mnl_attr_nest_end(nlh, n);
	memset(&r, 0, sizeof(r));
	assert_int_equal(rpm_parse_region(nlh, &r), -EBADMSG);
	assert_false(r.detail.valid);
}

static void test_region_truncated(void **state)
{
	struct nlmsghdr *nlh = region_msg(true, true);
	struct rpm_region r;

	(void)state;
	nlh->nlmsg_len -= 2;	/* last attr of the nest cut: the nest overruns */
	assert_int_equal(rpm_parse_region(nlh, &r), -EBADMSG);
}

static struct nlmsghdr *compact_msg(uint8_t cmd, bool with_migrated)
{
	struct nlmsghdr *nlh = msg(cmd);

	mnl_attr_put_u32(nlh, REGIONPM_A_COMPACT_ID, 9);
	mnl_attr_put_u64(nlh, REGIONPM_A_COMPACT_SCANNED, 32768);
	if (with_migrated)
		mnl_attr_put_u64(nlh, REGIONPM_A_COMPACT_MIGRATED, 100);
	mnl_attr_put_u64(nlh, REGIONPM_A_COMPACT_DROPPED, 200);
	mnl_attr_put_u64(nlh, REGIONPM_A_COMPACT_SKIPPED, 3);
	mnl_attr_put_u64(nlh, REGIONPM_A_COMPACT_FAILED, 1);
	mnl_attr_put_u32(nlh, REGIONPM_A_COMPACT_OBSTACLE, REGIONPM_OBSTACLE_PINNED);
	mnl_attr_put_u64(nlh, REGIONPM_A_COMPACT_OBSTACLE_PFN, 0x48000);
	mnl_attr_put_u64(nlh, REGIONPM_A_COMPACT_FREE_PAGES, 32764);
	mnl_attr_put_u64(nlh, REGIONPM_A_COMPACT_ELAPSED_NS, 123456);
	mnl_attr_put_u32(nlh, REGIONPM_A_COMPACT_MAX + 1, 7);	/* newer */
	return nlh;
}

static void test_compact_valid(void **state)
{
	struct rpm_compact_result res;

	(void)state;
	assert_int_equal(rpm_parse_compact(compact_msg(REGIONPM_CMD_REGION_COMPACT, true), &res), 0);
	assert_int_equal(res.id, 9);
	assert_int_equal(res.scanned, 32768);
	assert_int_equal(res.migrated, 100);
	assert_int_equal(res.dropped, 200);
	assert_int_equal(res.skipped, 3);
	assert_int_equal(res.failed, 1);
	assert_int_equal(res.obstacle, REGIONPM_OBSTACLE_PINNED);
	assert_string_equal(rpm_obstacle_name(res.obstacle), "pinned");
	assert_int_equal(res.obstacle_pfn, 0x48000);
	assert_int_equal(res.free_pages, 32764);
	assert_int_equal(res.elapsed_ns, 123456);
}

static void test_compact_missing(void **state)
{
	struct rpm_compact_result res;

	(void)state;
	assert_int_equal(rpm_parse_compact(compact_msg(REGIONPM_CMD_REGION_COMPACT, false), &res),
			 -EBADMSG);
}

static void test_events(void **state)
{
	struct nlmsghdr *nlh;
	struct rpm_event ev;

	(void)state;
	nlh = msg(REGIONPM_CMD_REGION_ALLOC_NTF);
	mnl_attr_put_u32(nlh, REGIONPM_A_EVENT_ID, 11);
	assert_int_equal(rpm_parse_event(nlh, &ev), 0);
	assert_int_equal(ev.kind, RPM_EVENT_ALLOC);
	assert_int_equal(ev.id, 11);

	nlh = msg(REGIONPM_CMD_REGION_RELEASE_NTF);
	mnl_attr_put_u32(nlh, REGIONPM_A_EVENT_ID, 12);
	mnl_attr_put_u32(nlh, REGIONPM_A_EVENT_REASON, REGIONPM_RELEASE_REASON_SHRINKER);
	mnl_attr_put_u64(nlh, REGIONPM_A_EVENT_PAGES, 32768);
	mnl_attr_put_u64(nlh, REGIONPM_A_EVENT_MAX + 1, 1);
	assert_int_equal(rpm_parse_event(nlh, &ev), 0);
	assert_int_equal(ev.kind, RPM_EVENT_RELEASE);
	assert_int_equal(ev.id, 12);
	assert_string_equal(rpm_release_reason_name(ev.reason), "shrinker");
	assert_int_equal(ev.pages, 32768);

	nlh = msg(REGIONPM_CMD_REGION_RELEASE_NTF);	/* reason is mandatory */
	mnl_attr_put_u32(nlh, REGIONPM_A_EVENT_ID, 12);
	assert_int_equal(rpm_parse_event(nlh, &ev), -EBADMSG);

	nlh = msg(REGIONPM_CMD_REGION_ALLOC_NTF);	/* id is mandatory */
	assert_int_equal(rpm_parse_event(nlh, &ev), -EBADMSG);

	nlh = msg(REGIONPM_CMD_REGION_ALLOC_NTF);	/* wrong type */
	mnl_attr_put_u16(nlh, REGIONPM_A_EVENT_ID, 11);
	assert_int_equal(rpm_parse_event(nlh, &ev), -EBADMSG);

	assert_int_equal(rpm_parse_event(compact_msg(REGIONPM_CMD_REGION_COMPACT_NTF, true), &ev), 0);
	assert_int_equal(ev.kind, RPM_EVENT_COMPACT);
	assert_int_equal(ev.id, 9);
	assert_int_equal(ev.compact.dropped, 200);

	nlh = msg(REGIONPM_CMD_MAX + 1);		/* an event newer than us */
	mnl_attr_put_u32(nlh, REGIONPM_A_EVENT_ID, 11);
	assert_int_equal(rpm_parse_event(nlh, &ev), -EOPNOTSUPP);
}

static struct nlmsghdr *ack_msg(int error, const char *text, bool capped)
{
	struct nlmsghdr *nlh, *orig;
	struct nlmsgerr *e;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NLMSG_ERROR;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = error;
	e->msg.nlmsg_len = sizeof(struct nlmsghdr) + GENL_HDRLEN + 8;
	if (capped) {
		nlh->nlmsg_flags |= NLM_F_CAPPED;
	} else {
		/* the original request follows the nlmsgerr */
		orig = mnl_nlmsg_put_extra_header(nlh, e->msg.nlmsg_len - sizeof(struct nlmsghdr));
		memset(orig, 0xaa, e->msg.nlmsg_len - sizeof(struct nlmsghdr));
	}
	if (text) {
		nlh->nlmsg_flags |= NLM_F_ACK_TLVS;
		mnl_attr_put_u32(nlh, NLMSGERR_ATTR_OFFS, 20);
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, text);
	}
	return nlh;
}

static void test_ack(void **state)
{
	char m[64];

	(void)state;
	assert_int_equal(rpm_parse_ack(ack_msg(0, NULL, true), m, sizeof(m)), 0);
	assert_string_equal(m, "");
	assert_int_equal(rpm_parse_ack(ack_msg(-EBUSY, "region has 12 pages in use", true),
				       m, sizeof(m)), -EBUSY);
	assert_string_equal(m, "region has 12 pages in use");
	assert_int_equal(rpm_parse_ack(ack_msg(-EINVAL, "budget is 0", false), m, sizeof(m)),
			 -EINVAL);
	assert_string_equal(m, "budget is 0");
	/* a warning on success */
	assert_int_equal(rpm_parse_ack(ack_msg(0, "obstacle: slab at pfn 0x1000", true),
				       m, sizeof(m)), 0);
	assert_string_equal(m, "obstacle: slab at pfn 0x1000");
	/* truncated */
	{
		struct nlmsghdr *nlh = ack_msg(-EBUSY, NULL, true);

		nlh->nlmsg_len = MNL_NLMSG_HDRLEN + 2;
		assert_int_equal(rpm_parse_ack(nlh, m, sizeof(m)), -EBADMSG);
	}
}

static void test_ctrl(void **state)
{
	struct nlmsghdr *nlh = msg(CTRL_CMD_NEWFAMILY);
	struct nlattr *grps, *g;
	uint16_t fam = 0;
	uint32_t grp = 0;

	(void)state;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, "regionpm");
	mnl_attr_put_u16(nlh, CTRL_ATTR_FAMILY_ID, 0x1c);
	grps = mnl_attr_nest_start(nlh, CTRL_ATTR_MCAST_GROUPS);
	g = mnl_attr_nest_start(nlh, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_MCAST_GRP_NAME, "other");
	mnl_attr_put_u32(nlh, CTRL_ATTR_MCAST_GRP_ID, 3);
	mnl_attr_nest_end(nlh, g);
	g = mnl_attr_nest_start(nlh, 2);
	mnl_attr_put_u32(nlh, CTRL_ATTR_MCAST_GRP_ID, 9);
	mnl_attr_put_strz(nlh, CTRL_ATTR_MCAST_GRP_NAME, "events");
	mnl_attr_nest_end(nlh, g);
	mnl_attr_nest_end(nlh, grps);
	assert_int_equal(rpm_parse_ctrl(nlh, "events", &fam, &grp), 0);
	assert_int_equal(fam, 0x1c);
	assert_int_equal(grp, 9);

	nlh = msg(CTRL_CMD_NEWFAMILY);			/* no family id */
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, "regionpm");
	assert_int_equal(rpm_parse_ctrl(nlh, "events", &fam, &grp), -EBADMSG);

	nlh = msg(CTRL_CMD_NEWFAMILY);			/* wrong type */
	mnl_attr_put_u32(nlh, CTRL_ATTR_FAMILY_ID, 0x1c);
	assert_int_equal(rpm_parse_ctrl(nlh, "events", &fam, &grp), -EBADMSG);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(rpm_compact_mode_name(REGIONPM_COMPACT_MODE_DROP), "drop");
	assert_string_equal(rpm_obstacle_name(99), "unknown");
	assert_string_equal(rpm_release_reason_name(REGIONPM_RELEASE_REASON_OWNER_CLOSED),
			    "owner-closed");
	assert_string_equal(rpm_release_reason_name(REGIONPM_RELEASE_REASON_TIMEOUT), "timeout");
	assert_string_equal(rpm_release_reason_name(REGIONPM_RELEASE_REASON_RANGE_CLAIMED),
			    "range-claimed");
	assert_string_equal(rpm_release_reason_name(REGIONPM_RELEASE_REASON_RANGE_CLAIMED + 1),
			    "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_info_valid),
		cmocka_unit_test(test_info_missing),
		cmocka_unit_test(test_info_wrong_type),
		cmocka_unit_test(test_info_newer_attrs_skipped),
		cmocka_unit_test(test_info_truncated),
		cmocka_unit_test(test_region_valid),
		cmocka_unit_test(test_region_no_detail_keeps_old),
		cmocka_unit_test(test_region_held),
		cmocka_unit_test(test_region_unknown_state),
		cmocka_unit_test(test_region_missing_state),
		cmocka_unit_test(test_region_bad_zone),
		cmocka_unit_test(test_region_bad_detail),
		cmocka_unit_test(test_region_truncated),
		cmocka_unit_test(test_compact_valid),
		cmocka_unit_test(test_compact_missing),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_ack),
		cmocka_unit_test(test_ctrl),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests_name("genl", tests, NULL, NULL);
}
