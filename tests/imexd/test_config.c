// SPDX-License-Identifier: GPL-2.0
/*
 * imexd.conf: every key's good values, every class of bad value with its
 * file:line message, the cross-key rule, and that a failed parse changes
 * nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config.h"
#include "wire.h"

static void assert_cfg_equal(const struct imexd_config *a,
			     const struct imexd_config *b)
{
	assert_string_equal(a->node_name, b->node_name);
	assert_string_equal(a->listen_address, b->listen_address);
	assert_int_equal(a->listen_port, b->listen_port);
	assert_string_equal(a->state_directory, b->state_directory);
	assert_int_equal(a->heartbeat_interval_ms, b->heartbeat_interval_ms);
	assert_int_equal(a->heartbeat_miss_count, b->heartbeat_miss_count);
	assert_int_equal(a->disconnected_grace_s, b->disconnected_grace_s);
	assert_int_equal(a->election_timeout_ms, b->election_timeout_ms);
	assert_int_equal(a->tls, b->tls);
	assert_string_equal(a->tls_ca_file, b->tls_ca_file);
	assert_string_equal(a->tls_cert_file, b->tls_cert_file);
	assert_string_equal(a->tls_key_file, b->tls_key_file);
	assert_string_equal(a->nodes_file, b->nodes_file);
	assert_int_equal(a->log_level, b->log_level);
	assert_string_equal(a->metrics_textfile_dir, b->metrics_textfile_dir);
	assert_int_equal(a->metrics_textfile_set, b->metrics_textfile_set);
}

/* Defaults with a known node name, whatever this host is called. */
static void base(struct imexd_config *c)
{
	imexd_config_defaults(c);
	strcpy(c->node_name, "testnode");
}

static int parse(struct imexd_config *c, const char *text, char *err,
		 size_t errlen)
{
	return imexd_config_parse(c, "imexd.conf", text, strlen(text), err,
				  errlen);
}

static void test_defaults(void **state)
{
	struct imexd_config c;
	char host[256] = "";

	(void)state;
	imexd_config_defaults(&c);
	assert_string_equal(c.listen_address, "*");
	assert_int_equal(c.listen_port, 50100);
	assert_string_equal(c.state_directory, "/var/lib/imexd");
	assert_int_equal(c.heartbeat_interval_ms, 1000);
	assert_int_equal(c.heartbeat_miss_count, 3);
	assert_int_equal(c.disconnected_grace_s, 30);
	assert_int_equal(c.election_timeout_ms, 1000);
	assert_false(c.tls);
	assert_string_equal(c.tls_ca_file, "");
	assert_string_equal(c.nodes_file, "");
	assert_int_equal(c.log_level, 6);
	assert_string_equal(c.metrics_textfile_dir, "/var/lib/prometheus/node-exporter");
	assert_false(c.metrics_textfile_set);
	gethostname(host, sizeof(host) - 1);
	if (imexd_name_valid(host))
		assert_string_equal(c.node_name, host);
	else
		assert_string_equal(c.node_name, "");
}

/* ---- good values: each key, each form ---------------------------------- */

struct good {
	const char *text;
	void (*expect)(struct imexd_config *c);
};

