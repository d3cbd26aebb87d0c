// SPDX-License-Identifier: GPL-2.0
/* members.json kept up to date (daemon_members.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon_members.h"
#include "log.h"
#include "store_members.h"

struct imexd_members_pub {
	sd_event_source *timer;
	char *dir;
	char *self;
	long pid;			/* the manager pid the kernel reports */
	const struct imexd_node *core;	/* NULL: not started yet */
	char *last;			/* the text last written */
	uint64_t next_ms;		/* no render before */
	int last_err;			/* logged once until it changes */
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static char *render(const struct imexd_members_pub *p)
{
	struct imexd_node_member *m = NULL;
	struct imexd_node_group g;
	size_t n;
	char *text;

	if (!p->core) {
		/* Attached, the group not loaded yet: not a member so far. */
		memset(&g, 0, sizeof(g));
		return imexd_members_json(p->self, p->pid, &g, NULL, 0);
	}
	imexd_node_members(p->core, &g, NULL, 0);
	if (g.n_members) {
		m = calloc(g.n_members, sizeof(*m));
		if (!m)
			return NULL;
	}
	n = imexd_node_members(p->core, &g, m, g.n_members);
	text = imexd_members_json(p->self, p->pid, &g, m, n);
	free(m);
	return text;
}

void imexd_members_pub_update(struct imexd_members_pub *p)
{
	uint64_t now = mono_ms();
	char *text;
	int r;

	if (!p)
		return;
	if (now < p->next_ms) {
		sd_event_source_set_time(p->timer, p->next_ms * 1000);
		sd_event_source_set_enabled(p->timer, SD_EVENT_ONESHOT);
		return;
	}
	/* Rendering walks every member: once per period too, even when
	 * nothing changed (events come with every heartbeat). */
	p->next_ms = now + IMEXD_MEMBERS_MIN_MS;
	text = render(p);
	if (!text || (p->last && !strcmp(text, p->last))) {
		free(text);
		return;
	}
	r = imexd_members_write(p->dir, text);
	if (r < 0 && r != p->last_err)
		log_warn("cannot write %s/%s (imexctl node list reads it): %s",
			 p->dir, IMEXD_MEMBERS_FILE, strerror(-r));
	p->last_err = r;
	if (r < 0) {
		/* Not written: the same text is tried again next period,
		 * else a probe would read a stale file until a change. */
		free(text);
		sd_event_source_set_time(p->timer, p->next_ms * 1000);
		sd_event_source_set_enabled(p->timer, SD_EVENT_ONESHOT);
		return;
	}
	free(p->last);
	p->last = text;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *ud)
{
	(void)s;
	(void)usec;
	imexd_members_pub_update(ud);
	return 0;
}

struct imexd_members_pub *imexd_members_pub_new(sd_event *ev, const char *dir,
						const char *self, long pid)
{
	struct imexd_members_pub *p = calloc(1, sizeof(*p));

	if (!p || !(p->dir = strdup(dir)) || !(p->self = strdup(self)) ||
	    sd_event_add_time(ev, &p->timer, CLOCK_MONOTONIC, UINT64_MAX, 1000,
			      on_timer, p) < 0 ||
	    sd_event_source_set_enabled(p->timer, SD_EVENT_OFF) < 0) {
		log_warn("cannot keep %s/%s (imexctl node list reads it): out of memory",
			 dir, IMEXD_MEMBERS_FILE);
		imexd_members_pub_free(p);
		return NULL;
	}
	p->pid = pid > 0 ? pid : (long)getpid();
	return p;
}

void imexd_members_pub_set_core(struct imexd_members_pub *p,
				const struct imexd_node *core)
{
	if (p)
		p->core = core;
}

void imexd_members_pub_free(struct imexd_members_pub *p)
{
	if (!p)
		return;
	if (p->last)
		imexd_members_write(p->dir, NULL);
	sd_event_source_disable_unref(p->timer);
	free(p->last);
	free(p->self);
	free(p->dir);
	free(p);
}
