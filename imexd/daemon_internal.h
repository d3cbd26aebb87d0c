/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's state and what its files share: the loop and callbacks
 * (daemon.c), the core's actions and STATUS= (daemon_actions.c), the
 * kernel's request queues (daemon_requests.c), start and stop
 * (daemon_start.c).
 */
#ifndef IMEXD_DAEMON_INTERNAL_H
#define IMEXD_DAEMON_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>
#include "config.h"
#include "kernel.h"
#include "net.h"
#include "node.h"

struct signalfd_siginfo;

#define DRAIN_BATCH	20000	/* actions before other events get a turn */
#define STOP_POLL_MS	20

struct dom_seen {
	char name[IMEX_NAME_MAX];
	uint32_t state;
};

struct daemon {
	sd_event *ev;
	const struct imexd_daemon_opts *opts;
	struct imexd_config cfg;
	struct imexd_store *store;
	struct imexd_kernel *kernel;
	struct imexd_kernel_node node;
	struct imexd_tls *tls;
	struct imexd_net *net;
	struct imexd_raftlog *rlog;
	struct imexd_roster_node *roster;
	size_t n_roster;
	struct imexd_node *core;
	struct imexd_members_pub *members;	/* members.json */
	struct imexd_metrics_pub *metrics;	/* imexd.prom; NULL: off */
	sd_event_source *metrics_timer;
	bool clean_exit;
	uint8_t node_uuid[16];
	uint64_t epoch;

	sd_event_source *timer;
	sd_event_source *notify_src;
	sd_event_source *more;		/* drain() continues here */
	sd_event_source *accept_more;	/* accept_imports() continues here */
	sd_event_source *sweep;		/* every queue, now and then */
	uint64_t sweep_retry_ms;	/* after a failed accept; 0: none */
	bool accept_failed;		/* since the sweep began */
	sd_event_source *stop_timer;
	bool draining;
	bool stopping;
	bool ready;
	uint64_t stop_deadline;

	/* For STATUS=. */
	struct dom_seen *doms;
	size_t ndoms;
	bool status_dirty;
	char status[512];
};

/* The sweep of every queue (daemon_requests.c). */
#define SWEEP_MS	10000ULL
#define SWEEP_RETRY_MS	200ULL

/* daemon.c */
extern const struct imexd_net_ops net_ops;
uint64_t now_ms(void);
int64_t wall_offset_ms(void);
void drain(struct daemon *d);
int on_more(sd_event_source *s, void *ud);
int on_timer(sd_event_source *s, uint64_t usec, void *ud);
int on_metrics(sd_event_source *s, uint64_t usec, void *ud);
int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si,
	       void *ud);
int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si,
	      void *ud);
int on_sigusr1(sd_event_source *s, const struct signalfd_siginfo *si,
	       void *ud);

/* daemon_actions.c */
void update_status(struct daemon *d);
void do_action(struct daemon *d, const struct imexd_node_action *a);

/* daemon_requests.c */
int on_accept_more(sd_event_source *s, void *ud);
void accept_all(struct daemon *d);
int on_sweep(sd_event_source *s, uint64_t usec, void *ud);
int on_notify(sd_event_source *s, int fd, uint32_t revents, void *ud);
int on_prepare(sd_event_source *s, void *ud);

#endif /* IMEXD_DAEMON_INTERNAL_H */
