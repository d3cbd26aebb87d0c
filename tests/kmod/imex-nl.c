// SPDX-License-Identifier: GPL-2.0
/*
 * imex-nl: drive the imex generic netlink family directly, for the kernel
 * tests.  It speaks every command, including malformed ones, can stand in
 * for the manager (a single-node "serve" loop), and checks expected
 * outcomes, so test scripts read as lists of operations and refusals.
 *
 *   imex-nl [--as-uid UID] [-f SCRIPT | COMMAND [KEY=VALUE...]]
 *
 * A script holds one command per line, all on one netlink socket (so an
 * "attach" lasts until the script ends).  A line may start with !ERRNO to
 * expect that refusal; a following "msg TEXT" line checks that the last
 * extended-ack message contains TEXT.  See usage() for the commands.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <uuid/uuid.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/family.h>
#include <linux/netlink.h>
#include <linux/imex.h>

#include "imex_extack.h"
#include "imex-nl.h"
#include "failnth.h"

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("imex-nl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

const char *kv_get(const struct kv *kv, const char *key)
{
	for (int i = 0; i < kv->n; i++)
		if (!strcmp(kv->key[i], key))
			return kv->val[i];
	return NULL;
}

uint64_t parse_u64(const char *s)
{
	char *end;
	unsigned long long v;

	if (!s)
		die("a value is missing");
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || !*s || *end)
		die("'%s' is not a number", s);
	return v;
}

/* "N" or "LO-HI" (channels=, ids=): the range it names; @s is cut at the dash. */
void parse_range(char *s, uint64_t *lo, uint64_t *hi)
{
	char *dash = strchr(s, '-');

	if (dash)
		*dash = 0;
	*lo = parse_u64(s);
	*hi = dash ? parse_u64(dash + 1) : *lo;
}

static int errno_from_name(const char *name)
{
	for (int e = 1; e < 200; e++) {
		const char *n = strerrorname_np(e);

		if (n && !strcmp(n, name))
			return e;
	}
	die("unknown errno name '%s'", name);
	return 0;
}

const char *errname(int e)
{
	const char *n = e ? strerrorname_np(e) : "OK";

	return n ? n : "E?";
}

static void usage(void)
{
	fputs("usage: imex-nl [--as-uid UID] [-q] [--fail-nth N] [--sweep NAME] (-f SCRIPT | COMMAND [KEY=VALUE...])\n"
	      "  --sweep NAME -f SCRIPT: as the manager, run SCRIPT's last line with each of its\n"
	      "  fault sites failed in turn after the other lines (t-faultinj.sh);\n"
	      "  --sweep-client NAME -f SCRIPT: the same as a client of a running manager\n"
	      "  --fail-nth N (or a script line 'fail-nth N' before a command): fail the\n"
	      "  Nth fault site of the command's request; print 'faultinj injected=0|1\n"
	      "  result=ERRNO' and accept any outcome\n"
	      "commands:\n"
	      "  node-get | node-set [node=] [node_uuid=] [fabric=UUID:PART]\n"
	      "  create name= members=N[@ADDR],... [count=] [channels=1,2-5] [uid= gid= mode=] [nowait=1]\n"
	      "  delete name= | alloc name= count=|channels= | free name= channels= | evict name= member=\n"
	      "  replace name= member= new=\n"
	      "  node-join member= [addr=] | node-leave member=\n"
	      "  domain name=|uuid= | domains | channel id= | channels [name=] | channel-set id= [uid= gid= mode=]\n"
	      "  attach | detach | accept (EBADMSG if the upcall is malformed) | done req= status= [msg=]\n"
	      "  set name= uuid= fabric= members= gen= [channels=LIST [uid= gid= mode=]] [ids=LIST [ids_uid= ids_gid= ids_mode=]]\n"
	      "  remove name= [uuid=]\n"
	      "  status name= state=ready|degraded [view=N:S:VIEW,...]\n"
	      "  serve [count=N] [crash=set] | events [count=N] [timeout=MS] | hold | raw cmd=N [flags=dump] [a=TYPE:KIND:VAL...]\n"
	      "  join group=events|manager: join a multicast group, report the errno\n"
	      "  dump-intr change=CHANNEL (a dump raced by a change must be flagged)\n"
	      "  sh COMMAND (in scripts: a shell step, which must succeed)\n"
	      "  serve import=answer|never|die|hold: how the stand-in treats remote imports\n"
	      "  import-accept [wait=MS] | import-done import_id= istatus= [desc=] | export-del-accept\n"
	      "  import-check handle_id= uuid= chan= member= | import-revoke handle_node= [handle_id=] [uuid=] reason=\n"
	      "  every command accepts a=TYPE:KIND:VALUE raw attributes (KIND u8 u16 u32 u64 str strn long bin flag nest,\n"
	      "  ids:N for N u32 values 0..N-1)\n",
	      stderr);
	exit(2);
}

