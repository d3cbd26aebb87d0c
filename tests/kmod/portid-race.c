// SPDX-License-Identifier: GPL-2.0
/*
 * portid-race: a new socket that takes the port id of a manager socket
 * being closed must not share that manager's fate.
 *
 * netlink_release() frees the port id before it sends NETLINK_URELEASE, so
 * another socket can bind that port id and attach in between.  To land in
 * that window every time, a helper thread (SCHED_FIFO, on the closing
 * thread's CPU) blocks sending to the old manager's full receive queue;
 * the release wakes it (wake_up of the socket's wait queue comes before the
 * notification) and it preempts the closing thread at its next scheduling
 * point.  The helper then binds the freed port id on a new socket, attaches
 * and probes with REQ_ACCEPT (ENOENT from the manager, EACCES from anyone
 * else), before and after the old socket's release has finished.
 *
 *   portid-race [CYCLES]    exit 0: every new manager kept its attachment
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/imex.h>

#define PORTID 0x494d4558u	/* "IMEX": far from autobind's picks */

static int family;

static void die(const char *what)
{
	fprintf(stderr, "portid-race: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int nl_open(unsigned int portid)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_pid = portid };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);

	if (fd < 0)
		die("socket");
	if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

struct req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char buf[64];
};

/* Send a genl command without attributes; return its ack's errno. */
static int transact(int fd, int type, int cmd, const void *attr, int alen)
{
	static unsigned int seq;
	struct req r = { 0 };
	char buf[8192];
	struct nlmsghdr *h;
	ssize_t n;

	r.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN + alen);
	r.n.nlmsg_type = (unsigned short)type;
	r.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	r.n.nlmsg_seq = ++seq;
	r.g.cmd = (unsigned char)cmd;
	r.g.version = IMEX_GENL_VERSION;	/* nlctrl takes any version */
	if (alen)
		memcpy(r.buf, attr, (size_t)alen);
	if (send(fd, &r, r.n.nlmsg_len, 0) < 0)
		die("send");
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			die("recv");
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -((struct nlmsgerr *)NLMSG_DATA(h))->error;
			if (type == GENL_ID_CTRL) {	/* the family id, then the ack */
				struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);
				int len = (int)h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);

				for (; len >= (int)sizeof(*a) && a->nla_len >= sizeof(*a);
				     len -= NLA_ALIGN(a->nla_len),
				     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
					if (a->nla_type == CTRL_ATTR_FAMILY_ID)
						family = *(unsigned short *)((char *)a + NLA_HDRLEN);
			}
		}
	}
}

static void resolve_family(void)
{
	char attr[NLA_HDRLEN + NLA_ALIGN(sizeof(IMEX_GENL_NAME))] = { 0 };
	struct nlattr *a = (struct nlattr *)attr;
	int fd = nl_open(0);

	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = NLA_HDRLEN + sizeof(IMEX_GENL_NAME);
	memcpy(attr + NLA_HDRLEN, IMEX_GENL_NAME, sizeof(IMEX_GENL_NAME));
	if (transact(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, attr, (int)sizeof(attr)) || !family) {
		fprintf(stderr, "portid-race: the imex family is not registered\n");
		exit(2);
	}
	close(fd);
}

static int imex(int fd, int cmd)
{
	return transact(fd, family, cmd, NULL, 0);
}

struct cycle {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool blocked;		/* the helper is about to block on the old socket */
	bool closed;		/* close() of the old manager has returned */
	int attach, before, after;	/* errnos the new socket saw */
	bool in_window;		/* it attached before close() returned */
};

static struct cycle cy;

static void pin(int policy)
{
	struct sched_param sp = { .sched_priority = policy == SCHED_FIFO ? 1 : 0 };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
	if (pthread_setschedparam(pthread_self(), policy, &sp))
		die("pthread_setschedparam");
}

