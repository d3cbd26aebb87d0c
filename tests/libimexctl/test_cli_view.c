// SPDX-License-Identifier: GPL-2.0-only
/*
 * What imexctl shows from what it reads: the node status probe's verdict,
 * the group view imexd writes (node list), the domain's From\To matrix and
 * its timestamps.  No kernel needed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "cli.h"
#include "node_list.h"
#include "node_status.h"
#include "test_util.h"

static char out_text[8192];

/* The probe's verdict on one state: a group of voters a (self, leader), b
 * and c with c not reached, domains job1 (READY) and job2 (@job2). */
struct probe_case {
	uint32_t job2;
	bool b_connected, member;
	unsigned long file_pid;
	const char *leader;
	int group_err, node_err;
	uint32_t manager_pid;
};

static void probe_judge(const struct probe_case *c, struct node_status_out *out)
{
	struct cli_group_member m[3] = {
		{ .name = "a", .role = "voter", .self = true, .leader = true },
		{ .name = "b", .role = "voter", .has_connected = true,
		  .connected = c->b_connected },
		{ .name = "c", .role = "voter", .has_connected = true },
	};
	struct cli_group g = { .node = "a", .pid = c->file_pid, .member = c->member,
			       .m = m, .n = 3 };
	struct imexctl_domain d[2] = {
		{ .name = "job1", .state = IMEXCTL_DOMAIN_READY },
		{ .name = "job2", .state = c->job2 },
	};
	struct node_status_in in = {
		.node_err = c->node_err, .node_errmsg = "not permitted",
		.manager_pid = c->manager_pid, .doms = d, .ndoms = 2,
		.group_err = c->group_err, .group_path = "/x/members.json",
		.group = c->group_err ? NULL : &g,
	};

	snprintf(g.leader, sizeof(g.leader), "%s", c->leader);
	node_status_judge(&in, out);
}

/* The probe's verdict in each state it can see. */
static void test_node_status_judge(void **state)
{
	const struct probe_case ready = {
		.job2 = IMEXCTL_DOMAIN_READY, .b_connected = true, .member = true,
		.file_pid = 42, .leader = "a", .manager_pid = 42,
	};
	struct probe_case c;
	struct node_status_out out;

	(void)state;
	probe_judge(&ready, &out);
	assert_int_equal(out.code, STATUS_READY);
	assert_string_equal(out.word, "ready");
	assert_int_equal(out.voters, 3);
	assert_int_equal(out.voters_up, 2);
	assert_non_null(strstr(out.reason, "2 domain(s) READY, leader a, 2 of 3 voters"));

	c = ready;
	c.job2 = IMEXCTL_DOMAIN_DEGRADED;
	probe_judge(&c, &out);
	assert_int_equal(out.code, STATUS_DEGRADED);
	assert_string_equal(out.reason, "1 of 2 domain(s) not READY (first: job2)");

	c = ready;
	c.leader = "";
	probe_judge(&c, &out);
	assert_int_equal(out.code, STATUS_DEGRADED);
	assert_string_equal(out.reason, "no agreement leader known to this node");

	c = ready;
	c.b_connected = false;		/* 1 of 3 voters: no majority */
	probe_judge(&c, &out);
	assert_int_equal(out.code, STATUS_DEGRADED);
	assert_string_equal(out.reason, "no quorum: this node reaches 1 of the group's 3 voters");

	c = ready;
	c.member = false;
	probe_judge(&c, &out);
	assert_int_equal(out.code, STATUS_DEGRADED);

	c = ready;
	c.file_pid = 41;		/* left by an earlier imexd */
	probe_judge(&c, &out);
	assert_int_equal(out.code, STATUS_UNKNOWN);

	c = ready;
	c.group_err = -EACCES;		/* not root */
	probe_judge(&c, &out);
	assert_int_equal(out.code, STATUS_UNKNOWN);
	assert_non_null(strstr(out.reason, "Permission denied"));

	c = ready;
	c.manager_pid = 0;
	probe_judge(&c, &out);
	assert_int_equal(out.code, STATUS_NOT_RUNNING);
	assert_string_equal(out.reason, "imexd is not attached to the imex module");

	c = ready;
	c.node_err = -ENODEV;
	probe_judge(&c, &out);
	assert_int_equal(out.code, STATUS_NOT_RUNNING);
	assert_string_equal(out.reason, "the imex module is not loaded");

	c = ready;
	c.node_err = -EPERM;
	probe_judge(&c, &out);
	assert_int_equal(out.code, STATUS_UNKNOWN);
	assert_string_equal(out.reason, "cannot ask the imex module: not permitted");
}