/* Commands that are one request built from the arguments, replies printed. */
static const struct {
	const char *name;
	int cmd;
	int flags;
	bool request;	/* cmd_request: also wait for the request's outcome */
} simple_cmds[] = {
	{ "node-get", IMEX_CMD_NODE_GET, 0, false },
	{ "create", IMEX_CMD_DOMAIN_CREATE, 0, true },
	{ "delete", IMEX_CMD_DOMAIN_DELETE, 0, true },
	{ "alloc", IMEX_CMD_CHANNEL_ALLOC, 0, true },
	{ "free", IMEX_CMD_CHANNEL_FREE, 0, true },
	{ "evict", IMEX_CMD_MEMBER_EVICT, 0, true },
	{ "replace", IMEX_CMD_MEMBER_REPLACE, 0, true },
	{ "node-join", IMEX_CMD_NODE_JOIN, 0, true },
	{ "node-leave", IMEX_CMD_NODE_LEAVE, 0, true },
	{ "domain", IMEX_CMD_DOMAIN_GET, 0, false },
	{ "domains", IMEX_CMD_DOMAIN_GET, NLM_F_DUMP, false },
	{ "attach", IMEX_CMD_MANAGER_ATTACH, 0, false },
	{ "detach", IMEX_CMD_MANAGER_DETACH, 0, false },
	{ "remove", IMEX_CMD_DOMAIN_REMOVE, 0, false },
	{ "import-done", IMEX_CMD_IMPORT_DONE, 0, false },
	{ "import-check", IMEX_CMD_IMPORT_CHECK, 0, false },
	{ "export-del-accept", IMEX_CMD_EXPORT_DEL_ACCEPT, 0, false },
	{ "import-revoke", IMEX_CMD_IMPORT_REVOKE, 0, false },
};

static int run(struct ctx *c, const char *cmd, const struct kv *kv)
{
	for (size_t i = 0; i < sizeof(simple_cmds) / sizeof(simple_cmds[0]); i++) {
		if (strcmp(cmd, simple_cmds[i].name))
			continue;
		if (simple_cmds[i].request)
			return cmd_request(c, simple_cmds[i].cmd, kv);
		return cmd_simple(c, simple_cmds[i].cmd, kv, simple_cmds[i].flags);
	}
	if (!strcmp(cmd, "node-set"))
		return cmd_node_set(c, kv);
	if (!strcmp(cmd, "channel"))
		return cmd_channel_get(c, kv, false);
	if (!strcmp(cmd, "channels"))
		return cmd_channel_get(c, kv, true);
	if (!strcmp(cmd, "channel-set"))
		return cmd_channel_set(c, kv);
	if (!strcmp(cmd, "accept"))
		return cmd_accept(c, kv);
	if (!strcmp(cmd, "done"))
		return cmd_done(c, kv);
	if (!strcmp(cmd, "set"))
		return cmd_domain_set(c, kv);
	if (!strcmp(cmd, "status"))
		return cmd_status(c, kv);
	if (!strcmp(cmd, "events"))
		return cmd_events(c, kv);
	if (!strcmp(cmd, "import-accept")) {
		/* wait=MS: retry while none is waiting, for at most MS. */
		long left = kv_get(kv, "wait") ? (long)parse_u64(kv_get(kv, "wait")) : 0;
		int err;

		while ((err = cmd_simple(c, IMEX_CMD_IMPORT_ACCEPT, kv, 0)) == ENOENT &&
		       left > 0) {
			usleep(20000);
			left -= 20;
		}
		return err;
	}
	if (!strcmp(cmd, "serve"))
		return cmd_serve(c, kv);
	if (!strcmp(cmd, "dump-intr"))
		return cmd_dump_intr(c, kv);
	if (!strcmp(cmd, "join"))
		return cmd_join(c, kv);
	if (!strcmp(cmd, "hold")) {
		fflush(stdout);
		for (;;)
			pause();
	}
	if (!strcmp(cmd, "raw")) {
		const char *v = kv_get(kv, "cmd"), *f = kv_get(kv, "flags");

		if (!v)
			die("raw needs cmd=N");
		return cmd_simple(c, (int)parse_u64(v), kv,
				  f && !strcmp(f, "dump") ? NLM_F_DUMP : 0);
	}
	die("unknown command '%s'", cmd);
	return 0;
}

