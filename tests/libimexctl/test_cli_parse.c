// SPDX-License-Identifier: GPL-2.0-only
/*
 * imexctl's command line: every malformed invocation is a usage error (exit
 * 2) that opens no netlink socket, and well-formed ones parse into the
 * expected values.  No kernel needed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "args.h"
#include "cli.h"
#include "node_list.h"
#include "node_status.h"
#include "test_util.h"

/* Interposed over libc's socket() (libnl included): counts netlink sockets. */
static int netlink_sockets;

int socket(int domain, int type, int protocol)
{
	static int (*real)(int, int, int);

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "socket");
	if (domain == AF_NETLINK)
		netlink_sockets++;
	return real(domain, type, protocol);
}

static char err_text[8192];
static char out_text[8192];

/* Run imexctl with @args (NULL-terminated); capture stdout and stderr. */
static int run_v(const char *const *args)
{
	char *argv[64];
	int argc = 0, r, saved_out, saved_err;
	FILE *out = tmpfile(), *err = tmpfile();
	size_t i;

	assert_non_null(out);
	assert_non_null(err);
	argv[argc++] = strdup("imexctl");
	for (i = 0; args[i] && argc < 63; i++)
		argv[argc++] = strdup(args[i]);
	argv[argc] = NULL;

	fflush(stdout);
	fflush(stderr);
	saved_out = dup(1);
	saved_err = dup(2);
	dup2(fileno(out), 1);
	dup2(fileno(err), 2);
	r = cli_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	slurp(out, out_text, sizeof(out_text));
	slurp(err, err_text, sizeof(err_text));
	while (argc)
		free(argv[--argc]);
	return r;
}

/* No variadic sentinel: the arguments become a NULL-terminated array. */
#define run(...) run_v((const char *const[]){ __VA_ARGS__, NULL })

/* A usage error: exit 2, a message with the usage line, no netlink at all. */
#define USAGE(...) do { \
	int before_ = netlink_sockets; \
	assert_int_equal(run(__VA_ARGS__, NULL), EXIT_USAGE); \
	assert_int_equal(netlink_sockets, before_); \
	assert_non_null(strstr(err_text, "usage")); \
} while (0)

static const char uuid_ok[] = "4f8a1c2e-9b3d-4e5f-8a6b-7c8d9e0f1a2b";

static void test_no_args_and_unknown_words_are_usage_errors(void **state)
{
	(void)state;
	assert_int_equal(run(NULL, NULL), EXIT_USAGE);
	USAGE("frobnicate");
	USAGE("domain");
	USAGE("domain", "frobnicate");
	USAGE("--bogus", "domain", "list");
	USAGE("domain", "list", "--bogus");
	USAGE("domain", "list", "extra");
	USAGE("module", "status", "extra");
}

static void test_help_on_every_level_exits_0(void **state)
{
	static const char *const verbs[][2] = {
		{ "module", "load" }, { "module", "unload" }, { "module", "status" },
		{ "node", "show" }, { "node", "set-fabric" }, { "node", "set-name" },
		{ "node", "join" }, { "node", "leave" }, { "node", "list" },
		{ "domain", "create" }, { "domain", "delete" }, { "domain", "list" },
		{ "domain", "show" }, { "domain", "wait" }, { "domain", "evict" },
		{ "domain", "replace" },
		{ "channel", "list" }, { "channel", "set" }, { "channel", "alloc" },
		{ "channel", "free" }, { "cdi", "generate" }, { "cdi", "remove" },
		{ "cdi", "list" }, { "tls", "init-ca" }, { "tls", "issue" },
	};
	size_t i;

	(void)state;
	assert_int_equal(run("--help", NULL), EXIT_OK);
	assert_non_null(strstr(out_text, "usage: imexctl"));
	assert_int_equal(run("-h", NULL), EXIT_OK);
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		assert_int_equal(run(verbs[i][0], "--help", NULL), EXIT_OK);
		assert_int_equal(run(verbs[i][0], verbs[i][1], "--help", NULL), EXIT_OK);
		assert_non_null(strstr(out_text, verbs[i][1]));
		assert_int_equal(run(verbs[i][0], verbs[i][1], "-h", NULL), EXIT_OK);
	}
}