/*
 * imexd writes members.json right after attaching, with the manager pid
 * the kernel reported to it (the initial namespace's tgid, whatever pid
 * namespace imexd runs in), before its group is loaded: the probe says
 * degraded (not yet a member), not unknown.
 */
static void test_node_status_judge_just_attached(void **state)
{
	struct cli_group g = { .node = "a", .pid = 4242 };
	struct imexctl_domain d = { .name = "job1", .state = IMEXCTL_DOMAIN_READY };
	struct node_status_in in = {
		.manager_pid = 4242, .doms = &d, .ndoms = 1,
		.group_path = "/x/members.json", .group = &g,
	};
	struct node_status_out out;

	(void)state;
	node_status_judge(&in, &out);
	assert_int_equal(out.code, STATUS_DEGRADED);
	assert_non_null(strstr(out.reason, "imexd (pid 4242) runs"));

	in.manager_pid = 4243;		/* another instance wrote it */
	node_status_judge(&in, &out);
	assert_int_equal(out.code, STATUS_UNKNOWN);
	assert_non_null(strstr(out.reason, "written by pid 4242"));
}

/* STATE_DIRECTORY from imexd.conf: blanks around '=', the last one wins
 * as imexd would refuse a repeat anyway; no file: the default. */
static void test_node_list_state_dir_from_imexd_conf(void **state)
{
	char path[] = "/tmp/imexd.conf.XXXXXX", dir[256];
	static const char conf[] =
		"# STATE_DIRECTORY=/commented\n"
		"NODE_NAME=a\n"
		"  STATE_DIRECTORY =  /srv/imexd \n";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, conf, sizeof(conf) - 1), (ssize_t)(sizeof(conf) - 1));
	close(fd);
	cli_state_dir(path, dir, sizeof(dir));
	assert_string_equal(dir, "/srv/imexd");
	unlink(path);
	cli_state_dir(path, dir, sizeof(dir));
	assert_string_equal(dir, CLI_STATE_DIR_DEFAULT);
}

/* What imexd writes (tests/imexd/test_store.c has the same text). */
static const char members_text[] =
	"{\"version\":1,\"node\":\"a\",\"pid\":42,\"member\":true,"
	"\"term\":3,\"leader\":\"b\",\"commit\":12,\"applied\":11,"
	"\"config_index\":5,\"members\":["
	"{\"name\":\"a\",\"addr\":\"\",\"role\":\"voter\",\"leader\":false,"
	"\"self\":true,\"connected\":null},"
	"{\"name\":\"b\",\"addr\":\"10.0.0.2:50100\",\"role\":\"voter\","
	"\"leader\":true,\"self\":false,\"connected\":true},"
	"{\"name\":\"d\",\"addr\":\"\",\"role\":\"standby\",\"leader\":false,"
	"\"self\":false,\"connected\":false}]}";

static void capture_print(const struct cli_group *g, const char *stale)
{
	FILE *out = tmpfile();
	int saved = dup(1);

	assert_non_null(out);
	fflush(stdout);
	dup2(fileno(out), 1);
	cli_group_print(g, stale);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	slurp(out, out_text, sizeof(out_text));
}