/* One line: [!ERRNO] COMMAND KEY=VALUE...  or  msg TEXT */
int run_line(struct ctx *c, char *line, int lineno)
{
	char *argv[MAX_ARGS + 2] = { NULL };
	int argc = 0, expect = 0;
	struct kv kv = { .n = 0 };
	char *save = NULL, *tok;
	int err;

	line[strcspn(line, "\n")] = 0;
	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line || *line == '#')
		return 0;
	if (!strncmp(line, "fail-nth ", 9)) {
		c->fail_nth = (unsigned int)parse_u64(line + 9);
		return 0;
	}
	if (!strncmp(line, "msg ", 4)) {
		if (!strstr(c->msg, line + 4)) {
			fprintf(stderr, "line %d: message '%s' does not contain '%s'\n",
				lineno, c->msg, line + 4);
			return 1;
		}
		return 0;
	}
	/* A shell step between commands on the same (manager) socket. */
	if (!strncmp(line, "sh ", 3)) {
		if (system(line + 3)) {
			fprintf(stderr, "line %d: '%s' failed\n", lineno, line + 3);
			return 1;
		}
		return 0;
	}
	for (tok = strtok_r(line, " \t", &save); tok && argc < MAX_ARGS + 1;
	     tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	if (argc && argv[0][0] == '!') {
		expect = errno_from_name(argv[0] + 1);
		memmove(argv, argv + 1, --argc * sizeof(*argv));
	}
	if (!argc)
		die("line %d: no command", lineno);
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq)
			die("line %d: '%s' is not KEY=VALUE", lineno, argv[i]);
		*eq = 0;
		kv.key[kv.n] = argv[i];
		kv.val[kv.n++] = eq + 1;
	}
	c->armed = c->injected = c->lost_send = false;
	c->lost = 0;
	err = run(c, argv[0], &kv);
	c->fail_nth = 0;
	/* Under fault injection any outcome is reported, for the test to judge. */
	if (c->armed) {
		printf("faultinj injected=%d result=%s%s\n", c->injected,
		       c->lost_send ? "lost-send-" : c->lost ? "lost-" : "",
		       errname(err));
		fflush(stdout);
		return 0;
	}
	if (err != expect) {
		fprintf(stderr, "line %d: %s: expected %s, got %s (%s)\n", lineno,
			argv[0], errname(expect), errname(err), c->msg);
		return 1;
	}
	if (err && !c->quiet)
		printf("refused %s: %s\n", errname(err), c->msg);
	fflush(stdout);
	return 0;
}

static void drop_to_uid(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		die("cannot become uid %u: %s", uid, strerror(errno));
}

int main(int argc, char **argv)
{
	const char *script = NULL;
	struct ctx c;
	int i = 1, failed = 0;
	unsigned int fail_nth = 0;
	const char *sweep_name = NULL;
	bool quiet = false, sweep_client = false;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--as-uid") && i + 1 < argc)
			drop_to_uid((uid_t)parse_u64(argv[++i]));
		else if (!strcmp(argv[i], "-f") && i + 1 < argc)
			script = argv[++i];
		else if (!strcmp(argv[i], "-q"))
			quiet = true;
		else if (!strcmp(argv[i], "--fail-nth") && i + 1 < argc)
			fail_nth = (unsigned int)parse_u64(argv[++i]);
		else if (!strcmp(argv[i], "--sweep") && i + 1 < argc)
			sweep_name = argv[++i];
		else if (!strcmp(argv[i], "--sweep-client") && i + 1 < argc)
			sweep_name = argv[++i], sweep_client = true;
		else
			usage();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ctx_init(&c);
	c.quiet = quiet;
	if (fail_nth && failnth_open() < 0)
		die("no /proc/thread-self/fail-nth: %s", strerror(errno));
	if (sweep_name) {
		FILE *f = script ? fopen(script, "r") : NULL;
		char *lines[MAX_ARGS], line[8192];
		int n = 0;

		if (!f)
			die("--sweep needs -f SCRIPT");
		if (failnth_open() < 0)
			die("no /proc/thread-self/fail-nth: %s", strerror(errno));
		while (n < MAX_ARGS && fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			if (line[0] && line[0] != '#')
				lines[n++] = strdup(line);
		}
		fclose(f);
		if (!n)
			die("--sweep: the script has no operation");
		failed = sweep(&c, sweep_name, lines, n, sweep_client);
		while (n > 0)
			free(lines[--n]);
		return failed;
	}
	if (script) {
		FILE *f = strcmp(script, "-") ? fopen(script, "r") : stdin;
		static char line[1 << 20];	/* member lists of long names */
		int lineno = 0;

		if (!f)
			die("cannot open %s: %s", script, strerror(errno));
		while (fgets(line, sizeof(line), f) && !failed)
			failed = run_line(&c, line, ++lineno);
		return failed;
	}
	if (i >= argc)
		usage();
	{
		char buf[8192] = "";

		for (int j = i; j < argc; j++) {
			strncat(buf, argv[j], sizeof(buf) - strlen(buf) - 2);
			strcat(buf, " ");
		}
		c.fail_nth = fail_nth;
		return run_line(&c, buf, 0);
	}
}