static void test_bad_numbers_are_usage_errors(void **state)
{
	(void)state;
	USAGE("domain", "create", "j", "--nodes", "a", "--channels", "12x");
	USAGE("domain", "create", "j", "--nodes", "a", "--channels", "-1");
	USAGE("domain", "create", "j", "--nodes", "a", "--channels", "+1");
	USAGE("domain", "create", "j", "--nodes", "a", "--channels", " 1");
	USAGE("domain", "create", "j", "--nodes", "a", "--channels", "");
	USAGE("domain", "create", "j", "--nodes", "a", "--channels", "99999999999999999999999");
	USAGE("domain", "create", "j", "--nodes", "a", "--channels", "4097");
	USAGE("domain", "create", "j", "--nodes", "a", "--channel", "1048576");
	USAGE("domain", "create", "j", "--nodes", "a", "--timeout", "1.5");
	USAGE("domain", "create", "j", "--nodes", "a", "--timeout", "2147484");
	USAGE("domain", "wait", "j", "--timeout", "10s");
	USAGE("domain", "delete", "j", "--timeout", "0");	/* requests need time */
	USAGE("module", "load", "--max-channels", "0x10");
	USAGE("module", "load", "--max-channels", "0");
	USAGE("module", "load", "--max-channels", "1048577");
	USAGE("node", "set-fabric", uuid_ok, "4294967296");
	USAGE("node", "set-fabric", uuid_ok, "-3");
	USAGE("channel", "set", "j/abc", "--mode", "600");
	USAGE("channel", "set", "j/-1", "--mode", "600");
	USAGE("channel", "set", "j/1048576", "--mode", "600");
	USAGE("channel", "alloc", "--domain", "j", "--count", "0");
	USAGE("channel", "alloc", "--domain", "j", "--count", "1e3");
	USAGE("channel", "free", "j/7x");
	USAGE("cdi", "generate", "--domain", "j", "--id", "x", "--channel", "007a");
	USAGE("domain", "create", "j", "--nodes", "a", "--owner", "1000:1000x");
	USAGE("domain", "create", "j", "--nodes", "a", "--owner", "4294967295:0");
	USAGE("domain", "create", "j", "--nodes", "a", "--owner", "-1:0");
	assert_non_null(strstr(err_text, "--owner"));
}

