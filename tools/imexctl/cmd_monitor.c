// SPDX-License-Identifier: GPL-2.0-only
/*
 * imexctl monitor [--json] [--domain NAME]: one line (or one JSON object)
 * per event of the module's "events" group, as it happens, like
 * `ip monitor`.  SIGINT and SIGTERM end it with status 0; events the
 * kernel dropped are said, not hidden.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <linux/imex.h>

#include "args.h"
#include "cli.h"
#include "print.h"

static const char monitor_synopsis[] = "[--json] [--domain NAME]";
static const char monitor_help[] =
	"Follow this node's imex events as they happen: domains created, changed\n"
	"(state, reason, members whose state changed and why) and deleted, channels\n"
	"granted, changed and revoked, requests finished, imexd attaching and\n"
	"detaching, imports revoked. One line per event, or with --json one JSON\n"
	"object per line; each starts with the time. Needs no privileges.\n"
	"Runs until SIGINT or SIGTERM (exit status 0). If the kernel dropped events\n"
	"because this reader fell behind, a 'lost' event says so and it goes on.\n\n"
	"  --domain NAME  only events of domain NAME (lost events are always shown)\n"
	"  --json         one JSON object per line\n";

static const char lost_text[] =
	"the kernel dropped events for this reader, its socket buffer was full; re-read the state that matters";

static const struct option domain_opt = { "domain", required_argument, NULL, OPT_FIRST };

int monitor_parse(int argc, char **argv, struct monitor_args *a)
{
	return cli_one_opt_parse("monitor", monitor_synopsis, monitor_help, argc, argv,
				 &a->json, &domain_opt, parse_name, &a->domain);
}

static const char *req_cmd_name(uint32_t cmd)
{
	switch (cmd) {
	case IMEX_CMD_DOMAIN_CREATE: return "domain-create";
	case IMEX_CMD_DOMAIN_DELETE: return "domain-delete";
	case IMEX_CMD_CHANNEL_ALLOC: return "channel-alloc";
	case IMEX_CMD_CHANNEL_FREE: return "channel-free";
	case IMEX_CMD_MEMBER_EVICT: return "member-evict";
	case IMEX_CMD_MEMBER_REPLACE: return "member-replace";
	case IMEX_CMD_NODE_JOIN: return "node-join";
	case IMEX_CMD_NODE_LEAVE: return "node-leave";
	default: return "other";
	}
}

static uint64_t realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Reasons are free text from imexd: quoted, with quotes and controls escaped. */
static void print_quoted(const char *s)
{
	char *e = text_escape(s);

	printf("\"%s\"", e ? e : "(no memory)");
	free(e);
}

static void print_text(const struct imexctl_event *ev, uint64_t now)
{
	char t[40], uuid[IMEXCTL_UUID_STR_LEN];
	size_t i;

	format_iso8601(now, true, t, sizeof(t));
	printf("%s %s", t, imexctl_event_kind_name(ev->kind));
	if (ev->kind == IMEXCTL_EVENT_LOST) {
		printf(" (ENOBUFS): %s\n", lost_text);
		return;
	}
	if (ev->kind == IMEXCTL_EVENT_OTHER)
		printf(" cmd %u", ev->cmd);
	if (ev->has_node)
		printf(" node %s", ev->node_name);
	if (ev->has_channel)
		printf(" channel %u", ev->channel_id);
	if (ev->has_request)
		printf(" request %llu %s", (unsigned long long)ev->req_id,
		       req_cmd_name(ev->req_cmd));
	if (ev->has_domain)
		printf(" domain %s", ev->domain);
	if (ev->has_domain_uuid && ev->kind != IMEXCTL_EVENT_CHANNEL_DEL &&
	    ev->kind != IMEXCTL_EVENT_CHANNEL_NEW && ev->kind != IMEXCTL_EVENT_CHANNEL_SET &&
	    ev->kind != IMEXCTL_EVENT_REQ_DONE) {
		imexctl_uuid_format(ev->domain_uuid, uuid);
		printf(" uuid %s", uuid);
	}
	if (ev->has_state) {
		printf(" state %s", imexctl_domain_state_name(ev->state));
		if (ev->reason[0]) {
			printf(" reason ");
			print_quoted(ev->reason);
		}
		printf(" members %u channels %u", ev->member_count, ev->channel_count);
	}
	for (i = 0; i < ev->n_members; i++) {
		const struct imexctl_event_member *m = &ev->members[i];

		printf(" member %s %s", m->name, imexctl_member_state_name(m->state));
		if (m->reason[0]) {
			putchar(' ');
			print_quoted(m->reason);
		}
		if (m->since_ms) {
			format_iso8601(m->since_ms, true, t, sizeof(t));
			printf(" since %s", t);
		}
	}
	if (ev->has_channel && ev->kind != IMEXCTL_EVENT_CHANNEL_DEL)
		printf(" owner %u:%u mode %04o", ev->uid, ev->gid, ev->mode & 07777);
	if (ev->has_request) {
		if (ev->req_status)
			printf(" failed %s", strerror((int)ev->req_status));
		else
			printf(" ok");
		if (ev->req_message[0]) {
			putchar(' ');
			print_quoted(ev->req_message);
		}
	}
	if (ev->has_manager)
		printf(" pid %u", ev->manager_pid);
	if (ev->has_revoke) {
		imexctl_uuid_format(ev->handle_node, uuid);
		printf(" exporter %s reason %s count %u", uuid,
		       imexctl_revoke_reason_name(ev->revoke_reason), ev->import_count);
	}
	putchar('\n');
}

