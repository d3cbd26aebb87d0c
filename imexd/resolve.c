// SPDX-License-Identifier: GPL-2.0
/* Host name look-ups off the event loop (resolve.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "resolve.h"

struct job {
	struct job *next;		/* queued, not started */
	uint64_t tag;
	char host[256];
	char port[8];
	int wfd;
	int result;			/* getaddrinfo()'s */
	int sys_errno;			/* for EAI_SYSTEM */
	struct addrinfo *res;
};

struct imexd_resolver {
	sd_event_source *src;
	int pipe[2];
	unsigned running;
	struct job *head, *tail;
	imexd_resolved_fn fn;
	void *data;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	/* No AI_ADDRCONFIG: the caller tries every address in turn anyway,
	 * and it would hide names that resolve to loopback on a node without
	 * other addresses of that family. */
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_protocol = IPPROTO_TCP,
	};

	j->result = getaddrinfo(j->host, j->port, &hints, &j->res);
	j->sys_errno = errno;
	/* A pointer is far below PIPE_BUF: written whole or not at all. */
	if (write(j->wfd, &j, sizeof(struct job *)) !=
	    (ssize_t)sizeof(struct job *)) {
		/* The resolver is gone: the job is ours to free. */
		if (j->res)
			freeaddrinfo(j->res);
		free(j);
	}
	return NULL;
}

static int spawn(struct imexd_resolver *r, struct job *j)
{
	pthread_attr_t attr;
	pthread_t t;
	int e;

	e = pthread_attr_init(&attr);
	if (e)
		return -e;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	e = pthread_create(&t, &attr, worker, j);
	pthread_attr_destroy(&attr);
	if (e)
		return -e;
	r->running++;
	return 0;
}

/* Start queued look-ups while slots are free. */
static void pump(struct imexd_resolver *r)
{
	while (r->head && r->running < IMEXD_RESOLVERS_MAX) {
		struct job *j = r->head;
		int e;

		r->head = j->next;
		if (!r->head)
			r->tail = NULL;
		j->next = NULL;
		e = spawn(r, j);
		if (e < 0) {
			uint64_t tag = j->tag;

			free(j);
			r->fn(r->data, tag, e, strerror(-e), NULL);
		}
	}
}

static int on_done(sd_event_source *s, int fd, uint32_t revents, void *ud)
{
	struct imexd_resolver *r = ud;
	struct job *jobs[16];
	ssize_t n;

	(void)s;
	(void)revents;
	n = read(fd, jobs, sizeof(jobs));
	for (size_t i = 0; n > 0 && i < (size_t)n / sizeof(struct job *); i++) {
		struct job *j = jobs[i];
		struct addrinfo *res = j->res;
		uint64_t tag = j->tag;
		char why[160];
		int e = 0;

		r->running--;
		if (j->result) {
			e = j->result == EAI_SYSTEM ? -j->sys_errno : -EHOSTUNREACH;
			snprintf(why, sizeof(why), "%s", j->result == EAI_SYSTEM ?
				 strerror(j->sys_errno) : gai_strerror(j->result));
			if (res)
				freeaddrinfo(res);
			res = NULL;
		}
		free(j);
		r->fn(r->data, tag, e, e ? why : NULL, res);
	}
	pump(r);
	return 0;
}

int imexd_resolver_new(struct imexd_resolver **out, sd_event *ev,
		       imexd_resolved_fn fn, void *data)
{
	struct imexd_resolver *r = calloc(1, sizeof(*r));
	int e;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->fn = fn;
	r->data = data;
	if (pipe2(r->pipe, O_CLOEXEC) < 0) {
		e = -errno;
		free(r);
		return e;
	}
	fcntl(r->pipe[0], F_SETFL, O_NONBLOCK);
	e = sd_event_add_io(ev, &r->src, r->pipe[0], EPOLLIN, on_done, r);
	if (e < 0) {
		close(r->pipe[0]);
		close(r->pipe[1]);
		free(r);
		return e;
	}
	*out = r;
	return 0;
}

void imexd_resolver_free(struct imexd_resolver *r)
{
	struct job *j;

	if (!r)
		return;
	while ((j = r->head)) {
		r->head = j->next;
		free(j);
	}
	sd_event_source_disable_unref(r->src);
	/* Finished look-ups still in the pipe. */
	while (read(r->pipe[0], &j, sizeof(struct job *)) ==
	       (ssize_t)sizeof(struct job *)) {
		if (j->res)
			freeaddrinfo(j->res);
		free(j);
		r->running--;
	}
	close(r->pipe[0]);
	/* Workers still running write to this end: after the close above
	 * they get EPIPE (SIGPIPE must be ignored) and free their job.
	 * Closing it under them could let the fd number be reused, so it is
	 * left open then. */
	if (!r->running)
		close(r->pipe[1]);
	free(r);
}

int imexd_resolver_start(struct imexd_resolver *r, uint64_t tag,
			 const char *host, uint16_t port)
{
	struct job *j;
	int e;

	if (strlen(host) >= sizeof(j->host))
		return -ENAMETOOLONG;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->tag = tag;
	j->wfd = r->pipe[1];
	snprintf(j->host, sizeof(j->host), "%s", host);
	snprintf(j->port, sizeof(j->port), "%u", port);
	if (r->running < IMEXD_RESOLVERS_MAX) {
		e = spawn(r, j);
		if (e < 0)
			free(j);
		return e;
	}
	if (r->tail)
		r->tail->next = j;
	else
		r->head = j;
	r->tail = j;
	return 0;
}

void imexd_resolver_cancel(struct imexd_resolver *r, uint64_t tag)
{
	struct job **pp = &r->head, *prev = NULL;

	while (*pp) {
		struct job *j = *pp;

		if (j->tag == tag) {
			*pp = j->next;
			if (r->tail == j)
				r->tail = prev;
			free(j);
			return;
		}
		prev = j;
		pp = &j->next;
	}
}