static void test_bad_names_are_usage_errors(void **state)
{
	char long_name[80];

	(void)state;
	memset(long_name, 'a', 64);
	long_name[64] = '\0';
	USAGE("domain", "create", "-bad", "--nodes", "a");
	USAGE("domain", "create", "_bad", "--nodes", "a");
	USAGE("domain", "create", "bad name", "--nodes", "a");
	USAGE("domain", "create", "bad/name", "--nodes", "a");
	USAGE("domain", "create", "", "--nodes", "a");
	USAGE("domain", "create", long_name, "--nodes", "a");
	USAGE("domain", "show", "bad:name");
	USAGE("domain", "delete", "é");
	USAGE("domain", "wait", ".hidden");
	USAGE("domain", "evict", "j", "bad!member");
	USAGE("domain", "replace", "j", "bad!member", "n2");
	USAGE("domain", "replace", "j", "n1", "bad!new");
	USAGE("domain", "replace", "bad!j", "n1", "n2");
	USAGE("channel", "list", "--domain", "a b");
	USAGE("channel", "set", "/3", "--mode", "600");
	USAGE("channel", "alloc", "--domain", "-x");
	USAGE("node", "set-name", "-x");
	USAGE("node", "join", "bad!node");
	USAGE("node", "join", "n2=");
	USAGE("node", "join", "n2=a b");
	USAGE("node", "join", "n2=host:99999");
	USAGE("node", "join", "-n2=host");
	USAGE("node", "leave", "n2=host");
	USAGE("node", "leave", "");
	USAGE("module", "load", "--node-name", "a b");
	/* member lists */
	USAGE("domain", "create", "j", "--nodes", "a=192.0.2.1,a=192.0.2.2");
	USAGE("domain", "create", "j", "--nodes", "a=,b");
	USAGE("domain", "create", "j", "--nodes", "a,,b");
	USAGE("domain", "create", "j", "--nodes", "a,");
	USAGE("domain", "create", "j", "--nodes", "bad!=192.0.2.1");
	USAGE("domain", "create", "j", "--nodes", "a=host:99999");
	USAGE("domain", "create", "j", "--nodes", "a=host:0");
	USAGE("domain", "create", "j", "--nodes", "a=host:http");
	USAGE("domain", "create", "j", "--nodes", "a=[::1");
	USAGE("domain", "create", "j", "--nodes", "a=[::1]x");
	USAGE("domain", "create", "j", "--nodes", "a=ho st");
	/* CDI names */
	USAGE("cdi", "generate", "--domain", "j", "--id", "a/b");
	USAGE("cdi", "generate", "--domain", "j", "--id", ".hidden");
	USAGE("cdi", "generate", "--domain", "j", "--id", "x-");
	USAGE("cdi", "generate", "--domain", "j", "--id", "x", "--vendor", "1abc");
	USAGE("cdi", "generate", "--domain", "j", "--id", "x", "--vendor", "a/b");
	USAGE("cdi", "generate", "--domain", "j", "--id", "x", "--class", "a-");
	USAGE("cdi", "generate", "--domain", "j", "--id", "x", "--class", "a:b");
	USAGE("cdi", "generate", "--domain", "j", "--id", "x", "--all-name", "-all");
	USAGE("cdi", "remove", "--id", "../etc");
	USAGE("cdi", "list", "--vendor", "");
	assert_non_null(strstr(err_text, "--vendor"));
}

static void test_bad_uuids_are_usage_errors(void **state)
{
	(void)state;
	USAGE("module", "load", "--fabric", "not-a-uuid:1");
	USAGE("module", "load", "--fabric", uuid_ok);
	USAGE("module", "load", "--fabric", "4f8a1c2e-9b3d-4e5f-8a6b-7c8d9e0f1a2b:");
	USAGE("module", "load", "--fabric", "4f8a1c2e-9b3d-4e5f-8a6b-7c8d9e0f1a2:1");
	USAGE("module", "load", "--fabric", "4f8a1c2e-9b3d-4e5f-8a6b-7c8d9e0f1a2bb:1");
	USAGE("module", "load", "--fabric", "4f8a1c2e9b3d-4e5f-8a6b-7c8d9e0f1a2bc:1");
	USAGE("module", "load", "--fabric", "00000000-0000-0000-0000-000000000000:1");
	USAGE("node", "set-fabric", "4f8a1c2e-9b3d-4e5f-8a6b-7c8d9e0f1a2g", "1");
	USAGE("node", "set-fabric", "00000000-0000-0000-0000-000000000000", "1");
	USAGE("domain", "create", "j", "--nodes", "a", "--uuid", "xyz");
	assert_non_null(strstr(err_text, "UUID"));
}

static void test_bad_modes_are_usage_errors(void **state)
{
	(void)state;
	USAGE("domain", "create", "j", "--nodes", "a", "--mode", "0800");
	USAGE("domain", "create", "j", "--nodes", "a", "--mode", "1777");
	USAGE("domain", "create", "j", "--nodes", "a", "--mode", "4755");
	USAGE("domain", "create", "j", "--nodes", "a", "--mode", "rw");
	USAGE("domain", "create", "j", "--nodes", "a", "--mode", "");
	USAGE("channel", "set", "j/1", "--mode", "9");
	USAGE("channel", "set", "j/1", "--mode", "-600");
	assert_non_null(strstr(err_text, "--mode"));
}