static void *helper(void *arg)
{
	char junk[1024] = { 0 };
	struct nlmsghdr *h = (struct nlmsghdr *)junk;
	struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_pid = PORTID };
	int tx = nl_open(0), fd;

	(void)arg;
	pin(SCHED_FIFO);
	h->nlmsg_len = sizeof(junk);
	h->nlmsg_type = NLMSG_NOOP;
	pthread_mutex_lock(&cy.lock);
	cy.blocked = true;
	pthread_cond_signal(&cy.cond);
	pthread_mutex_unlock(&cy.lock);
	/* Fill the old manager's queue; the last send sleeps until release. */
	while (sendto(tx, junk, sizeof(junk), 0, (struct sockaddr *)&to, sizeof(to)) >= 0)
		;
	close(tx);
	fd = nl_open(PORTID);
	if (fd < 0) {		/* not in the window: nothing to check */
		cy.attach = -1;
		return NULL;
	}
	cy.attach = imex(fd, IMEX_CMD_MANAGER_ATTACH);
	cy.before = imex(fd, IMEX_CMD_REQ_ACCEPT);
	pthread_mutex_lock(&cy.lock);
	cy.in_window = !cy.closed;
	while (!cy.closed)
		pthread_cond_wait(&cy.cond, &cy.lock);
	pthread_mutex_unlock(&cy.lock);
	cy.after = imex(fd, IMEX_CMD_REQ_ACCEPT);
	close(fd);
	return NULL;
}

/* Until the helper sleeps in its send (state S), for at most 10 s. */
static void wait_sleeping(pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	for (int i = 0; i < 10000; i++) {
		f = fopen(path, "r");
		if (!f)
			die(path);
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (p && p[2] == 'S')
			return;
		usleep(1000);
	}
	fprintf(stderr, "portid-race: the helper never blocked\n");
	exit(2);
}

static pid_t helper_tid;

static void *helper_start(void *arg)
{
	helper_tid = gettid();
	return helper(arg);
}

int main(int argc, char **argv)
{
	int cycles = argc > 1 ? atoi(argv[1]) : 20, hits = 0, bad = 0;
	int rcvbuf = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	resolve_family();
	pin(SCHED_OTHER);
	for (int i = 0; i < cycles; i++) {
		pthread_t t;
		int old = nl_open(PORTID), r;

		if (old < 0)
			die("bind the manager's port id");
		setsockopt(old, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
		r = imex(old, IMEX_CMD_MANAGER_ATTACH);
		if (r) {
			fprintf(stderr, "portid-race: cycle %d: attach: %s\n", i, strerror(r));
			return 2;
		}
		memset(&cy, 0, sizeof(cy));
		pthread_mutex_init(&cy.lock, NULL);
		pthread_cond_init(&cy.cond, NULL);
		helper_tid = 0;
		if (pthread_create(&t, NULL, helper_start, NULL))
			die("pthread_create");
		pthread_mutex_lock(&cy.lock);
		while (!cy.blocked)
			pthread_cond_wait(&cy.cond, &cy.lock);
		pthread_mutex_unlock(&cy.lock);
		wait_sleeping(helper_tid);
		close(old);
		pthread_mutex_lock(&cy.lock);
		cy.closed = true;
		pthread_cond_signal(&cy.cond);
		pthread_mutex_unlock(&cy.lock);
		pthread_join(t, NULL);
		if (cy.attach < 0)
			continue;
		hits += cy.in_window;
		/* The new socket attached: it is the manager, then and later. */
		if (cy.attach || cy.before != ENOENT || cy.after != ENOENT) {
			printf("cycle %d: new manager socket: attach %s, REQ_ACCEPT %s during the old one's release, %s after it%s\n",
			       i, strerror(cy.attach), strerror(cy.before), strerror(cy.after),
			       cy.in_window ? " (attached inside the window)" : "");
			bad++;
		}
	}
	printf("portid-race: %d cycles, %d attached inside the release window, %d lost their attachment\n",
	       cycles, hits, bad);
	if (!hits) {
		fprintf(stderr, "portid-race: the release window was never hit: the test proves nothing here\n");
		return 1;
	}
	return bad ? 1 : 0;
}
