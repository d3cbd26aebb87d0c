// SPDX-License-Identifier: GPL-2.0
/* imex-nl: the fault-injection sweep (--sweep, --sweep-client). */
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

/* --- fault-injection sweep (tests/kmod/t-faultinj.sh) ---------------------- */

/* Run one script line on @c, quietly unless the output is captured. */
static int run_text(struct ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int run_text(struct ctx *c, const char *fmt, ...)
{
	char line[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return run_line(c, line, 0);
}

/* Drop " KEY=DIGITS[:DIGITS]" from @s: values that differ from run to run. */
static void strip_key(char *s, const char *key)
{
	size_t kl = strlen(key);
	char *p = s;

	while ((p = strstr(p, key))) {
		char *e = p + kl;

		if (p == s || p[-1] != ' ' || *e < '0' || *e > '9') {
			p++;
			continue;
		}
		while ((*e >= '0' && *e <= '9') || *e == ':')	/* devnum=M:N */
			e++;
		memmove(p - 1, e, strlen(e) + 1);
	}
}

/*
 * The node's state: every domain and channel, the node's counts, and the
 * device nodes by name, mode and owner; what changes by itself or per run
 * (open counts, the manager's pid, device numbers) left out.
 */
static char *snapshot(struct ctx *c, bool with_nodes)
{
	static const char *const dumps[] = { "domains", "channels", "node-get" };
	FILE *saved = stdout, *m;
	struct dirent **ents;
	bool quiet = c->quiet;
	char *buf = NULL;
	size_t len = 0;
	int n;

	m = open_memstream(&buf, &len);
	if (!m)
		die("out of memory");
	fflush(stdout);
	stdout = m;
	c->quiet = false;
	for (size_t i = 0; i < sizeof(dumps) / sizeof(dumps[0]); i++)
		if (run_text(c, "%s", dumps[i]))
			die("snapshot: %s failed", dumps[i]);
	c->quiet = quiet;
	n = with_nodes ? scandir("/dev/imex-channels", &ents, NULL, alphasort) : -1;
	for (int i = 0; i < n; i++) {
		char path[300];
		struct stat st;

		snprintf(path, sizeof(path), "/dev/imex-channels/%s", ents[i]->d_name);
		if (ents[i]->d_name[0] != '.' && !stat(path, &st))
			fprintf(m, "node %s %o %u %u\n", ents[i]->d_name,
				st.st_mode & 07777, st.st_uid, st.st_gid);
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	fclose(m);
	stdout = saved;
	strip_key(buf, "open=");
	strip_key(buf, "manager_pid=");
	strip_key(buf, "devnum=");	/* every grant gets a fresh minor */
	return buf;
}

/* The node lines of @s, or the rest. */
static char *part(const char *s, bool nodes)
{
	char *out = calloc(1, strlen(s) + 1), *o = out;

	if (!out)
		die("out of memory");
	while (*s) {
		const char *e = strchrnul(s, '\n');

		if (!strncmp(s, "node ", 5) == nodes) {
			memcpy(o, s, (size_t)(e - s));
			o += e - s;
			*o++ = '\n';
		}
		s = *e ? e + 1 : e;
	}
	return out;
}

/* @after is @ref but for device nodes a grant could not add. */
static bool nodes_missing_only(const char *after, const char *ref)
{
	char *a = part(after, false), *r = part(ref, false);
	char *an = part(after, true), *rn = part(ref, true);
	bool ok = !strcmp(a, r);

	for (char *l = an, *e; ok && *l; l = e + 1) {
		e = strchr(l, '\n');
		*e = 0;
		ok = strstr(rn, l) != NULL;
	}
	free(a);
	free(r);
	free(an);
	free(rn);
	return ok;
}

/* The output of dump command @cmd, raw. */
static char *capture(struct ctx *c, const char *cmd)
{
	FILE *saved = stdout, *m;
	bool quiet = c->quiet;
	char *raw = NULL;
	size_t len = 0;

	m = open_memstream(&raw, &len);
	if (!m)
		die("out of memory");
	fflush(stdout);
	stdout = m;
	c->quiet = false;
	if (run_text(c, "%s", cmd))
		die("%s failed: %s", cmd, c->msg);
	c->quiet = quiet;
	fclose(m);
	stdout = saved;
	return raw;
}

/*
 * Delete every domain, so each run starts from the same node: by request
 * as a client of the manager, or with DOMAIN_REMOVE as the manager.
 */
static void purge(struct ctx *c, bool client)
{
	char *raw, *l, *save = NULL;
	bool quiet = c->quiet;

	c->quiet = true;
	raw = capture(c, "domains");
	for (l = strtok_r(raw, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *nm = strstr(l, " name="), name[IMEX_NAME_MAX + 1];

		if (nm && sscanf(nm + 6, "%64s", name) == 1 &&
		    run_text(c, client ? "delete name=%s" : "remove name=%s", name))
			die("purge: deleting '%s' failed: %s", name, c->msg);
	}
	free(raw);
	c->quiet = quiet;
}

/*
 * sweep NAME: the script's lines are SETUP, its last line the OP.  Run
 * 0 is plain and gives the reference state; run N arms the Nth fault site
 * of OP's request.  Every run must end in success with the reference
 * state, or ENOMEM/EFAULT (or a request the kernel never got) with the
 * state before OP, or a lost reply with the reference state.  Ends when a
 * run no longer reaches its armed fault.
 */
#define SWEEP_MAX 1000u
int sweep(struct ctx *c, const char *name, char **lines, int nlines,
	  bool client)
{
	char *base, *ref = NULL, line[8192];
	unsigned int n, hits = 0, nodeless = 0;
	int bad = 0;

	c->quiet = true;
	if (!client && run_text(c, "attach"))
		die("sweep %s: attach: %s", name, c->msg);
	purge(c, client);
	base = snapshot(c, true);
	for (n = 0; n <= SWEEP_MAX && !bad; n++) {
		char *before, *after, *now, msg[sizeof(c->msg)];
		bool injected, lost, lost_send;
		const char *res;
		int err;

		purge(c, client);
		now = snapshot(c, true);
		if (strcmp(now, base)) {
			printf("sweep %s nth=%u: the node did not return to its state:\n%s---\n%s",
			       name, n, base, now);
			bad = 1;
		}
		free(now);
		for (int i = 0; i < nlines - 1 && !bad; i++) {
			snprintf(line, sizeof(line), "%s", lines[i]);
			if (run_line(c, line, i + 1)) {
				printf("sweep %s nth=%u: setup '%s' failed\n", name, n, line);
				bad = 1;
			}
		}
		if (bad)
			break;
		before = snapshot(c, true);
		c->fail_nth = n;
		snprintf(line, sizeof(line), "%s", lines[nlines - 1]);
		{
			FILE *saved = stdout, *m;
			char *out = NULL;
			size_t len = 0;

			/* The outcome line goes to a buffer, not the log. */
			m = open_memstream(&out, &len);
			fflush(stdout);
			stdout = m;
			bad = run_line(c, line, nlines);
			fclose(m);
			stdout = saved;
			free(out);
		}
		/* The snapshot runs commands too: keep the outcome first. */
		err = c->err;
		injected = c->injected;
		lost = c->lost && !c->lost_send;
		lost_send = c->lost_send;
		snprintf(msg, sizeof(msg), "%s", c->msg);
		res = lost_send ? "lost-send" : lost ? "lost" : errname(err);
		after = snapshot(c, true);
		if (n == 0) {
			if (bad || err)
				printf("sweep %s: '%s' failed without a fault: %s %s\n",
				       name, line, errname(err), msg);
			ref = after;
			free(before);
			continue;
		}
		if (!injected) {
			if (err || strcmp(after, ref)) {
				printf("sweep %s nth=%u: a run past the last fault site did not succeed: %s\n",
				       name, n, res);
				bad = 1;
			}
			free(before);
			free(after);
			break;
		}
		hits++;
		/* A client's request lost its reply: the manager carries it out. */
		for (int i = 0; client && lost && i < 200 &&
		     strcmp(after, ref); i++) {
			usleep(100000);
			free(after);
			after = snapshot(c, true);
		}
		if (lost) {
			bad = strcmp(after, ref) != 0;
		} else if (!err) {
			if (strcmp(after, ref) && nodes_missing_only(after, ref))
				nodeless++;
			else
				bad = strcmp(after, ref) != 0;
		} else if (lost_send || err == ENOMEM || err == EFAULT) {
			bad = strcmp(after, before) != 0;
		} else {
			printf("sweep %s nth=%u: failed with %s (%s), not ENOMEM\n",
			       name, n, res, msg);
			bad = 1;
		}
		if (bad)
			printf("sweep %s nth=%u: %s, and the state is wrong:\nbefore:\n%s"
			       "after:\n%sexpected (success):\n%s",
			       name, n, res, before, after, ref);
		free(before);
		free(after);
	}
	c->fail_nth = 0;
	if (!bad && n > SWEEP_MAX) {
		printf("sweep %s: still reaching faults after %u runs\n", name, SWEEP_MAX);
		bad = 1;
	}
	purge(c, client);
	if (!bad) {
		printf("sweep %s: %u fault sites, each failed cleanly", name, hits);
		if (nodeless)
			printf(" (%u left a channel without its device node)", nodeless);
		printf("\n");
	}
	free(base);
	free(ref);
	return bad;
}