static void test_missing_arguments_are_usage_errors(void **state)
{
	(void)state;
	USAGE("domain", "create");
	USAGE("domain", "create", "j");
	USAGE("domain", "create", "--nodes", "a");
	USAGE("domain", "create", "j", "--nodes");
	USAGE("domain", "delete");
	USAGE("domain", "show");
	USAGE("domain", "wait");
	USAGE("domain", "wait", "j", "--state");
	USAGE("domain", "wait", "j", "--state", "up");
	USAGE("domain", "evict", "j");
	USAGE("domain", "replace", "j");
	USAGE("domain", "replace", "j", "n1");
	USAGE("domain", "replace", "j", "n1", "n2", "n3");
	USAGE("domain", "replace", "j", "n1", "n1");
	USAGE("domain", "replace", "j", "n1", "n2", "--timeout", "0");
	USAGE("node", "join");
	USAGE("node", "join", "n2", "n3");
	USAGE("node", "leave");
	USAGE("node", "leave", "n2", "--timeout");
	USAGE("node", "set-fabric");
	USAGE("node", "set-fabric", uuid_ok);
	USAGE("node", "set-fabric", uuid_ok, "1", "2");
	USAGE("node", "set-name");
	USAGE("channel", "set");
	USAGE("channel", "set", "j/1");
	USAGE("channel", "alloc");
	USAGE("channel", "alloc", "--count", "2");
	USAGE("channel", "free");
	USAGE("cdi", "generate");
	USAGE("cdi", "generate", "--domain", "j");
	USAGE("cdi", "generate", "--id", "x");
	USAGE("cdi", "remove");
	USAGE("module", "load", "--max-channels");
	USAGE("tls", "init-ca");
	USAGE("tls", "init-ca", "d", "extra");
	USAGE("tls", "issue");
	USAGE("tls", "issue", "d");
	USAGE("tls", "issue", "d", "n1", "--days");
}

static void test_conflicting_options_are_usage_errors(void **state)
{
	(void)state;
	USAGE("domain", "create", "j", "--nodes", "a", "--channels", "2", "--channel", "1");
	USAGE("domain", "create", "j", "--nodes", "a", "--channel", "1", "--channel", "1");
	USAGE("channel", "alloc", "--domain", "j", "--count", "2", "--channel", "1");
	USAGE("channel", "free", "a/1", "b/2");
	USAGE("channel", "free", "a/1", "a/1");
	USAGE("cdi", "generate", "--domain", "j", "--stdout", "--dir", "/tmp");
}

static void test_domain_create_parses_members_channels_owner_mode(void **state)
{
	char *argv[] = { "create", "job7", "--nodes", "a=192.0.2.1:50000,b", "--nodes",
			 "c=[fe80::1]:7", "--channel", "5", "--channel", "3", "--owner",
			 "1000:100", "--mode", "0660", "--uuid", (char *)uuid_ok,
			 "--timeout", "30", "--no-wait", "--json", NULL };
	struct domain_create_args a = { 0 };

	(void)state;
	assert_int_equal(domain_create_parse(20, argv, &a), 0);
	assert_string_equal(a.spec.name, "job7");
	assert_int_equal(a.spec.n_members, 3);
	assert_string_equal(a.spec.members[0].name, "a");
	assert_string_equal(a.spec.members[0].addr, "192.0.2.1:50000");
	assert_string_equal(a.spec.members[1].name, "b");
	assert_null(a.spec.members[1].addr);
	assert_string_equal(a.spec.members[2].addr, "[fe80::1]:7");
	assert_int_equal(a.spec.n_channel_ids, 2);
	assert_int_equal(a.spec.channel_ids[0], 5);
	assert_int_equal(a.spec.channel_ids[1], 3);
	assert_true(a.spec.set_owner);
	assert_int_equal(a.spec.uid, 1000);
	assert_int_equal(a.spec.gid, 100);
	assert_true(a.spec.set_mode);
	assert_int_equal(a.spec.mode, 0660);
	assert_ptr_equal(a.spec.uuid, a.uuid);
	assert_int_equal(a.uuid[0], 0x4f);
	assert_int_equal(a.timeout_ms, 30000);
	assert_true(a.no_wait);
	assert_true(a.json);
	domain_create_args_free(&a);
}

