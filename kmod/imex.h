/* SPDX-License-Identifier: GPL-2.0 */
/*
 * imex.ko internals.
 *
 * Locking: one mutex, imex_lock, guards every object below (node identity,
 * domains, channels' grant state, requests, the manager).
 * Control operations are rare and short, so a single lock keeps every
 * invariant check and its update atomic without lock ordering to reason
 * about.  Paths that must not take it: a channel's poll() and the in-kernel
 * fd resolution read only fields fixed at grant time, the revoked flag,
 * the channel's kapi_err and an fd's published imex_file; never a domain,
 * which is freed at once when deleted.  The revocation callbacks'
 * spinlock (kapi.c) nests inside it.
 *
 * Device work (device_add/device_del of channel devices: a devtmpfs round
 * trip and a uevent each) is never done under imex_lock, or a large grant
 * would stall every open(), ioctl and netlink request on the node.  Under
 * imex_lock a grant, revoke or owner change only queues it, in the order of
 * the changes, on one FIFO; imex_dev_flush() runs the queue under a second
 * mutex, imex_dev_lock, taking imex_lock only to splice the queue off.
 * Order: imex_dev_lock, then imex_lock; never imex_dev_lock under imex_lock.
 * One FIFO run by one holder at a time keeps a revoked grant's device_del()
 * ahead of the device_add() of a later grant of the same id, so names and
 * device numbers never clash.  Callers that change devices flush after
 * unlocking, so a DOMAIN_SET returns once its nodes exist; a work item flushes
 * what nobody else does.  A granted channel opens only once its first
 * device was added (imex_channel.dev_added), i.e. with its owner and mode.
 */
#ifndef _IMEX_H
#define _IMEX_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/uuid.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <net/genetlink.h>
#include <linux/imex.h>

#include "compat.h"
#include "imex_api.h"

extern struct mutex imex_lock;
extern unsigned int imex_max_channels;

/* Bumped under imex_lock on every change; dumps compare it (NLM_F_DUMP_INTR). */
extern u32 imex_generation;

struct imex_node {
	char		name[IMEX_NAME_MAX];
	uuid_t		uuid;
	bool		fabric_set;
	uuid_t		fabric_uuid;
	u32		fabric_partition;
};

extern struct imex_node imex_node;

struct imex_member {
	char		name[IMEX_NAME_MAX];
	char		addr[IMEX_ADDR_MAX];
	u32		state;		/* enum imex_member_state */
	u8		*view;		/* nmembers entries, or NULL */
	/* The manager's words, allocated only when given (kfree_const). */
	const char	*reason;	/* < IMEX_MESSAGE_MAX, or NULL */
	u64		since;		/* ms since the epoch; 0: unknown */
};

struct imex_domain {
	struct list_head	list;
	char			name[IMEX_NAME_MAX];
	uuid_t			uuid;
	uuid_t			fabric_uuid;
	u32			fabric_partition;
	u32			state;		/* enum imex_domain_state */
	u32			generation;
	u64			set_generation;	/* the manager's (DOMAIN_SET) */
	const char		*reason;	/* why not READY, or NULL */
	u32			nmembers;
	u32			self;
	struct imex_member	*members;
	u32			nchannels;	/* granted + reserved */
	struct list_head	kapi_channels;	/* imex_channel.kapi_node */
	bool			kapi_usable;	/* its channels' kapi_err says so */
	/*
	 * Records held through this domain's channel fds, each bounded per
	 * domain.  Revoking a channel ends its fds' records, so none
	 * outlives the domain.
	 */
	unsigned int		nexports;
	unsigned int		nimports;
	unsigned int		npendings;	/* remote imports waiting */
};

extern struct list_head imex_domains;
extern unsigned int imex_ndomains;

struct imex_chdev;
struct imex_channel;

/* What an open channel file's private_data points to: ch->bare or f->fd. */
struct imex_fd {
	struct imex_channel	*ch;
};

