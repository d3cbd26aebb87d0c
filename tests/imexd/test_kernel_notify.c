// SPDX-License-Identifier: GPL-2.0
/*
 * Counting the imex module's notifications (imexd/kernel_notify.c): each
 * kind counted once per message, other families and commands ignored, a
 * message too short for its header skipped, a cut-off message ending the
 * count without reading past the buffer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/imex.h>

#include "kernel.h"

#define FAMILY	0x1d

/* Append one message of @type with a genl header for @cmd (and a u64). */
static size_t put(uint8_t *buf, size_t off, uint16_t type, uint8_t cmd,
		  uint32_t len)
{
	struct nlmsghdr *h = (struct nlmsghdr *)(buf + off);
	struct genlmsghdr *g = NLMSG_DATA(h);

	memset(h, 0, NLMSG_SPACE(sizeof(*g) + 12));
	h->nlmsg_type = type;
	h->nlmsg_len = len ? len : NLMSG_LENGTH(sizeof(*g) + 12);
	g->cmd = cmd;
	return off + NLMSG_ALIGN(h->nlmsg_len);
}

static void counts_each_kind(void **state)
{
	uint8_t buf[1024] __attribute__((aligned(4)));
	struct imexd_notified seen = { 0 };
	size_t n = 0;

	(void)state;
	n = put(buf, n, FAMILY, IMEX_CMD_IMPORT_NOTIFY, 0);
	n = put(buf, n, FAMILY, IMEX_CMD_IMPORT_NOTIFY, 0);
	n = put(buf, n, FAMILY, IMEX_CMD_REQ_NOTIFY, 0);
	n = put(buf, n, FAMILY, IMEX_CMD_EXPORT_DEL, 0);
	n = put(buf, n, FAMILY, IMEX_CMD_DOMAIN_NEW, 0);	/* not a queue */
	imexd_kernel_notify_count(FAMILY, buf, n, &seen);
	assert_int_equal(seen.imports, 2);
	assert_int_equal(seen.requests, 1);
	assert_int_equal(seen.export_ends, 1);
	assert_false(seen.lost);
	/* Counts add up over batches. */
	imexd_kernel_notify_count(FAMILY, buf, n, &seen);
	assert_int_equal(seen.imports, 4);
}

static void ignores_what_is_not_ours(void **state)
{
	uint8_t buf[1024] __attribute__((aligned(4)));
	struct imexd_notified seen = { 0 };
	size_t n = 0;

	(void)state;
	/* Another family; an error message; a header too short for genl. */
	n = put(buf, n, FAMILY + 1, IMEX_CMD_IMPORT_NOTIFY, 0);
	n = put(buf, n, NLMSG_ERROR, IMEX_CMD_IMPORT_NOTIFY, 0);
	n = put(buf, n, FAMILY, IMEX_CMD_IMPORT_NOTIFY, NLMSG_HDRLEN + 2);
	n = put(buf, n, FAMILY, IMEX_CMD_EXPORT_DEL, 0);
	imexd_kernel_notify_count(FAMILY, buf, n, &seen);
	assert_int_equal(seen.imports, 0);
	assert_int_equal(seen.export_ends, 1);
}

static void stops_at_a_cut_off_message(void **state)
{
	uint8_t buf[1024] __attribute__((aligned(4)));
	struct imexd_notified seen = { 0 };
	size_t first;

	(void)state;
	first = put(buf, 0, FAMILY, IMEX_CMD_IMPORT_NOTIFY, 0);
	/* Says it is longer than what is left: not read. */
	put(buf, first, FAMILY, IMEX_CMD_IMPORT_NOTIFY, 900);
	imexd_kernel_notify_count(FAMILY, buf, first + 40, &seen);
	assert_int_equal(seen.imports, 1);
	/* Nothing at all, or less than a header. */
	imexd_kernel_notify_count(FAMILY, buf, 0, &seen);
	imexd_kernel_notify_count(FAMILY, buf, NLMSG_HDRLEN - 1, &seen);
	assert_int_equal(seen.imports, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts_each_kind),
		cmocka_unit_test(ignores_what_is_not_ours),
		cmocka_unit_test(stops_at_a_cut_off_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
