/* SPDX-License-Identifier: GPL-2.0 */
/*
 * imexd's side of the imex generic netlink family (libnl-genl-3): attach as
 * the node's manager, read what the kernel holds, take administrators'
 * requests and carry out the core's KERNEL_* and REQUEST_DONE actions (and
 * the reconciler's steps).
 *
 * Two sockets: the command socket, which is the manager attachment (the
 * kernel ends it when this socket closes), and a notification socket that
 * only listens on the "manager" multicast group.  Every command is
 * synchronous: the kernel answers at once (a bounded receive timeout guards
 * against a hang).  Failures return -errno and put the kernel's
 * extended-ack message (or a description) into @msg.
 */
#ifndef IMEXD_KERNEL_H
#define IMEXD_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "node.h"
#include "wire.h"

struct imexd_kernel;

struct imexd_kernel_node {
	char name[IMEX_NAME_MAX];
	uint8_t uuid[16];
	bool has_fabric;
	uint8_t fabric_uuid[16];
	uint32_t partition;
	uint32_t max_channels;
	uint32_t manager_pid;		/* 0: none attached */
	uint32_t ndomains;
};

/*
 * Open the sockets and find the family.  -ENOENT when imex.ko is not
 * loaded; @msg says what to do.
 */
int imexd_kernel_open(struct imexd_kernel **k, char *msg, size_t msglen);
/* Close both sockets: the kernel then ends the attachment. */
void imexd_kernel_close(struct imexd_kernel *k);

int imexd_kernel_node_get(struct imexd_kernel *k,
			  struct imexd_kernel_node *node, char *msg,
			  size_t msglen);

/*
 * Become the manager.  -EALREADY when another process is ("another imexd
 * (pid N) is already managing this node"), -EPERM without CAP_SYS_ADMIN.
 */
int imexd_kernel_attach(struct imexd_kernel *k, char *msg, size_t msglen);
int imexd_kernel_detach(struct imexd_kernel *k, char *msg, size_t msglen);

/* Set the node's name and UUID (the same values again are fine). */
int imexd_kernel_node_set(struct imexd_kernel *k, const char *name,
			  const uint8_t uuid[16], char *msg, size_t msglen);

/* Join the manager group; the fd to watch for IMEX_CMD_REQ_NOTIFY. */
int imexd_kernel_subscribe(struct imexd_kernel *k, char *msg, size_t msglen);
int imexd_kernel_notify_fd(const struct imexd_kernel *k);
/*
 * What the notifications read from the socket (at most 256) named: how
 * many requests, remote imports and ends of exports were queued, and
 * whether some notifications were lost (a socket overrun) or left unread.
 */
struct imexd_notified {
	unsigned int requests, imports, export_ends;
	bool lost;
};
void imexd_kernel_notify_drain(struct imexd_kernel *k,
			       struct imexd_notified *seen);
/* Add what the netlink messages in @buf (@len bytes) of @family name. */
void imexd_kernel_notify_count(uint16_t family, const void *buf, size_t len,
			       struct imexd_notified *seen);

/*
 * Every domain, with members and channels, as definitions
 * (generation 0: the kernel does not keep the agreed generation).  A
 * malloc'd array in *@defs (free each with imexd_def_free, then the array).
 */
int imexd_kernel_read_domains(struct imexd_kernel *k, struct imexd_def **defs,
			      size_t *n, char *msg, size_t msglen);

/*
 * Take the oldest waiting request.  0 with @req filled (release it with
 * imexd_kernel_request_release); -ENOENT when none waits; -EBADMSG for a
 * request that cannot be turned into struct imexd_request: @req->req_id is
 * then set so that the caller can complete it with the error in @msg.
 */
int imexd_kernel_accept(struct imexd_kernel *k, struct imexd_request *req,
			char *msg, size_t msglen);
void imexd_kernel_request_release(struct imexd_request *req);