/* Reasons are a peer's words: nothing in them reaches a terminal raw. */
static void test_reasons_escaped_for_terminals(void **state)
{
	char *e;

	(void)state;
	e = text_escape("TLS: names 'x\x1b[2J', \"q\" \\ \x7f\n");
	assert_non_null(e);
	assert_string_equal(e, "TLS: names 'x\\x1b[2J', \\\"q\\\" \\\\ \\x7f\\x0a");
	free(e);
	e = text_escape("");
	assert_string_equal(e, "");
	free(e);
}

static void test_defaults_are_filled_in(void **state)
{
	char *create[] = { "create", "j", "--nodes", "a", NULL };
	char *wait[] = { "wait", "j", NULL };
	char *alloc[] = { "alloc", "--domain", "j", NULL };
	struct domain_create_args c = { 0 };
	struct domain_wait_args w = { 0 };
	struct channel_alloc_args al = { 0 };

	(void)state;
	assert_int_equal(domain_create_parse(4, create, &c), 0);
	assert_int_equal(c.spec.channel_count, 0);
	assert_false(c.spec.set_owner);
	assert_false(c.spec.set_mode);
	assert_null(c.spec.uuid);
	assert_int_equal(c.timeout_ms, CLI_REQUEST_TIMEOUT_S * 1000);
	domain_create_args_free(&c);
	assert_int_equal(domain_wait_parse(2, wait, &w), 0);
	assert_int_equal(w.state, IMEXCTL_DOMAIN_READY);
	assert_int_equal(w.timeout_ms, CLI_WAIT_TIMEOUT_S * 1000);
	assert_int_equal(channel_alloc_parse(3, alloc, &al), 0);
	assert_int_equal(al.count, 1);
	free(al.ids.v);
}

static void test_domain_replace_parse(void **state)
{
	char *full[] = { "replace", "job7", "n3", "spare1", "--timeout", "30", "--json", NULL };
	char *plain[] = { "replace", "job7", "n3", "spare1", NULL };
	struct domain_replace_args r = { 0 };

	(void)state;
	assert_int_equal(domain_replace_parse(7, full, &r), 0);
	assert_string_equal(r.name, "job7");
	assert_string_equal(r.member, "n3");
	assert_string_equal(r.with, "spare1");
	assert_int_equal(r.timeout_ms, 30000);
	assert_true(r.json);
	r = (struct domain_replace_args){ 0 };
	assert_int_equal(domain_replace_parse(4, plain, &r), 0);
	assert_int_equal(r.timeout_ms, CLI_REQUEST_TIMEOUT_S * 1000);
	assert_false(r.json);
}

static void test_node_join_and_leave_parse(void **state)
{
	char a1[] = "n2=192.0.2.2:7777", a2[] = "n3", a3[] = "n4=[fd00::4]:7000";
	char *join1[] = { "join", a1, "--timeout", "9", NULL };
	char *join2[] = { "join", a2, NULL };
	char *join3[] = { "join", a3, NULL };
	char *leave[] = { "leave", "n2", NULL };
	struct node_member_args j = { 0 };

	(void)state;
	assert_int_equal(node_join_parse(4, join1, &j), 0);
	assert_string_equal(j.name, "n2");
	assert_string_equal(j.addr, "192.0.2.2:7777");
	assert_int_equal(j.timeout_ms, 9000);
	j = (struct node_member_args){ 0 };
	assert_int_equal(node_join_parse(2, join2, &j), 0);
	assert_string_equal(j.name, "n3");
	assert_null(j.addr);
	assert_int_equal(j.timeout_ms, CLI_REQUEST_TIMEOUT_S * 1000);
	j = (struct node_member_args){ 0 };
	assert_int_equal(node_join_parse(2, join3, &j), 0);
	assert_string_equal(j.addr, "[fd00::4]:7000");
	j = (struct node_member_args){ 0 };
	assert_int_equal(node_leave_parse(2, leave, &j), 0);
	assert_string_equal(j.name, "n2");
	assert_null(j.addr);
}

