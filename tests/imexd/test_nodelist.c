// SPDX-License-Identifier: GPL-2.0
/*
 * Node lists: host names, NAME=ADDR with IPv4/IPv6 and ports, bare IPs
 * refused with the NAME=ADDR hint, duplicates and bounds named by
 * file:line, comments and blank lines.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nodelist.h"

/* ---- single entries ------------------------------------------------------ */

struct good {
	const char *entry, *name, *addr;
};

static const struct good goods[] = {
	{ "gpu-node-07", "gpu-node-07", "gpu-node-07" },
	{ "gpu-node-07.rack2.example", "gpu-node-07.rack2.example",
	  "gpu-node-07.rack2.example" },
	{ "GPU07", "GPU07", "GPU07" },
	{ "node_7", "node_7", "node_7" },		/* /etc/hosts allows it */
	{ "7gpu", "7gpu", "7gpu" },
	{ "gpu07:50200", "gpu07", "gpu07:50200" },
	{ "a=gpu07", "a", "gpu07" },
	{ "a=gpu07.example:1", "a", "gpu07.example:1" },
	{ "a=10.0.0.1", "a", "10.0.0.1" },
	{ "a=10.0.0.1:65535", "a", "10.0.0.1:65535" },
	{ "a=fd00::1", "a", "[fd00::1]" },		/* brackets added */
	{ "a=[fd00::1]", "a", "[fd00::1]" },
	{ "a=[fd00::1]:50100", "a", "[fd00::1]:50100" },
	{ "a=::", "a", "[::]" },
	{ "a=[::ffff:10.0.0.1]:7", "a", "[::ffff:10.0.0.1]:7" },
	{ "  n.1 = 10.0.0.2  ", "n.1", "10.0.0.2" },	/* blanks around */
	{ "a=h:007", "a", "h:7" },			/* port normalised */
};

static void test_good_entries(void **state)
{
	struct imexd_member m;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		memset(&m, 0x5a, sizeof(m));
		if (imexd_nodelist_entry(goods[i].entry, &m, err, sizeof(err)))
			fail_msg("'%s' refused: %s", goods[i].entry, err);
		assert_string_equal(m.name, goods[i].name);
		assert_string_equal(m.addr, goods[i].addr);
	}
}

struct bad {
	const char *entry, *err;
};

static const struct bad bads[] = {
	/* bare IPs: the node would have no name */
	{ "10.0.0.1", "'10.0.0.1' is an IP address, which gives the node no name: write NAME=10.0.0.1" },
	{ "10.0.0.1:50100", "'10.0.0.1:50100' is an IP address, which gives the node no name: write NAME=10.0.0.1:50100" },
	{ "fd00::1", "'fd00::1' is an IP address, which gives the node no name: write NAME=fd00::1" },
	{ "[fd00::1]:9", "'[fd00::1]:9' is an IP address, which gives the node no name: write NAME=[fd00::1]:9" },
	/* ports */
	{ "gpu:0", "'gpu:0': the port is not 1..65535" },
	{ "gpu:65536", "'gpu:65536': the port is not 1..65535" },
	{ "gpu:", "'gpu:': the port is not 1..65535" },
	{ "gpu:http", "'gpu:http': the port is not 1..65535" },
	{ "a=10.0.0.1:-1", "'10.0.0.1:-1': the port is not 1..65535" },
	{ "a=[fd00::1]:123456", "'[fd00::1]:123456': the port is not 1..65535" },
	/* addresses */
	{ "a=10.0.0.256", "'10.0.0.256' is neither an IP address nor a host name" },
	{ "a=10.0.0", "'10.0.0' is neither an IP address nor a host name" },
	{ "a=[10.0.0.1]", "'[10.0.0.1]' is not a valid IPv6 address" },
	{ "a=[fd00::1", "'[fd00::1' is not HOST, HOST:PORT, IP, IP:PORT or [IPv6]:PORT" },
	{ "a=[fd00::1]x", "'[fd00::1]x' is not HOST, HOST:PORT, IP, IP:PORT or [IPv6]:PORT" },
	{ "a=fd00::zz", "'fd00::zz' is not a valid IPv6 address" },
	{ "a=-gpu", "'-gpu' is neither an IP address nor a host name" },
	{ "a=gpu-", "'gpu-' is neither an IP address nor a host name" },
	{ "a=gpu..x", "'gpu..x' is neither an IP address nor a host name" },
	{ "a=gpu.", "'gpu.' is neither an IP address nor a host name" },
	{ "a=gp/u", "'gp/u' is neither an IP address nor a host name" },
	{ "a=", "'' is neither an IP address nor a host name" },
	{ "a=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.x",
	  "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is neither an IP address nor a host name" },
	/* names */
	{ "_gpu=10.0.0.1", "node name '_gpu' is not valid: use letters, digits, '_', '.', '-'" },
	{ "=10.0.0.1", "node name '' is not valid: use letters, digits, '_', '.', '-'" },
	{ "a:b=10.0.0.1", "node name 'a:b' is not valid: use letters, digits, '_', '.', '-'" },
	{ "a=b=c", "'b=c' is neither an IP address nor a host name" },
	{ "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn.nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
	  "node name 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn.nnnnnnnnnnnnnnnnnnnnnnn...' is longer than 63 characters: write NAME=ADDR" },
	/* shape */
	{ "", "empty entry" },
	{ "   ", "empty entry" },
	{ "a b", "'a b': one node per entry, without spaces inside" },
	{ "a = b c", "'a = b c': one node per entry, without spaces inside" },
};