static void test_node_list_reads_and_prints_the_view(void **state)
{
	struct cli_group g;
	struct json_object *o;
	const char *why = NULL, *js;

	(void)state;
	assert_int_equal(cli_group_parse(members_text, &g, &why), 0);
	assert_string_equal(g.node, "a");
	assert_int_equal(g.pid, 42);
	assert_true(g.member);
	assert_int_equal(g.n, 3);
	assert_string_equal(g.m[2].role, "standby");
	assert_false(g.m[0].has_connected);
	assert_true(g.m[1].connected);

	capture_print(&g, NULL);
	assert_non_null(strstr(out_text, "node:     a (this node's view: imexd pid 42)"));
	assert_non_null(strstr(out_text, "term:     3\n"));
	assert_non_null(strstr(out_text, "leader:   b\n"));
	assert_non_null(strstr(out_text, "commit:   12, applied 11\n"));
	assert_non_null(strstr(out_text, "NAME  ADDRESS         ROLE     LEADER  CONNECTED"));
	assert_non_null(strstr(out_text, "a     a               voter    -       (self)"));
	assert_non_null(strstr(out_text, "b     10.0.0.2:50100  voter    yes     yes"));
	assert_non_null(strstr(out_text, "d     d               standby  -       no"));
	assert_null(strstr(out_text, "note:"));
	assert_null(strstr(out_text, "waits to be joined"));
	capture_print(&g, "written by pid 42, but imexd runs as pid 43");
	assert_non_null(strstr(out_text, "note:     written by pid 42"));

	o = cli_group_json(&g, false);
	js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	assert_non_null(strstr(js, "\"stale\":false"));
	assert_non_null(strstr(js, "\"leader\":\"b\""));
	assert_non_null(strstr(js, "{\"name\":\"d\",\"addr\":\"d\",\"role\":\"standby\","
				   "\"leader\":false,\"self\":false,\"connected\":false}"));
	assert_non_null(strstr(js, "\"self\":true,\"connected\":null"));
	json_object_put(o);
	cli_group_free(&g);

	/* Waiting to be joined: said plainly; no leader known. */
	assert_int_equal(cli_group_parse(
		"{\"version\":1,\"node\":\"z\",\"pid\":7,\"member\":false,"
		"\"term\":0,\"leader\":null,\"commit\":0,\"applied\":0,"
		"\"config_index\":0,\"members\":[]}", &g, &why), 0);
	capture_print(&g, NULL);
	assert_non_null(strstr(out_text,
		"member:   no: this node waits to be joined: run 'imexctl node join z' on a node of the group"));
	assert_non_null(strstr(out_text, "leader:   (not known to this node)"));
	assert_null(strstr(out_text, "NAME"));
	cli_group_free(&g);
}

static void test_node_list_refuses_a_bad_file(void **state)
{
	static const char *const bad[] = {
		"", "[]", "{", "{\"version\":1}",
		"{\"version\":2,\"node\":\"a\",\"pid\":1,\"member\":true,\"term\":0,"
		"\"leader\":null,\"commit\":0,\"applied\":0,\"config_index\":0,\"members\":[]}",
		/* a string where a number goes */
		"{\"version\":1,\"node\":\"a\",\"pid\":\"1\",\"member\":true,\"term\":0,"
		"\"leader\":null,\"commit\":0,\"applied\":0,\"config_index\":0,\"members\":[]}",
		/* a member without a name */
		"{\"version\":1,\"node\":\"a\",\"pid\":1,\"member\":true,\"term\":0,"
		"\"leader\":null,\"commit\":0,\"applied\":0,\"config_index\":0,\"members\":"
		"[{\"addr\":\"\",\"role\":\"voter\",\"leader\":false,\"self\":true,\"connected\":null}]}",
		/* a name too long for the uAPI */
		"{\"version\":1,\"node\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\","
		"\"pid\":1,\"member\":true,\"term\":0,\"leader\":null,\"commit\":0,"
		"\"applied\":0,\"config_index\":0,\"members\":[]}",
	};
	struct cli_group g;
	const char *why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		assert_int_equal(cli_group_parse(bad[i], &g, &why), -EINVAL);
		assert_non_null(why);
		assert_null(g.m);
	}
}

