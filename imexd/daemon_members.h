/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon keeps STATE_DIRECTORY/members.json (store_members.h) in step
 * with the core's view of the group: after a batch of events it renders
 * the view, at most once per IMEXD_MEMBERS_MIN_MS (a batch inside that
 * time arms a timer of its own for when it ends), and replaces the file
 * when the text changed; a failed write is tried again a period later.
 * The file is removed at stop.
 */
#ifndef IMEXD_DAEMON_MEMBERS_H
#define IMEXD_DAEMON_MEMBERS_H

#include <stdint.h>
#include <systemd/sd-event.h>

#include "node.h"

#define IMEXD_MEMBERS_MIN_MS	1000

struct imexd_members_pub;

/*
 * NULL on no memory or no timer (the file is then not kept: logged).
 * @pid is the manager pid the kernel reports (NODE_GET after attaching),
 * what imexctl node status compares it with: getpid() differs when imexd
 * runs in a pid namespace of its own.  Made right after attaching, before
 * the core exists: the file then says "not a member" until
 * imexd_members_pub_set_core().
 */
struct imexd_members_pub *imexd_members_pub_new(sd_event *ev, const char *dir,
						const char *self, long pid);
void imexd_members_pub_set_core(struct imexd_members_pub *p,
				const struct imexd_node *core);
/* After the core's actions were carried out. */
void imexd_members_pub_update(struct imexd_members_pub *p);
/* Removes the file. */
void imexd_members_pub_free(struct imexd_members_pub *p);

#endif /* IMEXD_DAEMON_MEMBERS_H */