struct imex_channel {
	struct kref		ref;
	u32			id;
	u32			minor;		/* the grant's, fixed at reserve */
	/* Fixed once granted: read without imex_lock. */
	uuid_t			domain_uuid;
	uuid_t			fabric_uuid;
	u32			fabric_partition;
	bool			revoked;	/* READ_ONCE/WRITE_ONCE */
	/*
	 * What imex_channel_ident() answers, so that it reads nothing but
	 * the channel: 0 while granted in a usable domain, -ENOLINK while
	 * the domain is not usable, -ENODEV from revocation on (and before
	 * the grant).  Written under imex_lock wherever the grant or the
	 * domain's usability changes, before any revocation callback is
	 * queued; read with READ_ONCE().
	 */
	int			kapi_err;
	/* Under imex_lock. */
	struct imex_domain	*domain;	/* NULL once revoked */
	u32			state;		/* enum imex_channel_state */
	kuid_t			uid;
	kgid_t			gid;
	umode_t			mode;
	struct imex_chdev	*chdev;		/* device node, when granted */
	bool			dev_added;	/* READ_ONCE: a node was made */
	atomic_t		open_count;
	wait_queue_head_t	wait;
	struct list_head	files;		/* imex_file.node, under imex_lock */
	struct imex_fd		bare;		/* .ch: this channel, fixed */
	/* Revocation callbacks (kapi.c): its own, and its domain's list. */
	struct list_head	revoke_cbs;	/* under imex_kapi_lock */
	struct list_head	kapi_node;	/* under imex_lock */
};

/*
 * One open channel file: its exports and imports.  Most fds never hold
 * one, so an fd gets its imex_file on first need (chardev.c); until then
 * file->private_data is its channel's ->bare, afterwards the imex_file's
 * ->fd.  Either way it points to the channel pointer, which is what
 * imex_channel_fget() reads.  The channel reference is the open file's,
 * taken at open and dropped at release; the rest is under imex_lock.
 */
struct imex_file {
	union {
		struct imex_fd		fd;	/* what private_data points to */
		struct imex_channel	*ch;	/* fd.ch, fixed */
	};
	struct list_head	node;		/* in ch->files */
	struct list_head	exports;	/* imex_export.fnode */
	unsigned int		nexports;
	struct list_head	imports;	/* live imex_import.fnode */
	struct list_head	revoked;	/* revoked, not yet read */
	struct mutex		revoked_lock;	/* one IMEX_IOC_REVOKED reader */
	unsigned int		nimports;	/* live + revoked */
	unsigned int		nrevoked;	/* READ_ONCE in poll */
	unsigned int		npendings;	/* remote imports waiting */
};

struct imex_import;

struct imex_export {
	struct hlist_node	hnode;		/* imex_export_hash, by id */
	struct list_head	fnode;		/* owner->exports */
	struct imex_file	*owner;
	struct imex_domain	*domain;	/* charged for it */
	u64			id;
	uuid_t			domain_uuid;
	u32			channel_id;
	bool			checked;	/* a peer imported it */
	struct list_head	importers;	/* local imex_import.enode */
	u32			desc_len;
	u8			desc[IMEX_DESC_MAX];
};

struct imex_import {
	struct list_head	fnode;		/* file->imports or ->revoked */
	struct list_head	enode;		/* exp->importers, or remote list */
	struct imex_file	*file;
	struct imex_domain	*domain;	/* charged for it */
	struct imex_export	*exp;		/* local and live, else NULL */
	bool			remote;
	bool			revoked;	/* on file->revoked */
	uuid_t			node_uuid;
	u64			id;
	uuid_t			domain_uuid;	/* the importing fd's */
	u32			reason;		/* once revoked */
	u32			desc_len;
	u8			desc[IMEX_DESC_MAX];
};

extern unsigned int imex_nexports, imex_nimports;

extern struct xarray imex_channels;

/* main.c */
bool imex_name_valid(const char *name);

/* node.c */
int imex_node_init(const char *name, const char *fabric_uuid, u32 partition,
		   bool partition_given);
bool imex_node_fabric_matches(const uuid_t *uuid, u32 partition);
bool imex_node_named(struct netlink_ext_ack *extack);

/* domain.c */
struct imex_domain *imex_domain_find(const char *name);
struct imex_domain *imex_domain_find_uuid(const uuid_t *uuid);
struct imex_domain *imex_domain_new(const char *name, const uuid_t *uuid,
				    const uuid_t *fabric, u32 partition);
void imex_domain_link(struct imex_domain *d);
void imex_domain_destroy(struct imex_domain *d);
void imex_domain_set_state(struct imex_domain *d, u32 state);
void imex_domain_set_down(struct imex_domain *d, const char *why);
void imex_domain_set_reason(struct imex_domain *d, const char *reason);
/* Under imex_lock: domains are freed at once, so no reader goes without. */
static inline bool imex_domain_usable(const struct imex_domain *d)
{
	u32 state;

	lockdep_assert_held(&imex_lock);
	state = READ_ONCE(d->state);

	return state == IMEX_DOMAIN_READY || state == IMEX_DOMAIN_DEGRADED;
}