static void test_monitor_parse(void **state)
{
	char *plain[] = { "monitor", NULL };
	char *filtered[] = { "monitor", "--json", "--domain", "job7", NULL };
	struct monitor_args m = { 0 };

	(void)state;
	assert_int_equal(monitor_parse(1, plain, &m), 0);
	assert_null(m.domain);
	assert_false(m.json);
	assert_int_equal(monitor_parse(4, filtered, &m), 0);
	assert_string_equal(m.domain, "job7");
	assert_true(m.json);
	USAGE("monitor", "job7");
	USAGE("monitor", "--domain", "a/b");
	USAGE("monitor", "--domain");
	USAGE("monitor", "--timeout", "3");
	assert_int_equal(run("monitor", "--help", NULL), EXIT_OK);
	assert_non_null(strstr(out_text, "SIGINT"));
}

static void test_node_list_parse(void **state)
{
	char *plain[] = { "list", NULL };
	char *dir[] = { "list", "--state-dir", "/srv/imexd", "--json", NULL };
	struct node_list_args l = { 0 };

	(void)state;
	assert_int_equal(node_list_parse(1, plain, &l), 0);
	assert_null(l.state_dir);
	assert_false(l.json);
	assert_int_equal(node_list_parse(4, dir, &l), 0);
	assert_string_equal(l.state_dir, "/srv/imexd");
	assert_true(l.json);
	USAGE("node", "list", "n2");
	USAGE("node", "list", "--state-dir", "");
	USAGE("node", "list", "--state-dir");
}

static void test_node_status_parse(void **state)
{
	char *plain[] = { "status", NULL };
	char *dir[] = { "status", "--state-dir", "/srv/imexd", "--json", NULL };
	struct node_status_args s = { 0 };

	(void)state;
	assert_int_equal(node_status_parse(1, plain, &s), 0);
	assert_null(s.state_dir);
	assert_false(s.json);
	assert_int_equal(node_status_parse(4, dir, &s), 0);
	assert_string_equal(s.state_dir, "/srv/imexd");
	assert_true(s.json);
	USAGE("node", "status", "n2");
	USAGE("node", "status", "--state-dir", "");
	USAGE("node", "status", "--bogus");
}

static void test_module_load_parses_fabric_and_limits(void **state)
{
	char *argv[] = { "load", "--max-channels", "4096", "--fabric",
			 "4F8A1C2E-9B3D-4E5F-8A6B-7C8D9E0F1A2B:4294967295", "--node-name",
			 "tray03", "--module-path", "/tmp/imex.ko", NULL };
	struct module_load_args a = { 0 };

	(void)state;
	assert_int_equal(module_load_parse(9, argv, &a), 0);
	assert_int_equal(a.params.max_channels, 4096);
	assert_true(a.params.has_fabric);
	assert_int_equal(a.params.fabric_uuid[15], 0x2b);
	assert_int_equal(a.params.fabric_partition, UINT32_MAX);
	assert_string_equal(a.params.node_name, "tray03");
	assert_string_equal(a.params.path, "/tmp/imex.ko");
}