static void add_str(struct json_object *o, const char *key, const char *val)
{
	json_object_object_add(o, key, json_object_new_string(val));
}

static void add_int(struct json_object *o, const char *key, int64_t val)
{
	json_object_object_add(o, key, json_object_new_int64(val));
}

static struct json_object *event_json(const struct imexctl_event *ev, uint64_t now)
{
	struct json_object *o = json_object_new_object(), *arr, *jm;
	char t[40];
	size_t i;

	format_iso8601(now, true, t, sizeof(t));
	add_str(o, "time", t);
	add_int(o, "time_ms", (int64_t)now);
	add_str(o, "event", imexctl_event_kind_name(ev->kind));
	if (ev->kind == IMEXCTL_EVENT_LOST) {
		add_str(o, "error", "ENOBUFS");
		add_str(o, "message", lost_text);
		return o;
	}
	if (ev->kind == IMEXCTL_EVENT_OTHER)
		add_int(o, "cmd", ev->cmd);
	if (ev->has_domain)
		add_str(o, "domain", ev->domain);
	if (ev->has_domain_uuid)
		json_object_object_add(o, "domain_uuid", json_uuid(ev->domain_uuid));
	if (ev->has_state) {
		add_str(o, "state", imexctl_domain_state_name(ev->state));
		json_object_object_add(o, "reason", ev->reason[0] ?
				       json_object_new_string(ev->reason) : NULL);
		add_int(o, "member_count", ev->member_count);
		add_int(o, "channel_count", ev->channel_count);
		add_int(o, "generation", ev->generation);
		arr = json_object_new_array();
		for (i = 0; i < ev->n_members; i++) {
			const struct imexctl_event_member *m = &ev->members[i];

			jm = json_object_new_object();
			add_str(jm, "name", m->name);
			add_str(jm, "state", imexctl_member_state_name(m->state));
			json_object_object_add(jm, "reason", m->reason[0] ?
					       json_object_new_string(m->reason) : NULL);
			if (m->since_ms) {
				format_iso8601(m->since_ms, true, t, sizeof(t));
				add_str(jm, "since", t);
				add_int(jm, "since_ms", (int64_t)m->since_ms);
			} else {
				json_object_object_add(jm, "since", NULL);
			}
			json_object_array_add(arr, jm);
		}
		json_object_object_add(o, "members", arr);
	}
	if (ev->has_channel) {
		add_int(o, "channel", ev->channel_id);
		add_int(o, "uid", ev->uid);
		add_int(o, "gid", ev->gid);
		json_object_object_add(o, "mode", json_mode(ev->mode));
	}
	if (ev->has_request) {
		add_int(o, "request", (int64_t)ev->req_id);
		add_str(o, "request_cmd", req_cmd_name(ev->req_cmd));
		add_int(o, "status", ev->req_status);
		if (ev->req_status)
			add_str(o, "error", strerror((int)ev->req_status));
		json_object_object_add(o, "message", ev->req_message[0] ?
				       json_object_new_string(ev->req_message) : NULL);
	}
	if (ev->has_manager)
		add_int(o, "pid", ev->manager_pid);
	if (ev->has_node) {
		add_str(o, "node", ev->node_name);
		json_object_object_add(o, "node_uuid", json_uuid(ev->node_uuid));
	}
	if (ev->has_revoke) {
		json_object_object_add(o, "exporter", json_uuid(ev->handle_node));
		add_str(o, "revoke_reason", imexctl_revoke_reason_name(ev->revoke_reason));
		add_int(o, "import_count", ev->import_count);
	}
	return o;
}