void imex_members_free(struct imex_member *members, u32 n);
int imex_members_parse(struct nlattr *attr, struct imex_member **out, u32 *n,
		       u32 *self, struct netlink_ext_ack *extack);

/* chardev.c */
int imex_chrdev_init(void);
void imex_chrdev_exit(void);
unsigned int imex_chrdev_major(void);
int imex_minor_alloc(struct imex_channel *ch);
void imex_minor_free(struct imex_channel *ch);
struct imex_chdev *imex_chdev_new(struct imex_channel *ch, kuid_t uid,
				  kgid_t gid, umode_t mode);
void imex_chdev_discard(struct imex_chdev *cd);
void imex_chdev_queue_add(struct imex_chdev *cd);
void imex_chdev_queue_del(struct imex_chdev *cd);
void imex_dev_flush(void);

/* channel.c */
struct imex_chan_spec {
	u32	id;
	kuid_t	uid;
	kgid_t	gid;
	umode_t	mode;
};

u32 imex_nla_count(const struct nlattr *list);
int imex_channel_entry_parse(struct nlattr **tb, struct nlattr *e,
			     struct netlink_ext_ack *extack);
int imex_channels_parse(struct nlattr *entries, struct nlattr *ids,
			struct nlattr **owner, struct imex_chan_spec **out,
			u32 *n, struct netlink_ext_ack *extack);
const struct imex_chan_spec *imex_chan_spec_find(const struct imex_chan_spec *spec,
						 u32 n, u32 id);
struct imex_channel *imex_channel_lookup(u32 id);
int imex_channel_check_for(u32 id, const struct imex_domain *d,
			   struct netlink_ext_ack *extack);
struct imex_channel *imex_channel_reserve(u32 id, struct imex_domain *d,
					  kuid_t uid, kgid_t gid, umode_t mode);
int imex_channel_grant(struct imex_channel *ch);
void imex_channel_revoke(struct imex_channel *ch);
void imex_channel_install_owner(struct imex_channel *ch, struct imex_chdev *cd,
				kuid_t uid, kgid_t gid, umode_t mode);
int imex_channel_set_owner(struct imex_channel *ch, kuid_t uid, kgid_t gid,
			   umode_t mode);
void imex_domain_revoke_channels(struct imex_domain *d);
void imex_domain_channels_usable(struct imex_domain *d, bool usable);

/* export.c */
struct imex_export *imex_export_find(u64 id);
int imex_file_export(struct imex_file *f, const void *desc, u32 len,
		     struct imex_handle *h);
int imex_file_unexport(struct imex_file *f, const struct imex_handle *h);
void imex_file_end_exports(struct imex_file *f, u32 reason);
void imex_export_dels_clear(void);
void imex_exports_forget_checked(void);

/* import.c */
int imex_file_import(struct imex_file *f, const struct imex_handle *h,
		     unsigned int timeout_ms, void *desc, u32 *len, bool *held);
int imex_file_unimport(struct imex_file *f, const struct imex_handle *h);
void imex_import_revoke(struct imex_import *im, u32 reason);
void imex_file_drop_imports(struct imex_file *f);
long imex_file_revoked(struct imex_file *f, void __user *arg);
void imex_imports_manager_gone(void);
/*
 * Revoked imports are tallied per (domain, exporting node, reason) as they
 * go; whoever revokes sends the tally, one IMPORTS_REVOKED event per entry,
 * when the operation is over.  Both under imex_lock.
 */
void imex_revoked_tally(const struct imex_import *im, u32 reason);
void imex_revoked_flush(void);

/* chardev.c: every open file of a revoked channel loses its transfers. */
void imex_channel_files_revoke(struct imex_channel *ch);

/* kapi.c: revocation callbacks of the in-kernel API. */
void imex_kapi_channel_revoked(struct imex_channel *ch);
void imex_kapi_domain_state(struct imex_domain *d);
void imex_kapi_exit(void);

/* request.c */
void imex_request_fail_all(u32 status, const char *msg);
void imex_requests_free(void);
unsigned long imex_requests_expire(unsigned long now);

/* manager.c: the reaper expires requests. */
int imex_manager_init(void);
void imex_manager_exit(void);
bool imex_manager_attached(void);
bool imex_is_manager(const struct genl_info *info,
		     struct netlink_ext_ack *extack);
