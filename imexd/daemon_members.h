/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon keeps STATE_DIRECTORY/members.json (store_members.h) in step
 * with the core's view of the group: after a batch of events it renders
 * the view, at most once per IMEXD_MEMBERS_MIN_MS (a batch inside that
 * time arms a timer of its own for when it ends), and replaces the file
 * when the text changed.  The file is removed at stop.
 */
#ifndef IMEXD_DAEMON_MEMBERS_H
#define IMEXD_DAEMON_MEMBERS_H

#include <stdint.h>
#include <systemd/sd-event.h>

#include "node.h"

#define IMEXD_MEMBERS_MIN_MS	1000

struct imexd_members_pub;

/* NULL on no memory or no timer (the file is then not kept: logged). */
struct imexd_members_pub *imexd_members_pub_new(sd_event *ev, const char *dir,
						const char *self,
						const struct imexd_node *core);
/* After the core's actions were carried out. */
void imexd_members_pub_update(struct imexd_members_pub *p);
/* Removes the file. */
void imexd_members_pub_free(struct imexd_members_pub *p);

#endif /* IMEXD_DAEMON_MEMBERS_H */