static void test_channel_refs_and_wait_state_parse(void **state)
{
	char *set[] = { "set", "job7/12", "--mode", "0", NULL };
	char *fr[] = { "free", "job7/3", "job7/1", NULL };
	char *wait[] = { "wait", "j", "--state", "degraded", "--timeout", "0", NULL };
	struct channel_set_args s = { 0 };
	struct channel_free_args f = { 0 };
	struct domain_wait_args w = { 0 };

	(void)state;
	assert_int_equal(channel_set_parse(4, set, &s), 0);
	assert_string_equal(s.domain, "job7");
	assert_int_equal(s.id, 12);
	assert_true(s.change.set_mode);
	assert_int_equal(s.change.mode, 0);
	assert_false(s.change.set_owner);
	assert_int_equal(channel_free_parse(3, fr, &f), 0);
	assert_string_equal(f.domain, "job7");
	assert_int_equal(f.ids.n, 2);
	free(f.ids.v);
	assert_int_equal(domain_wait_parse(6, wait, &w), 0);
	assert_int_equal(w.state, IMEXCTL_DOMAIN_DEGRADED);
	assert_int_equal(w.timeout_ms, 0);
}

static void test_cdi_options_parse(void **state)
{
	char *gen[] = { "generate", "--domain", "j", "--channel", "0", "--channel", "7",
			"--id", "slurm-1234.0", "--vendor", "example.com", "--class", "imex",
			"--dir", "/run/cdi", "--no-overwrite", "--all-name", "", NULL };
	char *out[] = { "generate", "--domain", "j", "--stdout", NULL };
	struct cdi_generate_args g = { 0 }, o = { 0 };

	(void)state;
	assert_int_equal(cdi_generate_parse(18, gen, &g), 0);
	assert_string_equal(g.domain, "j");
	assert_int_equal(g.ids.n, 2);
	assert_string_equal(g.id, "slurm-1234.0");
	assert_string_equal(g.opts.vendor, "example.com");
	assert_string_equal(g.opts.class_name, "imex");
	assert_string_equal(g.opts.dir, "/run/cdi");
	assert_true(g.opts.no_overwrite);
	assert_string_equal(g.opts.all_name, "");
	free(g.ids.v);
	assert_int_equal(cdi_generate_parse(4, out, &o), 0);
	assert_true(o.to_stdout);
	assert_null(o.id);
}

static void test_tls_parse(void **state)
{
	char *init[] = { "init-ca", "/root/ca", NULL };
	char *issue[] = { "issue", "/root/ca", "n1", "n2", "--days", "30", NULL };
	struct tls_args i = { 0 }, s = { 0 };

	(void)state;
	assert_int_equal(tls_init_ca_parse(2, init, &i), 0);
	assert_string_equal(i.dir, "/root/ca");
	assert_int_equal(i.days, 3650);
	assert_int_equal(tls_issue_parse(6, issue, &s), 0);
	assert_string_equal(s.dir, "/root/ca");
	assert_int_equal(s.nnodes, 2);
	assert_string_equal(s.nodes[1], "n2");
	assert_int_equal(s.days, 30);
	USAGE("tls", "issue", "/root/ca", "n1", "--days", "0");
	USAGE("tls", "issue", "/root/ca", "n1", "--days", "36501");
	USAGE("tls", "issue", "/root/ca", "bad/name");
	USAGE("tls", "issue", "/root/ca", "ca");
	USAGE("tls", "init-ca", "");
}

static void test_value_parsers_say_why(void **state)
{
	const char *why = NULL;
	uint32_t v, uid, gid;

	(void)state;
	assert_int_equal(parse_u32("4294967295", 0, UINT32_MAX, &v, &why), 0);
	assert_int_equal(v, UINT32_MAX);
	assert_int_equal(parse_u32("4294967296", 0, UINT32_MAX, &v, &why), -ERANGE);
	assert_string_equal(why, "number too large");
	assert_int_equal(parse_u32("-1", 0, 10, &v, &why), -EINVAL);
	assert_string_equal(why, "negative numbers are not allowed");
	assert_int_equal(parse_u32("0", 1, 10, &v, &why), -ERANGE);
	assert_int_equal(parse_mode("777", &v, &why), 0);
	assert_int_equal(v, 0777);
	assert_int_equal(parse_owner("0:0", &uid, &gid, &why), 0);
	assert_int_equal(parse_owner(":0", &uid, &gid, &why), -EINVAL);
	assert_int_equal(parse_owner("0:", &uid, &gid, &why), -EINVAL);
	assert_int_equal(parse_name("a", &why), 0);
	assert_int_equal(parse_name("a.b_c-D9", &why), 0);
}