static void g_name(struct imexd_config *c) { strcpy(c->node_name, "gpu-07.rack_2"); }
static void g_name_max(struct imexd_config *c)
{
	memset(c->node_name, 'n', IMEX_NAME_MAX - 1);
	c->node_name[IMEX_NAME_MAX - 1] = '\0';
}
static void g_any(struct imexd_config *c) { strcpy(c->listen_address, "*"); }
static void g_v4(struct imexd_config *c) { strcpy(c->listen_address, "192.168.7.1"); }
static void g_v6(struct imexd_config *c) { strcpy(c->listen_address, "fd00::17"); }
static void g_port1(struct imexd_config *c) { c->listen_port = 1; }
static void g_port_max(struct imexd_config *c) { c->listen_port = 65535; }
static void g_state(struct imexd_config *c) { strcpy(c->state_directory, "/srv/imex state/"); }
static void g_hb_lo(struct imexd_config *c) { c->heartbeat_interval_ms = 50; }
static void g_hb_hi(struct imexd_config *c) { c->heartbeat_interval_ms = 60000; }
static void g_miss_lo(struct imexd_config *c) { c->heartbeat_miss_count = 1; }
static void g_miss_hi(struct imexd_config *c) { c->heartbeat_miss_count = 100; }
static void g_grace_forever(struct imexd_config *c) { c->disconnected_grace_s = -1; }
static void g_grace_now(struct imexd_config *c) { c->disconnected_grace_s = 0; }
static void g_grace_hi(struct imexd_config *c) { c->disconnected_grace_s = 86400; }
static void g_election_lo(struct imexd_config *c) { c->election_timeout_ms = 100; }
static void g_election_hi(struct imexd_config *c) { c->election_timeout_ms = 60000; }
static void g_tls_no(struct imexd_config *c) { c->tls = false; }
static void g_tls_yes(struct imexd_config *c)
{
	c->tls = true;
	strcpy(c->tls_ca_file, "/etc/imex/ca.pem");
	strcpy(c->tls_cert_file, "/etc/imex/node.pem");
	strcpy(c->tls_key_file, "/etc/imex/node.key");
}
static void g_ca(struct imexd_config *c) { strcpy(c->tls_ca_file, "/ca.pem"); }
static void g_nodes(struct imexd_config *c) { strcpy(c->nodes_file, "/etc/imex/nodes.cfg"); }
static void g_err(struct imexd_config *c) { c->log_level = 3; }
static void g_metrics_off(struct imexd_config *c)
{
	c->metrics_textfile_dir[0] = '\0';
	c->metrics_textfile_set = true;
}
static void g_metrics_dir(struct imexd_config *c)
{
	strcpy(c->metrics_textfile_dir, "/run/prom");
	c->metrics_textfile_set = true;
}
static void g_warn(struct imexd_config *c) { c->log_level = 4; }
static void g_info(struct imexd_config *c) { c->log_level = 6; }
static void g_debug(struct imexd_config *c) { c->log_level = 7; }
static void g_spaces(struct imexd_config *c)
{
	c->listen_port = 7;
	c->heartbeat_miss_count = 9;
	strcpy(c->nodes_file, "/n");
}
static void g_nothing(struct imexd_config *c) { (void)c; }
static void g_leading_zero(struct imexd_config *c) { c->listen_port = 80; }

static const struct good goods[] = {
	{ "NODE_NAME=gpu-07.rack_2", g_name },
	{ "NODE_NAME=nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn", g_name_max },
	{ "LISTEN_ADDRESS=*", g_any },
	{ "LISTEN_ADDRESS=192.168.7.1", g_v4 },
	{ "LISTEN_ADDRESS=fd00::17", g_v6 },
	{ "LISTEN_PORT=1", g_port1 },
	{ "LISTEN_PORT=65535", g_port_max },
	{ "LISTEN_PORT=0080", g_leading_zero },
	{ "STATE_DIRECTORY=/srv/imex state/", g_state },
	{ "HEARTBEAT_INTERVAL_MS=50", g_hb_lo },
	{ "HEARTBEAT_INTERVAL_MS=60000", g_hb_hi },
	{ "HEARTBEAT_MISS_COUNT=1", g_miss_lo },
	{ "HEARTBEAT_MISS_COUNT=100", g_miss_hi },
	{ "DISCONNECTED_GRACE_SECONDS=-1", g_grace_forever },
	{ "DISCONNECTED_GRACE_SECONDS=0", g_grace_now },
	{ "DISCONNECTED_GRACE_SECONDS=86400", g_grace_hi },
	{ "ELECTION_TIMEOUT_MS=100", g_election_lo },
	{ "ELECTION_TIMEOUT_MS=60000", g_election_hi },
	{ "TLS=no", g_tls_no },
	{ "TLS=yes\nTLS_CA_FILE=/etc/imex/ca.pem\nTLS_CERT_FILE=/etc/imex/node.pem\n"
	  "TLS_KEY_FILE=/etc/imex/node.key\n", g_tls_yes },
	{ "TLS_CA_FILE=/ca.pem", g_ca },	/* without TLS=yes: kept, unused */
	{ "NODES_FILE=/etc/imex/nodes.cfg", g_nodes },
	{ "LOG_LEVEL=err", g_err },
	/* empty is "off", the one key where it is allowed */
	{ "METRICS_TEXTFILE_DIR=", g_metrics_off },
	{ "METRICS_TEXTFILE_DIR=/run/prom", g_metrics_dir },
	{ "LOG_LEVEL=warn", g_warn },
	{ "LOG_LEVEL=info", g_info },
	{ "LOG_LEVEL=debug", g_debug },
	/* White space around '=', at the ends, CRLF, comments, no final
	 * newline. */
	{ "  LISTEN_PORT =\t7 \t\r\n# HEARTBEAT_MISS_COUNT=1\n\n\t\n"
	  "HEARTBEAT_MISS_COUNT\t=  9\r\n   # indented comment\nNODES_FILE=/n", g_spaces },
	{ "", g_nothing },
	{ "\n\n# only comments\n", g_nothing },
};