static void test_bad_entries_say_why(void **state)
{
	struct imexd_member m, before;
	char err[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		memset(&m, 0x5a, sizeof(m));
		before = m;
		if (imexd_nodelist_entry(bads[i].entry, &m, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' accepted", bads[i].entry);
		if (strcmp(err, bads[i].err))
			fail_msg("'%s':\n got  '%s'\n want '%s'", bads[i].entry,
				 err, bads[i].err);
		assert_memory_equal(&m, &before, sizeof(m));
	}
}

static void test_longest_address_fits_or_is_refused(void **state)
{
	struct imexd_member m;
	char e[300], err[256];
	size_t i;

	(void)state;
	/* 4 labels of 63 = 255 > 253: not a host name. */
	strcpy(e, "a=");
	for (i = 0; i < 4; i++) {
		memset(e + strlen(e), 'h', 63);
		e[2 + 64 * i + 63] = '\0';
		if (i < 3)
			strcat(e, ".");
	}
	assert_int_equal(imexd_nodelist_entry(e, &m, err, sizeof(err)), -EINVAL);
	/* 253 characters is a host name, and its address fits 255... */
	e[2 + 253] = '\0';
	e[2 + 252] = 'x';
	assert_int_equal(imexd_nodelist_entry(e, &m, err, sizeof(err)), 0);
	assert_int_equal(strlen(m.addr), 253);
	/* ...but not with a port. */
	strcat(e, ":50100");
	assert_int_equal(imexd_nodelist_entry(e, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is longer than 255 characters"));
}

/* ---- files ----------------------------------------------------------------- */

static int parse(const char *text, struct imexd_member **ms, size_t *n,
		 char *err, size_t errlen)
{
	return imexd_nodelist_parse("nodes.cfg", text, strlen(text), ms, n,
				    err, errlen);
}

static void test_file_with_comments_blanks_and_forms(void **state)
{
	static const char text[] =
		"# the rack\n"
		"\n"
		"gpu01\n"
		"   gpu02.rack.example   # trailing comment\r\n"
		"\t\n"
		"gpu03=10.0.0.3\n"
		"gpu04 = 10.0.0.4:50101\n"
		"gpu05=[fd00::5]:50100\n"
		"gpu06=fd00::6# no space before the comment\n"
		"#gpu07\n"
		"gpu08";		/* no final newline */
	static const char *const names[] = { "gpu01", "gpu02.rack.example",
		"gpu03", "gpu04", "gpu05", "gpu06", "gpu08" };
	static const char *const addrs[] = { "gpu01", "gpu02.rack.example",
		"10.0.0.3", "10.0.0.4:50101", "[fd00::5]:50100", "[fd00::6]",
		"gpu08" };
	struct imexd_member *ms = NULL;
	char err[256] = "stale";
	size_t n = 0, i;

	(void)state;
	assert_int_equal(parse(text, &ms, &n, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(n, 7);
	for (i = 0; i < n; i++) {
		assert_string_equal(ms[i].name, names[i]);
		assert_string_equal(ms[i].addr, addrs[i]);
	}
	free(ms);
}

struct bad_file {
	const char *text, *err;
};

static const struct bad_file bad_files[] = {
	{ "a\nb\na\n", "nodes.cfg:3: node 'a' is already listed on line 1" },
	{ "x=10.0.0.1\n\ny=10.0.0.1\n",
	  "nodes.cfg:3: address '10.0.0.1' of 'y' is already the address of 'x' (line 1)" },
	/* the default port makes these the same place */
	{ "x=10.0.0.1\ny=10.0.0.1:50100\n",
	  "nodes.cfg:2: address '10.0.0.1:50100' of 'y' is already the address of 'x' (line 1)" },
	/* host names are case-insensitive */
	{ "x=GPU1\ny=gpu1\n",
	  "nodes.cfg:2: address 'gpu1' of 'y' is already the address of 'x' (line 1)" },
	/* one IPv6 address, two spellings */
	{ "x=fd00::1\ny=[fd00:0:0::0001]:50100\n",
	  "nodes.cfg:2: address '[fd00:0:0::0001]:50100' of 'y' is already the address of 'x' (line 1)" },
	/* same host, other port: fine; then a real duplicate */
	{ "x=h:1\ny=h:2\nz=h:1\n",
	  "nodes.cfg:3: address 'h:1' of 'z' is already the address of 'x' (line 1)" },
	{ "# nodes\n10.0.0.1\n",
	  "nodes.cfg:2: '10.0.0.1' is an IP address, which gives the node no name: write NAME=10.0.0.1" },
	{ "a\nb c\n", "nodes.cfg:2: 'b c': one node per entry, without spaces inside" },
	{ "a\nb\0\n", "nodes.cfg:2: NUL byte: not a text file" },
	{ "", "nodes.cfg: lists no nodes" },
	{ "# nobody\n\n", "nodes.cfg: lists no nodes" },
};

static void test_bad_files_name_file_and_line(void **state)
{
	struct imexd_member *ms = (struct imexd_member *)"untouched";
	size_t n = 4242, i;
	char err[512];

	(void)state;
	for (i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		size_t len = strlen(bad_files[i].text);

		if (strstr(bad_files[i].err, "NUL"))
			len += 2;
		if (imexd_nodelist_parse("nodes.cfg", bad_files[i].text, len,
					 &ms, &n, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' accepted", bad_files[i].text);
		if (strcmp(err, bad_files[i].err))
			fail_msg("'%s':\n got  '%s'\n want '%s'",
				 bad_files[i].text, err, bad_files[i].err);
		assert_string_equal((const char *)ms, "untouched");
		assert_int_equal(n, 4242);
	}
}

static void test_members_max_is_the_limit(void **state)
{
	struct imexd_member *ms = NULL;
	size_t n = 0, i, len = 0;
	char *text = malloc(32UL * (IMEX_MEMBERS_MAX + 1)), err[256];

	(void)state;
	for (i = 0; i < IMEX_MEMBERS_MAX; i++)
		len += (size_t)sprintf(text + len, "node%zu\n", i);
	assert_int_equal(imexd_nodelist_parse("n", text, len, &ms, &n, err,
					      sizeof(err)), 0);
	assert_int_equal(n, IMEX_MEMBERS_MAX);
	assert_string_equal(ms[IMEX_MEMBERS_MAX - 1].name, "node159");
	free(ms);
	len += (size_t)sprintf(text + len, "# comment lines do not count\n");
	len += (size_t)sprintf(text + len, "one-more\n");
	assert_int_equal(imexd_nodelist_parse("n", text, len, &ms, &n, err,
					      sizeof(err)), -EINVAL);
	assert_string_equal(err, "n:162: more than 160 nodes");
	free(text);
}

static void test_small_error_buffer(void **state)
{
	struct imexd_member *ms = NULL, m;
	size_t n = 0;
	char err[6];

	(void)state;
	assert_int_equal(parse("a\na\n", &ms, &n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "nodes");
	assert_int_equal(parse("a\na\n", &ms, &n, NULL, 0), -EINVAL);
	assert_int_equal(imexd_nodelist_entry("1.2.3.4", &m, NULL, 0), -EINVAL);
	assert_int_equal(imexd_nodelist_entry(NULL, &m, err, sizeof(err)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_entries),
		cmocka_unit_test(test_bad_entries_say_why),
		cmocka_unit_test(test_longest_address_fits_or_is_refused),
		cmocka_unit_test(test_file_with_comments_blanks_and_forms),
		cmocka_unit_test(test_bad_files_name_file_and_line),
		cmocka_unit_test(test_members_max_is_the_limit),
		cmocka_unit_test(test_small_error_buffer),
	};

	return cmocka_run_group_tests_name("imexd nodelist", tests, NULL, NULL);
}
