// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of daemon/fs-checkpoint.c: which mounts of a
 * /proc/self/mountinfo text get their ext4 journal checkpointed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fs-checkpoint.h"

static char out[8][4096];

static void test_ext4_mounts(void **state)
{
	const char *text =
		"22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
		"28 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,errors=remount-ro\n"
		/* the same file system bind-mounted: checkpointed once */
		"40 28 254:1 /srv /mnt/srv rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
		/* read-only: nothing to checkpoint */
		"41 28 254:2 / /mnt/ro ro,relatime shared:20 - ext4 /dev/vda2 ro\n"
		/* a space in the mount point, escaped */
		"42 28 254:3 / /mnt/my\\040disk rw,noatime - ext4 /dev/vdb rw\n"
		"43 28 0:50 / /mnt/x rw - xfs /dev/vdc rw\n"
		/* optional fields may be absent or many */
		"44 28 254:4 / /data rw master:3 propagate_from:2 - ext4 /dev/vdd rw\n";

	(void)state;
	assert_int_equal(fs_ext4_mounts_parse(text, out, 8), 3);
	assert_string_equal(out[0], "/");
	assert_string_equal(out[1], "/mnt/my disk");
	assert_string_equal(out[2], "/data");
	/* Only as many as asked for. */
	assert_int_equal(fs_ext4_mounts_parse(text, out, 1), 1);
	assert_string_equal(out[0], "/");
	/* No trailing newline, empty text, empty lines. */
	assert_int_equal(fs_ext4_mounts_parse("\n\n28 1 8:1 / /home rw - ext4 /dev/sda1 rw", out, 8), 1);
	assert_string_equal(out[0], "/home");
	assert_int_equal(fs_ext4_mounts_parse("", out, 8), 0);
}

static void test_malformed(void **state)
{
	(void)state;
	/* No " - " separator, too few fields, no file system type. */
	assert_int_equal(fs_ext4_mounts_parse("28 1 254:1 / / rw ext4 /dev/vda1 rw\n", out, 8), -EBADMSG);
	assert_int_equal(fs_ext4_mounts_parse("28 1 254:1 / - ext4 /dev/vda1 rw\n", out, 8), -EBADMSG);
	assert_int_equal(fs_ext4_mounts_parse("28 1 254:1 / / rw - \n", out, 8), -EBADMSG);
	/* A dangling escape is kept as it is. */
	assert_int_equal(fs_ext4_mounts_parse("28 1 254:1 / /a\\04 rw - ext4 x rw\n", out, 8), 1);
	assert_string_equal(out[0], "/a\\04");
}

/* The mount table under a fixture root that has none: an error, no crash. */
static void test_no_mount_table(void **state)
{
	unsigned failed = 7;

	(void)state;
	assert_int_equal(fs_checkpoint_ext4("/nonexistent-root", &failed), -ENOENT);
	assert_int_equal(failed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ext4_mounts),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_no_mount_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