static void test_every_key_accepts_good_values(void **state)
{
	struct imexd_config got, want;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		base(&got);
		base(&want);
		goods[i].expect(&want);
		strcpy(err, "stale");
		if (parse(&got, goods[i].text, err, sizeof(err)))
			fail_msg("'%s' refused: %s", goods[i].text, err);
		assert_string_equal(err, "");
		assert_cfg_equal(&got, &want);
	}
}

/* ---- bad values: each class, the exact message ------------------------- */

struct bad {
	const char *text;
	const char *err;
};

static const struct bad bads[] = {
	/* out of range, each numeric key, both ends */
	{ "HEARTBEAT_MISS_COUNT=0", "imexd.conf:1: HEARTBEAT_MISS_COUNT: '0' is out of range 1..100" },
	{ "\n\n# c\n\n  \n\nHEARTBEAT_MISS_COUNT=0\n", "imexd.conf:7: HEARTBEAT_MISS_COUNT: '0' is out of range 1..100" },
	{ "HEARTBEAT_MISS_COUNT=101", "imexd.conf:1: HEARTBEAT_MISS_COUNT: '101' is out of range 1..100" },
	{ "LISTEN_PORT=0", "imexd.conf:1: LISTEN_PORT: '0' is out of range 1..65535" },
	{ "LISTEN_PORT=65536", "imexd.conf:1: LISTEN_PORT: '65536' is out of range 1..65535" },
	{ "LISTEN_PORT=99999999999999999999999999", "imexd.conf:1: LISTEN_PORT: '99999999999999999999999999' is out of range 1..65535" },
	{ "HEARTBEAT_INTERVAL_MS=49", "imexd.conf:1: HEARTBEAT_INTERVAL_MS: '49' is out of range 50..60000" },
	{ "HEARTBEAT_INTERVAL_MS=60001", "imexd.conf:1: HEARTBEAT_INTERVAL_MS: '60001' is out of range 50..60000" },
	{ "DISCONNECTED_GRACE_SECONDS=-2", "imexd.conf:1: DISCONNECTED_GRACE_SECONDS: '-2' is out of range -1..86400" },
	{ "DISCONNECTED_GRACE_SECONDS=86401", "imexd.conf:1: DISCONNECTED_GRACE_SECONDS: '86401' is out of range -1..86400" },
	{ "ELECTION_TIMEOUT_MS=99", "imexd.conf:1: ELECTION_TIMEOUT_MS: '99' is out of range 100..60000" },
	{ "ELECTION_TIMEOUT_MS=60001", "imexd.conf:1: ELECTION_TIMEOUT_MS: '60001' is out of range 100..60000" },
	/* the two-phase protocol's keys are gone, and say so */
	{ "CHANGE_STEP_TIMEOUT_MS=5000", "imexd.conf:1: CHANGE_STEP_TIMEOUT_MS is no longer used (domains are agreed through a raft log, see ELECTION_TIMEOUT_MS): remove the line" },
	{ "CHANGE_LEASE_MS=15000", "imexd.conf:1: CHANGE_LEASE_MS is no longer used (domains are agreed through a raft log, see ELECTION_TIMEOUT_MS): remove the line" },
	/* not a number */
	{ "LISTEN_PORT=http", "imexd.conf:1: LISTEN_PORT: 'http' is not a decimal number" },
	{ "LISTEN_PORT=+80", "imexd.conf:1: LISTEN_PORT: '+80' is not a decimal number" },
	{ "LISTEN_PORT=0x50", "imexd.conf:1: LISTEN_PORT: '0x50' is not a decimal number" },
	{ "LISTEN_PORT=-", "imexd.conf:1: LISTEN_PORT: '-' is not a decimal number" },
	{ "HEARTBEAT_MISS_COUNT=1.5", "imexd.conf:1: HEARTBEAT_MISS_COUNT: '1.5' is not a decimal number" },
	{ "HEARTBEAT_MISS_COUNT=3 # three", "imexd.conf:1: HEARTBEAT_MISS_COUNT: '3 # three' is not a decimal number" },
	/* names */
	{ "NODE_NAME=-gpu", "imexd.conf:1: NODE_NAME: '-gpu' is not a valid node name: use letters, digits, '_', '.', '-' (at most 63)" },
	{ "NODE_NAME=gpu 7", "imexd.conf:1: NODE_NAME: 'gpu 7' is not a valid node name: use letters, digits, '_', '.', '-' (at most 63)" },
	{ "NODE_NAME=gpu/7", "imexd.conf:1: NODE_NAME: 'gpu/7' is not a valid node name: use letters, digits, '_', '.', '-' (at most 63)" },
	{ "NODE_NAME=nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn", "imexd.conf:1: NODE_NAME: value longer than 63 bytes" },
	/* addresses */
	{ "LISTEN_ADDRESS=any", "imexd.conf:1: LISTEN_ADDRESS: 'any' is not an IPv4 or IPv6 address, or '*' for any" },
	{ "LISTEN_ADDRESS=10.0.0.256", "imexd.conf:1: LISTEN_ADDRESS: '10.0.0.256' is not an IPv4 or IPv6 address, or '*' for any" },
	{ "LISTEN_ADDRESS=[::1]", "imexd.conf:1: LISTEN_ADDRESS: '[::1]' is not an IPv4 or IPv6 address, or '*' for any" },
	{ "LISTEN_ADDRESS=10.0.0.1:80", "imexd.conf:1: LISTEN_ADDRESS: '10.0.0.1:80' is not an IPv4 or IPv6 address, or '*' for any" },
	{ "LISTEN_ADDRESS=**", "imexd.conf:1: LISTEN_ADDRESS: '**' is not an IPv4 or IPv6 address, or '*' for any" },
	/* paths */
	{ "STATE_DIRECTORY=var/lib/imexd", "imexd.conf:1: STATE_DIRECTORY: 'var/lib/imexd' is not an absolute path" },
	{ "NODES_FILE=~/nodes", "imexd.conf:1: NODES_FILE: '~/nodes' is not an absolute path" },
	{ "METRICS_TEXTFILE_DIR=prom", "imexd.conf:1: METRICS_TEXTFILE_DIR: 'prom' is not an absolute path" },
	{ "TLS_KEY_FILE=/a\tb", "imexd.conf:1: TLS_KEY_FILE: '/a?b' has control characters" },
	/* words */
	{ "TLS=true", "imexd.conf:1: TLS: 'true' is not yes or no" },
	{ "TLS=YES", "imexd.conf:1: TLS: 'YES' is not yes or no" },
	{ "LOG_LEVEL=verbose", "imexd.conf:1: LOG_LEVEL: 'verbose' is not one of err, warn, info, debug" },
	{ "LOG_LEVEL=INFO", "imexd.conf:1: LOG_LEVEL: 'INFO' is not one of err, warn, info, debug" },
	/* empty values */
	{ "NODES_FILE=", "imexd.conf:1: NODES_FILE: empty value (leave the key out for the default)" },
	{ "LISTEN_PORT =  \t", "imexd.conf:1: LISTEN_PORT: empty value (leave the key out for the default)" },
	/* malformed lines */
	{ "LISTEN_PORT", "imexd.conf:1: expected KEY=VALUE or a '#' comment" },
	{ "LOG_LEVEL=info\nthis is not a line\n", "imexd.conf:2: expected KEY=VALUE or a '#' comment" },
	{ "=5", "imexd.conf:1: expected KEY=VALUE: the key is missing" },
	{ "  = 5", "imexd.conf:1: expected KEY=VALUE: the key is missing" },
	/* unknown and repeated keys */
	{ "SERVER_PORT=50000", "imexd.conf:1: unknown key 'SERVER_PORT' (see imexd.conf(5) for the keys)" },
	{ "listen_port=5", "imexd.conf:1: unknown key 'listen_port' (keys are upper case: LISTEN_PORT)" },
	{ "LISTEN PORT=5", "imexd.conf:1: unknown key 'LISTEN PORT' (see imexd.conf(5) for the keys)" },
	{ "LISTEN_PORT=1\n# again\nLISTEN_PORT=1\n", "imexd.conf:3: LISTEN_PORT: repeated (already set on line 1)" },
	/* not text */
	{ "LOG_LEVEL=info\nLISTEN_PORT=1\0\n", "imexd.conf:2: NUL byte: not a text file" },
	/* cross-key rule */
	{ "TLS=yes", "imexd.conf: TLS=yes needs TLS_CA_FILE, TLS_CERT_FILE and TLS_KEY_FILE (missing: TLS_CA_FILE TLS_CERT_FILE TLS_KEY_FILE)" },
	{ "TLS=yes\nTLS_CA_FILE=/ca\nTLS_KEY_FILE=/key", "imexd.conf: TLS=yes needs TLS_CA_FILE, TLS_CERT_FILE and TLS_KEY_FILE (missing: TLS_CERT_FILE)" },
};

