/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The imexd daemon: one sd-event loop that wires the node core (node.h)
 * to the kernel (kernel.h), the peers (net.h, tls.h), the node's UUID
 * (store.h) and the raft log in STATE_DIRECTORY/raft (raftlog.h).  Every
 * event becomes one call on the core, after which the core's actions are
 * carried out in order; one timer follows imexd_node_deadline().
 *
 * Signals: SIGTERM/SIGINT stop (peers are told, queued frames flushed for
 * at most IMEXD_STOP_FLUSH_MS, the manager attachment ended; kernel and
 * stored state are kept), SIGHUP re-reads the configuration, SIGUSR1
 * reloads the TLS credentials.
 */
#ifndef IMEXD_DAEMON_H
#define IMEXD_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include "config.h"

#ifndef IMEXD_VERSION
#define IMEXD_VERSION		"1.0.0"
#endif
#define IMEXD_STOP_FLUSH_MS	2000

struct imexd_daemon_opts {
	const char *config_path;
	bool config_explicit;		/* -c given: the file must exist */
	int ready_fd;			/* -1, or written once ready, then closed */
};

/*
 * Defaults, then @path on top.  A missing file is fine unless @explicit
 * (the built-in default path may be absent).  0 or -errno with @err.
 */
int imexd_daemon_load_config(struct imexd_config *cfg, const char *path,
			     bool explicit, char *err, size_t errlen);

/*
 * The node list (NODES_FILE): a malloc'd array in *@out (free()), or
 * -errno with @err naming the file.
 */
struct imexd_member;
int imexd_daemon_load_nodes(const char *path, struct imexd_member **out,
			    size_t *count, char *err, size_t errlen);

/*
 * Check what a start would use without touching the kernel or the network:
 * the node list file and the TLS files.  0 or -errno with @err.
 */
int imexd_daemon_check_config(const struct imexd_config *cfg, char *err,
			      size_t errlen);

/*
 * SIGHUP: re-read @path; on success apply the reloadable keys to @cur, log
 * each change (and the keys that need a restart) and set the log level.
 * On error nothing changes: -errno with @err.
 */
int imexd_daemon_reread_config(struct imexd_config *cur, const char *path,
			       bool explicit, char *err, size_t errlen);

/* Run until stopped.  Returns the process exit status. */
int imexd_daemon_run(const struct imexd_config *cfg,
		     const struct imexd_daemon_opts *opts);

#endif /* IMEXD_DAEMON_H */