static bool wanted(const struct monitor_args *a, const struct imexctl_event *ev)
{
	if (!a->domain || ev->kind == IMEXCTL_EVENT_LOST)
		return true;
	return ev->has_domain && !strcmp(ev->domain, a->domain);
}

static void show(const struct monitor_args *a, const struct imexctl_event *ev)
{
	uint64_t now = realtime_ms();
	struct json_object *o;

	if (!wanted(a, ev))
		return;
	if (!print_is_json()) {
		print_text(ev, now);
	} else {
		o = event_json(ev, now);
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	}
	/* Line by line: a pipe sees each event at once. */
	fflush(stdout);
}

/* Handle every waiting event: 0, or EXIT_FAIL if the socket failed. */
static int drain(struct cli *cli, const struct monitor_args *a,
		 struct imexctl_monitor *mon)
{
	const struct imexctl_event *ev;
	int r;

	for (;;) {
		r = imexctl_monitor_next(mon, &ev);
		if (r == 0)
			return 0;
		if (r == 1) {
			show(a, ev);
			continue;
		}
		if (r == -EPROTO) {
			fprintf(stderr, "imexctl monitor: %s\n", imexctl_errmsg(cli->ctx));
			continue;
		}
		return cli_lib_fail(cli);
	}
}

static int monitor_run(struct cli *cli, const struct monitor_args *a)
{
	struct imexctl_monitor *mon = NULL;
	struct signalfd_siginfo si;
	struct pollfd pfd[2];
	struct imexctl *ctx;
	sigset_t mask, old;
	int sfd, r = EXIT_OK;

	ctx = cli->ctx;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &mask, &old) < 0)
		return cli_fail(cli, "monitor: cannot set up signal handling: %s",
				strerror(errno));
	/* A shell starts background jobs with SIGINT ignored, and an ignored
	 * signal never reaches the signalfd: here it is meant to stop us. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		r = cli_fail(cli, "monitor: cannot set up signal handling: %s",
			     strerror(errno));
		goto out;
	}
	if (imexctl_monitor_open(ctx, &mon) < 0) {
		r = cli_lib_fail(cli);
		goto out;
	}
	/* Said once subscribed: from here on no event is missed. */
	fprintf(stderr, "imexctl monitor: listening to imex events%s%s (stop with Ctrl-C)\n",
		a->domain ? " of domain " : "", a->domain ? a->domain : "");

	pfd[0] = (struct pollfd){ .fd = imexctl_monitor_fd(mon), .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	for (;;) {
		r = drain(cli, a, mon);
		if (r != EXIT_OK)
			break;
		if (poll(pfd, 2, -1) < 0 && errno != EINTR) {
			r = cli_fail(cli, "monitor: poll failed: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents & POLLIN) {
			if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
				si.ssi_signo = SIGTERM;
			/* Whatever already arrived is still shown. */
			r = drain(cli, a, mon);
			fprintf(stderr, "imexctl monitor: stopped by %s\n",
				si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
			break;
		}
	}
out:
	imexctl_monitor_free(mon);
	if (sfd >= 0)
		close(sfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}

int cmd_monitor(struct cli *cli, int argc, char **argv)
{
	struct monitor_args a = { .json = cli->json };
	int r = monitor_parse(argc, argv, &a);

	r = cli_start(cli, r, a.json);
	return r == CLI_GO ? monitor_run(cli, &a) : r;
}