/* The NUL case is parsed past its embedded NUL. */
static size_t bad_len(const struct bad *b)
{
	return strlen(b->text) + (strstr(b->err, "NUL byte") ? 2 : 0);
}

static void test_bad_values_name_file_line_and_key(void **state)
{
	struct imexd_config c;
	char err[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		size_t len = bad_len(&bads[i]);

		base(&c);
		err[0] = '\0';
		if (imexd_config_parse(&c, "imexd.conf", bads[i].text, len,
				       err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' accepted", bads[i].text);
		if (strcmp(err, bads[i].err))
			fail_msg("'%s':\n got  '%s'\n want '%s'", bads[i].text,
				 err, bads[i].err);
	}
}

static void test_path_longer_than_path_max_refused(void **state)
{
	struct imexd_config c;
	size_t n = PATH_MAX + 32;
	char *text = malloc(n), err[256];

	(void)state;
	strcpy(text, "STATE_DIRECTORY=/");
	memset(text + 17, 'd', n - 18);
	text[n - 1] = '\0';
	base(&c);
	assert_int_equal(parse(&c, text, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "imexd.conf:1: STATE_DIRECTORY: value longer than 4095 bytes");
	free(text);
}

/* Every bad case, after good lines: the configuration is left as it was. */
static void test_failed_parse_changes_nothing(void **state)
{
	struct imexd_config c, before;
	char text[1024], err[256];
	size_t i;

	(void)state;
	static const char good[] = "LOG_LEVEL=debug\nNODES_FILE=/x\nNODE_NAME=other\n";

	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		size_t len = bad_len(&bads[i]);

		base(&c);
		c.listen_port = 1234;
		before = c;
		memcpy(text, good, sizeof(good) - 1);
		memcpy(text + sizeof(good) - 1, bads[i].text, len);
		assert_int_equal(imexd_config_parse(&c, "imexd.conf", text,
						    sizeof(good) - 1 + len, err,
						    sizeof(err)), -EINVAL);
		assert_cfg_equal(&c, &before);
	}
}

static void test_unknown_key_does_not_echo_its_value(void **state)
{
	struct imexd_config c;
	char err[256];

	(void)state;
	base(&c);
	assert_int_equal(parse(&c, "TLS_KEY_PASSWORD=hunter2", err, sizeof(err)),
			 -EINVAL);
	assert_null(strstr(err, "hunter2"));
	assert_non_null(strstr(err, "TLS_KEY_PASSWORD"));
}

static void test_messages_quote_values_safely(void **state)
{
	struct imexd_config c;
	char text[300], err[512];

	(void)state;
	base(&c);
	/* Control bytes become '?', long values are cut. */
	assert_int_equal(parse(&c, "LOG_LEVEL=\x1b[31mred", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "imexd.conf:1: LOG_LEVEL: '?[31mred' is not one of err, warn, info, debug");
	snprintf(text, sizeof(text), "TLS=%0200d", 0);
	assert_int_equal(parse(&c, text, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "...' is not yes or no"));
	assert_true(strlen(err) < 150);
	/* A small buffer is filled, never overrun; none at all is fine. */
	assert_int_equal(parse(&c, "LISTEN_PORT=0", err, 8), -EINVAL);
	assert_string_equal(err, "imexd.c");
	assert_int_equal(parse(&c, "LISTEN_PORT=0", NULL, 0), -EINVAL);
}

static void test_invalid_host_name_asks_for_node_name(void **state)
{
	struct imexd_config c;
	char err[256];

	(void)state;
	base(&c);
	c.node_name[0] = '\0';	/* what defaults leave for a bad host name */
	assert_int_equal(parse(&c, "LOG_LEVEL=info\n", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "imexd.conf: NODE_NAME: "));
	assert_non_null(strstr(err, "set NODE_NAME"));
	assert_string_equal(c.node_name, "");
	assert_int_equal(parse(&c, "NODE_NAME=n1\n", err, sizeof(err)), 0);
	assert_string_equal(c.node_name, "n1");
}

static void test_reloadable_keys_are_copied_others_kept(void **state)
{
	struct imexd_config dst, src, want;

	(void)state;
	base(&dst);
	base(&src);
	strcpy(src.node_name, "new");
	strcpy(src.listen_address, "10.1.1.1");
	src.listen_port = 9;
	strcpy(src.state_directory, "/new");
	src.heartbeat_interval_ms = 77;
	src.heartbeat_miss_count = 8;
	src.disconnected_grace_s = -1;
	src.election_timeout_ms = 700;
	src.tls = true;
	strcpy(src.tls_ca_file, "/ca");
	strcpy(src.tls_cert_file, "/cert");
	strcpy(src.tls_key_file, "/key");
	strcpy(src.nodes_file, "/nodes");
	src.log_level = 7;

	want = dst;
	want.heartbeat_interval_ms = 77;
	want.heartbeat_miss_count = 8;
	want.disconnected_grace_s = -1;
	want.log_level = 7;

	imexd_config_apply_reloadable(&dst, &src);
	assert_cfg_equal(&dst, &want);
}

static void test_load_reads_the_file_and_names_it(void **state)
{
	const char *base_dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct imexd_config c, before;
	char path[4096], err[512], want[4200];
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/imexd-conf.XXXXXX", base_dir);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "NODE_NAME=fromfile\nLISTEN_PORT=4242\n", 36), 36);
	close(fd);
	base(&c);
	assert_int_equal(imexd_config_load(&c, path, err, sizeof(err)), 0);
	assert_string_equal(c.node_name, "fromfile");
	assert_int_equal(c.listen_port, 4242);

	/* A bad line: path:line in the message, nothing applied. */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "LISTEN_PORT=1\nTLS=maybe\n", 24), 24);
	close(fd);
	before = c;
	assert_int_equal(imexd_config_load(&c, path, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: TLS: 'maybe' is not yes or no", path);
	assert_string_equal(err, want);
	assert_cfg_equal(&c, &before);

	unlink(path);
	assert_int_equal(imexd_config_load(&c, path, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "%s: cannot open: No such file or directory", path);
	assert_string_equal(err, want);

	assert_true(imexd_config_load(&c, base_dir, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "not a regular file"));
	assert_cfg_equal(&c, &before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_key_accepts_good_values),
		cmocka_unit_test(test_bad_values_name_file_line_and_key),
		cmocka_unit_test(test_path_longer_than_path_max_refused),
		cmocka_unit_test(test_failed_parse_changes_nothing),
		cmocka_unit_test(test_unknown_key_does_not_echo_its_value),
		cmocka_unit_test(test_messages_quote_values_safely),
		cmocka_unit_test(test_invalid_host_name_asks_for_node_name),
		cmocka_unit_test(test_reloadable_keys_are_copied_others_kept),
		cmocka_unit_test(test_load_reads_the_file_and_names_it),
	};

	return cmocka_run_group_tests_name("imexd config", tests, NULL, NULL);
}