/*
 * The manager's atomic operations (kernel_set.c), which the reconciler's
 * steps become.  DOMAIN_SET: the kernel's domain @def->name / @def->uuid is
 * from now on exactly @def (members, fabric, the whole channel set with
 * owners and modes, generation = @def->generation): created, replaced, or
 * refused with nothing changed.  The channels go as one id array for the
 * owner most share (at most IMEX_CHANNEL_IDS_MAX) and entries for the rest
 * (at most 1820, what one attribute holds): -E2BIG past that.  DOMAIN_REMOVE: revoke
 * the channels of domain @name and remove it; @uuid (NULL or all-zero: any)
 * makes the kernel refuse one with another UUID (-ESTALE); -ENOENT when
 * there is none.  0 or -errno with the kernel's message in @msg.
 */
int imexd_kernel_domain_set(struct imexd_kernel *k, const struct imexd_def *def,
			    char *msg, size_t msglen);
int imexd_kernel_domain_remove(struct imexd_kernel *k, const char *name,
			       const uint8_t *uuid, char *msg, size_t msglen);

int imexd_kernel_set_status(struct imexd_kernel *k,
			    const struct imexd_domain_status *st, char *msg,
			    size_t msglen);
/*
 * Complete request @req_id with @error (positive errno or 0) and @text; on
 * success optionally with its result, which the kernel forwards to the
 * caller: @uuid (the domain created; NULL for none) and the channels
 * granted or freed (@chans, @nchans; at most IMEX_CHANNEL_IDS_MAX are sent).
 */
int imexd_kernel_req_done(struct imexd_kernel *k, uint64_t req_id, int error,
			  const char *text, const uint8_t *uuid,
			  const struct imexd_channel *chans, uint32_t nchans,
			  char *msg, size_t msglen);

/*
 * Remote imports (kernel_import.c, kernel_batch.c).  The ACCEPT calls
 * return -ENOENT when nothing waits.  IMPORT_CHECK fills @desc
 * (IMEX_DESC_MAX bytes) and *@desc_len.  IMPORT_ACCEPT and IMPORT_DONE go
 * up to IMEXD_KERNEL_BATCH in one write.
 */
#define IMEXD_KERNEL_BATCH	64

/*
 * Up to @max (at most IMEXD_KERNEL_BATCH) queued remote imports in one
 * round trip, into @imps[0..*@n): as many IMPORT_ACCEPTs in one write.
 * 0; -ENOENT when none waited; else -errno with @msg, the imports taken
 * before the error still in @imps.  *@n < @max: the queue ran dry.
 */
int imexd_kernel_import_accept_many(struct imexd_kernel *k,
				    struct imexd_import *imps,
				    unsigned int max, unsigned int *n,
				    char *msg, size_t msglen);
/*
 * IMPORT_DONE, queued: the queue goes in one write (and its acks are read)
 * at imexd_kernel_import_done_flush(), before any other command on the
 * socket, and when IMEXD_KERNEL_BATCH wait.  The owner flushes before it
 * sleeps.  The answers are logged here: -ENOENT (the importer gave up)
 * at debug, others as warnings.  0, or -ENOMEM with @msg.
 */
int imexd_kernel_import_done(struct imexd_kernel *k, uint64_t import_id,
			     int error, const uint8_t *desc, uint16_t desc_len,
			     const char *text, char *msg, size_t msglen);
void imexd_kernel_import_done_flush(struct imexd_kernel *k);
int imexd_kernel_import_check(struct imexd_kernel *k, uint64_t handle_id,
			      const uint8_t domain_uuid[16],
			      uint32_t channel_id, const char *member,
			      uint8_t desc[IMEX_DESC_MAX], uint16_t *desc_len,
			      char *msg, size_t msglen);
int imexd_kernel_export_del_accept(struct imexd_kernel *k,
				   uint64_t *handle_id,
				   uint8_t domain_uuid[16],
				   uint32_t *channel_id, char *msg,
				   size_t msglen);
/* @handle_id, @domain_uuid: NULL for all; *@count: imports revoked. */
int imexd_kernel_import_revoke(struct imexd_kernel *k,
			       const uint8_t node_uuid[16],
			       const uint64_t *handle_id,
			       const uint8_t *domain_uuid, uint8_t reason,
			       uint32_t *count, char *msg, size_t msglen);

/* Names for the log. */
const char *imexd_kernel_cmd_name(uint32_t cmd);

#endif /* IMEXD_KERNEL_H */