/*
 * The From\To matrix: a member this node does not reach gets a row of '?',
 * not the view it last reported, which may be stale.
 */
static void test_matrix_hides_a_lost_members_stale_view(void **state)
{
	uint8_t view0[3] = { IMEXCTL_MEMBER_SELF, IMEXCTL_MEMBER_CONNECTED,
			     IMEXCTL_MEMBER_DISCONNECTED };
	uint8_t view1[3] = { IMEXCTL_MEMBER_CONNECTED, IMEXCTL_MEMBER_SELF,
			     IMEXCTL_MEMBER_RECOVERING };
	uint8_t view2[3] = { IMEXCTL_MEMBER_CONNECTED, IMEXCTL_MEMBER_CONNECTED,
			     IMEXCTL_MEMBER_SELF };
	struct imexctl_member m[3] = {
		{ .name = "tray1", .addr = "192.0.2.1", .state = IMEXCTL_MEMBER_SELF,
		  .view = view0, .n_view = 3 },
		{ .name = "tray2", .addr = "192.0.2.2", .state = IMEXCTL_MEMBER_CONNECTED,
		  .view = view1, .n_view = 3 },
		{ .name = "tray3", .addr = "192.0.2.3", .state = IMEXCTL_MEMBER_DISCONNECTED,
		  .view = view2, .n_view = 3 },
	};
	struct imexctl_domain d = {
		.name = "job7", .state = IMEXCTL_DOMAIN_DEGRADED, .member_count = 3,
		.member_self = 0, .members = m, .n_members = 3,
	};
	FILE *out = tmpfile();
	int saved = dup(1);

	(void)state;
	assert_non_null(out);
	fflush(stdout);
	dup2(fileno(out), 1);
	domain_print(&d);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	slurp(out, out_text, sizeof(out_text));
	assert_non_null(strstr(out_text, "0 tray1  -  C  D"));
	assert_non_null(strstr(out_text, "1 tray2  C  -  R"));
	/* tray3 last said it saw everyone: stale, since tray1 lost it. */
	assert_non_null(strstr(out_text, "2 tray3  ?  ?  -"));
	assert_null(strstr(out_text, "2 tray3  C"));
	/* A domain not from the library has no reasons: shown as "-". */
	assert_null(strstr(out_text, "reason:"));
}

static void test_since_is_iso8601_utc(void **state)
{
	char buf[32];

	(void)state;
	format_iso8601(1795000000123ULL, false, buf, sizeof(buf));
	assert_string_equal(buf, "2026-11-18T11:06:40Z");
	format_iso8601(1795000000123ULL, true, buf, sizeof(buf));
	assert_string_equal(buf, "2026-11-18T11:06:40.123Z");
	format_iso8601(1795000000007ULL, true, buf, sizeof(buf));
	assert_string_equal(buf, "2026-11-18T11:06:40.007Z");
	format_iso8601(0, true, buf, sizeof(buf));
	assert_string_equal(buf, "");
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_status_judge),
		cmocka_unit_test(test_node_status_judge_just_attached),
		cmocka_unit_test(test_node_list_state_dir_from_imexd_conf),
		cmocka_unit_test(test_node_list_reads_and_prints_the_view),
		cmocka_unit_test(test_node_list_refuses_a_bad_file),
		cmocka_unit_test(test_matrix_hides_a_lost_members_stale_view),
		cmocka_unit_test(test_since_is_iso8601_utc),
	};

	return cmocka_run_group_tests_name("cli_view", tests, NULL, NULL);
}