static void test_valid_commands_fail_cleanly_without_the_module(void **state)
{
	struct imexctl *ctx;
	struct imexctl_node node;
	int loaded, before;

	(void)state;
	assert_int_equal(imexctl_new(&ctx), 0);
	loaded = imexctl_node_get(ctx, &node) != -ENODEV;
	imexctl_free(ctx);
	if (loaded)
		skip();	/* the module is loaded here: covered by the VM tests */

	before = netlink_sockets;
	assert_int_equal(run("node", "show", NULL), EXIT_FAIL);
	/* The counter works: a valid command does reach for netlink. */
	assert_true(netlink_sockets > before);
	assert_non_null(strstr(err_text, "not loaded"));
	assert_non_null(strstr(err_text, "imexctl module load"));
	assert_int_equal(run("domain", "list", NULL), EXIT_FAIL);
	assert_int_equal(run("domain", "show", "j", NULL), EXIT_FAIL);
	assert_int_equal(run("--json", "channel", "list", NULL), EXIT_FAIL);
	assert_int_equal(run("domain", "create", "j", "--nodes", "a", NULL), EXIT_FAIL);
	assert_non_null(strstr(err_text, "not loaded"));
	assert_int_equal(run("domain", "wait", "j", "--timeout", "0", NULL), EXIT_FAIL);
	assert_int_equal(run("node", "join", "n2=192.0.2.2", NULL), EXIT_FAIL);
	assert_non_null(strstr(err_text, "not loaded"));
	assert_int_equal(run("--json", "node", "leave", "n2", NULL), EXIT_FAIL);
	assert_int_equal(run("node", "list", NULL), EXIT_FAIL);
	assert_non_null(strstr(err_text, "not loaded"));
	assert_int_equal(run("monitor", "--json", NULL), EXIT_FAIL);
	assert_non_null(strstr(err_text, "not loaded"));
	assert_int_equal(run("cdi", "generate", "--domain", "j", "--stdout", NULL), EXIT_FAIL);
	assert_int_equal(run("module", "status", NULL), EXIT_OK);
	assert_non_null(strstr(out_text, "not loaded"));
	assert_int_equal(run("--json", "module", "status", NULL), EXIT_OK);
	assert_non_null(strstr(out_text, "\"loaded\": false"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_args_and_unknown_words_are_usage_errors),
		cmocka_unit_test(test_help_on_every_level_exits_0),
		cmocka_unit_test(test_bad_numbers_are_usage_errors),
		cmocka_unit_test(test_bad_names_are_usage_errors),
		cmocka_unit_test(test_bad_uuids_are_usage_errors),
		cmocka_unit_test(test_bad_modes_are_usage_errors),
		cmocka_unit_test(test_missing_arguments_are_usage_errors),
		cmocka_unit_test(test_conflicting_options_are_usage_errors),
		cmocka_unit_test(test_domain_create_parses_members_channels_owner_mode),
		cmocka_unit_test(test_defaults_are_filled_in),
		cmocka_unit_test(test_reasons_escaped_for_terminals),
		cmocka_unit_test(test_node_join_and_leave_parse),
		cmocka_unit_test(test_domain_replace_parse),
		cmocka_unit_test(test_monitor_parse),
		cmocka_unit_test(test_node_list_parse),
		cmocka_unit_test(test_node_status_parse),
		cmocka_unit_test(test_module_load_parses_fabric_and_limits),
		cmocka_unit_test(test_channel_refs_and_wait_state_parse),
		cmocka_unit_test(test_cdi_options_parse),
		cmocka_unit_test(test_tls_parse),
		cmocka_unit_test(test_value_parsers_say_why),
		cmocka_unit_test(test_valid_commands_fail_cleanly_without_the_module),
	};

	return cmocka_run_group_tests_name("cli_parse", tests, NULL, NULL);
}