u32 imex_manager_pid(void);
void imex_reaper_kick(unsigned long when);

/* Netlink handlers, next to the objects they act on. */
int imex_nl_node_get(struct sk_buff *skb, struct genl_info *info);
int imex_nl_node_set(struct sk_buff *skb, struct genl_info *info);
int imex_nl_request(struct sk_buff *skb, struct genl_info *info);
int imex_nl_req_accept(struct sk_buff *skb, struct genl_info *info);
int imex_nl_req_done(struct sk_buff *skb, struct genl_info *info);
int imex_nl_domain_get(struct sk_buff *skb, struct genl_info *info);
int imex_nl_domain_dump(struct sk_buff *skb, struct netlink_callback *cb);
int imex_nl_domain_set_status(struct sk_buff *skb, struct genl_info *info);
int imex_nl_domain_set(struct sk_buff *skb, struct genl_info *info);
int imex_nl_domain_remove(struct sk_buff *skb, struct genl_info *info);
int imex_nl_channel_get(struct sk_buff *skb, struct genl_info *info);
int imex_nl_channel_dump(struct sk_buff *skb, struct netlink_callback *cb);
int imex_nl_channel_set(struct sk_buff *skb, struct genl_info *info);
int imex_nl_manager_attach(struct sk_buff *skb, struct genl_info *info);
int imex_nl_manager_detach(struct sk_buff *skb, struct genl_info *info);
int imex_nl_import_accept(struct sk_buff *skb, struct genl_info *info);
int imex_nl_import_done(struct sk_buff *skb, struct genl_info *info);
int imex_nl_import_check(struct sk_buff *skb, struct genl_info *info);
int imex_nl_export_del_accept(struct sk_buff *skb, struct genl_info *info);
int imex_nl_import_revoke(struct sk_buff *skb, struct genl_info *info);

/* netlink.c */
extern struct genl_family imex_genl_family;

/* The socket a request came from (pre_doit stores it): the manager's identity. */
#define IMEX_SENDER_SK 0
static inline struct sock *imex_sender_sk(const struct genl_info *info)
{
	return info->user_ptr[IMEX_SENDER_SK];
}

int imex_genl_init(void);
void imex_genl_exit(void);
int imex_put_domain(struct sk_buff *skb, const struct imex_domain *d,
		    bool full);
int imex_put_domain_status(struct sk_buff *skb, const struct imex_domain *d,
			   const unsigned long *changed);
size_t imex_domain_status_size(const struct imex_domain *d,
			       const unsigned long *changed);
int imex_put_channel(struct sk_buff *skb, const struct imex_channel *ch);
int imex_put_node(struct sk_buff *skb, bool stats);

/* stats.c */
void imex_stats_export(void);
void imex_stats_import(int err);
int imex_put_stats(struct sk_buff *skb);
struct sk_buff *imex_reply_new(struct genl_info *info, u8 cmd, void **hdr);

/* notify.c: events on the public group. */
void imex_notify_domain(u8 cmd, const struct imex_domain *d);
/* DOMAIN_SET_STATUS with the members set in @changed (bit per position). */
void imex_notify_domain_status(const struct imex_domain *d,
			       const unsigned long *changed);
bool imex_events_listened(void);
/* IMPORTS_REVOKED: one per domain, exporting node and reason. */
void imex_notify_imports_revoked(const char *domain, const uuid_t *duuid,
				 const uuid_t *node, u32 reason, u32 count);
void imex_notify_channel(u8 cmd, const struct imex_channel *ch);
void imex_notify_node(void);
void imex_notify_manager(u8 cmd, u32 pid);
/* The result a manager may attach to a successful request. */
struct imex_req_result {
	const char	*msg;
	const uuid_t	*uuid;		/* or NULL */
	const void	*ids;		/* u32 array, or NULL */
	int		ids_len;	/* bytes */
};

void imex_notify_req_done(u64 id, u32 cmd, u32 status, const char *domain,
			  const struct imex_req_result *res);
/* -ENOMEM when the upcall could not be built, else 0. */
int imex_notify_req_queued(u64 id);
/* IMEX_CMD_IMPORT_NOTIFY (with the import id) or IMEX_CMD_EXPORT_DEL. */
int imex_notify_mgr(u8 cmd, u64 import_id);

/* Set under imex_lock before the family goes away: no more notifications. */
extern bool imex_unloading;

static inline void imex_bump(void)
{
	imex_generation++;
}

#endif /* _IMEX_H */
