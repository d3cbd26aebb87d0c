/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * imex: IMEX channels, the boundary that decides which processes on the nodes
 * of a multi-node NVLink machine may import each other's GPU memory.
 *
 * Hierarchy enforced by the module on every node:
 *
 *   NVLink domain      cluster UUID
 *    └ partition       u32 partition (clique) id inside it
 *       └ IMEX domain  named set of member nodes (name + UUID)
 *          └ channel   id in [0, max_channels); /dev/imex-channels/channel<N>
 *
 * Control interface: the generic netlink family IMEX_GENL_NAME, version
 * IMEX_GENL_VERSION, in the initial network namespace only.  Commands marked
 * (admin) need CAP_SYS_ADMIN (and CAP_NET_ADMIN, which the generic netlink
 * core checks first); (manager) also need the sender to be the attached
 * manager socket (see IMEX_CMD_MANAGER_ATTACH).  Everything else is readable
 * by anyone.  Refusals carry an extended-ack message naming what was wrong.
 *
 * Attribute tree per command (-> means the reply or notification):
 *
 * IMEX_CMD_NODE_GET: no attributes
 *   -> IMEX_A_NODE_NAME: NUL-terminated string, the name this node has in
 *                        domain member lists (default: the host name at load
 *                        if valid; absent while the node is unnamed)
 *      IMEX_A_NODE_UUID: 16 bytes, set by the manager (all-zero until then)
 *      IMEX_A_FABRIC_UUID: 16 bytes, NVLink cluster UUID (absent if unset)
 *      IMEX_A_FABRIC_PARTITION: u32 (absent if unset)
 *      IMEX_A_MAX_CHANNELS: u32, the max_channels module parameter
 *      IMEX_A_CHRDEV_MAJOR: u32, major of the imex-channels char region
 *      IMEX_A_MANAGER_PID: u32, pid of the attached manager (absent if none)
 *      IMEX_A_DOMAIN_COUNT: u32, domains on this node
 *      IMEX_A_GENERATION: u32, bumped on every state change
 *      IMEX_A_EXPORT_COUNT: u32, live exports on this node
 *      IMEX_A_IMPORT_COUNT: u32, imports held on this node (revoked ones not
 *                           yet read included)
 *      IMEX_A_STATS: nested, counters since the module loaded, each u64
 *                    (only to a CAP_SYS_ADMIN caller, never in events):
 *          IMEX_A_STATS_EXPORTS, IMEX_A_STATS_IMPORTS,
 *          IMEX_A_STATS_REFUSED_*: imports refused, by errno class
 *
 * IMEX_CMD_NODE_SET (admin): any of
 *      IMEX_A_NODE_NAME, IMEX_A_NODE_UUID,
 *      IMEX_A_FABRIC_UUID + IMEX_A_FABRIC_PARTITION (both or neither)
 *   Refused with EBUSY while any domain exists (invariant 1).
 *
 * IMEX_CMD_DOMAIN_CREATE (admin): a request, answered by the manager.
 *      IMEX_A_DOMAIN_NAME: string, [A-Za-z0-9][A-Za-z0-9_.-]*, < IMEX_NAME_MAX
 *      IMEX_A_DOMAIN_UUID: 16 bytes, optional (the manager picks one if absent)
 *      IMEX_A_MEMBERS: nested array, 1..IMEX_MEMBERS_MAX entries, each
 *          IMEX_A_MEMBER_ENTRY_NAME: string, node name (unique in the list)
 *          IMEX_A_MEMBER_ADDR: string, "host[:port]" the daemons use
 *                              (optional: the name is then the address)
 *      IMEX_A_CHANNEL_COUNT: u32, how many channels to grant (default 0), or
 *      IMEX_A_CHANNELS: nested array, each IMEX_A_CHANNEL_ENTRY_ID (explicit
 *          ids; UID/GID/MODE per entry are ignored in requests)
 *      IMEX_A_CHANNEL_UID, IMEX_A_CHANNEL_GID: u32 owner (default 0)
 *      IMEX_A_CHANNEL_MODE: u32 permission bits (default 0600, never above 0777)
 *   -> IMEX_A_REQ_ID: u64; the outcome arrives as IMEX_CMD_REQ_DONE on the
 *      events group.  ESRCH at once when no manager is attached.
 *
 * IMEX_CMD_DOMAIN_DELETE (admin): a request.  IMEX_A_DOMAIN_NAME -> IMEX_A_REQ_ID
 * IMEX_CMD_CHANNEL_ALLOC (admin): a request.  IMEX_A_DOMAIN_NAME and
 *      IMEX_A_CHANNEL_COUNT or IMEX_A_CHANNELS -> IMEX_A_REQ_ID
 * IMEX_CMD_CHANNEL_FREE (admin): a request.  IMEX_A_DOMAIN_NAME, IMEX_A_CHANNELS
 *      -> IMEX_A_REQ_ID
 * IMEX_CMD_MEMBER_EVICT (admin): a request.  IMEX_A_DOMAIN_NAME,
 *      IMEX_A_MEMBER_NAME -> IMEX_A_REQ_ID
 * IMEX_CMD_MEMBER_REPLACE (admin): a request.  IMEX_A_DOMAIN_NAME,
 *      IMEX_A_MEMBER_NAME (the member that leaves, not this node),
 *      IMEX_A_MEMBER_NEW_NAME (the node of the group that takes its place
 *      and is granted the domain's channels) -> IMEX_A_REQ_ID.  One change:
 *      the other members keep their channels, fds and imports.
 * IMEX_CMD_NODE_JOIN (admin): a request, naming no domain: add a node to
 *      this NVLink domain's group.  IMEX_A_MEMBER_NAME (the node), optional
 *      IMEX_A_NODE_ADDR ("host[:port]", < IMEX_ADDR_MAX; absent: the name)
 *      -> IMEX_A_REQ_ID
 * IMEX_CMD_NODE_LEAVE (admin): a request, naming no domain: remove a node
 *      from the group (refused while a domain names it).
 *      IMEX_A_MEMBER_NAME -> IMEX_A_REQ_ID
 *   Their REQ_DONE events carry no IMEX_A_DOMAIN_NAME.
 *
 * IMEX_CMD_DOMAIN_GET: IMEX_A_DOMAIN_NAME or IMEX_A_DOMAIN_UUID selects one
 *      domain (doit); with NLM_F_DUMP every domain, in summary form.
 *   -> IMEX_A_DOMAIN_NAME, IMEX_A_DOMAIN_UUID, IMEX_A_FABRIC_UUID,
 *      IMEX_A_FABRIC_PARTITION, IMEX_A_DOMAIN_STATE (u32 enum imex_domain_state),
 *      IMEX_A_MEMBER_COUNT (u32), IMEX_A_CHANNEL_COUNT (u32),
 *      IMEX_A_MEMBER_SELF (u32 index of this node in the member list),
 *      IMEX_A_GENERATION (u32, bumped on every change of the domain),
 *      IMEX_A_DOMAIN_GENERATION (u64, as the last IMEX_CMD_DOMAIN_SET gave
 *      it), IMEX_A_DOMAIN_REASON (string, why it is not READY, when known),
 *      and in doit replies only:
 *      IMEX_A_MEMBERS: nested array, each
 *          IMEX_A_MEMBER_ENTRY_NAME, IMEX_A_MEMBER_ADDR,
 *          IMEX_A_MEMBER_STATE: u32 enum imex_member_state, as this node sees it
 *          IMEX_A_MEMBER_REASON: string, why (absent: none given, or for
 *                                every member if the reasons would not
 *                                fit one attribute, even without views)
 *          IMEX_A_MEMBER_SINCE: u64 ms since the epoch it is in that state
 *                               (absent: not known)
 *          IMEX_A_MEMBER_VIEW: binary, one u8 enum imex_member_state per member:
 *                              how that member sees each other member (the row
 *                              of the From\To matrix; absent if not known, or
 *                              if the views would not fit one attribute)
 *      IMEX_A_CHANNEL_IDS: binary array of u32 channel ids (doit only, and
 *                          only up to IMEX_CHANNEL_IDS_MAX ids: list larger
 *                          domains with IMEX_CMD_CHANNEL_GET)
 *   Dumps set NLM_F_DUMP_INTR when a change raced them.
 *
 * IMEX_CMD_CHANNEL_GET: IMEX_A_CHANNEL_ID (doit), or a dump, optionally
 *      filtered by IMEX_A_DOMAIN_NAME.
 *   -> IMEX_A_CHANNEL_ID, IMEX_A_DOMAIN_NAME, IMEX_A_DOMAIN_UUID,
 *      IMEX_A_CHANNEL_STATE (u32 enum imex_channel_state),
 *      IMEX_A_CHANNEL_UID, IMEX_A_CHANNEL_GID, IMEX_A_CHANNEL_MODE,
 *      IMEX_A_CHANNEL_OPEN_COUNT (u32 open file descriptions),
 *      IMEX_A_CHRDEV_MAJOR and IMEX_A_CHANNEL_MINOR (u32: the device number
 *      of this grant of the channel; see "Channel character devices")
 *
 * IMEX_CMD_CHANNEL_SET (admin): IMEX_A_CHANNEL_ID and any of
 *      IMEX_A_CHANNEL_UID, IMEX_A_CHANNEL_GID, IMEX_A_CHANNEL_MODE.
 *   The device node is re-created with the new owner/mode and the same
 *   device number; open fds stay.
 *
 * Manager side (the imexd daemon):
 *
 * IMEX_CMD_MANAGER_ATTACH (admin): makes the sending socket the manager.
 *      EALREADY if another socket is attached.  The attachment ends with
 *      IMEX_CMD_MANAGER_DETACH or when the socket closes; then pending
 *      requests fail with ENOTCONN, and every domain becomes
 *      IMEX_DOMAIN_DOWN until a manager pushes its state.
 * IMEX_CMD_MANAGER_DETACH (manager): no attributes.
 *
 * IMEX_CMD_REQ_NOTIFY: sent by the kernel on the "manager" group (readable
 *      with CAP_SYS_ADMIN only) when a request is queued: IMEX_A_REQ_ID.
 * IMEX_CMD_REQ_ACCEPT (manager): no attributes -> the oldest unaccepted
 *      request: IMEX_A_REQ_ID, IMEX_A_REQ_CMD (u32, the IMEX_CMD_* that made
 *      it), IMEX_A_REQ_ATTRS (nested: the attributes of that command, as sent
 *      and validated).  ENOENT when none is waiting.
 * IMEX_CMD_REQ_DONE (manager): IMEX_A_REQ_ID, IMEX_A_REQ_STATUS (u32 errno,
 *      0 for success), optional IMEX_A_REQ_MESSAGE (string for the caller),
 *      and on success optionally the result: IMEX_A_DOMAIN_UUID (the domain
 *      created) and IMEX_A_CHANNEL_IDS (u32 array: the channels granted or
 *      freed, at most IMEX_CHANNEL_IDS_MAX).
 *      Also multicast on "events" with IMEX_A_REQ_ID, IMEX_A_REQ_CMD,
 *      IMEX_A_REQ_STATUS, IMEX_A_DOMAIN_NAME, and IMEX_A_REQ_MESSAGE,
 *      IMEX_A_DOMAIN_UUID, IMEX_A_CHANNEL_IDS when given, once a request
 *      completes, whether by the manager, by timeout (ETIMEDOUT) or by detach
 *      (ENOTCONN).
 *
 * IMEX_CMD_DOMAIN_SET (manager): "domain (name, UUID) is now this", applied
 *      at once and atomically: it creates the domain or replaces its
 *      definition, or refuses and changes nothing.
 *      IMEX_A_DOMAIN_NAME, IMEX_A_DOMAIN_UUID, IMEX_A_FABRIC_UUID,
 *      IMEX_A_FABRIC_PARTITION (this node's), IMEX_A_MEMBERS (names,
 *      addresses; must contain this node), IMEX_A_DOMAIN_GENERATION (u64,
 *      the manager's, reported back by IMEX_CMD_DOMAIN_GET), and the whole
 *      channel set (none when both are absent) as
 *      IMEX_A_CHANNELS (nested array: IMEX_A_CHANNEL_ENTRY_ID with optional
 *          IMEX_A_CHANNEL_ENTRY_UID/GID/MODE; defaults 0, 0, 0600) and/or
 *      IMEX_A_CHANNEL_IDS (u32 array, at most IMEX_CHANNEL_IDS_MAX ids)
 *          owned by IMEX_A_CHANNEL_UID/GID/MODE (same defaults).
 *   Each channel must be below max_channels and free here or already this
 *   domain's (EADDRINUSE); a domain of that name with another UUID, or that
 *   UUID under another name, is EEXIST.  Channels left out are revoked
 *   (their fds, exports and imports end), new ones granted, changed owners
 *   re-create the device node; the request returns once the device nodes
 *   are made.  A new domain starts READY; the state of an existing one is
 *   kept, and so are the states of members still listed.  Setting the
 *   definition a domain already has changes nothing.
 * IMEX_CMD_DOMAIN_REMOVE (manager): IMEX_A_DOMAIN_NAME, optional
 *      IMEX_A_DOMAIN_UUID (ESTALE if the domain has another).  Revokes its
 *      channels and removes it at once.  ENOENT when there is none.
 *
 * Commands 21-24 and attributes 30-32 were the two-phase changes
 * (CHANGE_PREPARE/COMMIT/ABORT/GET), replaced by IMEX_CMD_DOMAIN_SET and
 * IMEX_CMD_DOMAIN_REMOVE; their numbers stay unused (IMEX_CMD_NODE_JOIN
 * and IMEX_CMD_NODE_LEAVE came after them, at the end).
 *
 * IMEX_CMD_DOMAIN_SET_STATUS (manager): IMEX_A_DOMAIN_NAME,
 *      IMEX_A_DOMAIN_STATE (READY or DEGRADED), optional IMEX_A_DOMAIN_REASON
 *      (< IMEX_MESSAGE_MAX; dropped when READY), optional IMEX_A_MEMBERS with
 *      IMEX_A_MEMBER_ENTRY_NAME + IMEX_A_MEMBER_STATE + IMEX_A_MEMBER_VIEW +
 *      IMEX_A_MEMBER_REASON + IMEX_A_MEMBER_SINCE (members not named keep
 *      their state; a named one's reason and since are replaced, absent
 *      meaning none).  A refused status changes nothing.  The notification
 *      on "events" carries the summary and, in IMEX_A_MEMBERS, the entries
 *      (no views) whose state, reason or since it changed, up to 32 KiB.
 *      When the manager goes, the module sets every domain DOWN with its
 *      own IMEX_A_DOMAIN_REASON.
 *
 * IMEX_CMD_IMPORTS_REVOKED (notification on "events"): imports were
 *      revoked by the system (IMPORT_REVOKE, imexd gone, a channel
 *      revoked; never for IMEX_REVOKE_UNEXPORTED): one per importing domain, exporting node and reason of one
 *      operation, never one per import: IMEX_A_DOMAIN_NAME,
 *      IMEX_A_DOMAIN_UUID, IMEX_A_HANDLE_NODE, IMEX_A_REVOKE_REASON,
 *      IMEX_A_IMPORT_COUNT.
 *
 * Export and import (the data path a channel guards; see "Channel fd
 * ioctls" below for the process side):
 *
 * IMEX_CMD_IMPORT_NOTIFY: sent by the kernel on the "manager" group when a
 *      process asks for a remote import (the handle names another node):
 *      IMEX_A_IMPORT_ID.
 * IMEX_CMD_IMPORT_ACCEPT (manager): no attributes -> the oldest remote
 *      import not yet accepted: IMEX_A_IMPORT_ID (u64), IMEX_A_HANDLE_NODE,
 *      IMEX_A_HANDLE_ID, and the importer's IMEX_A_DOMAIN_UUID and
 *      IMEX_A_CHANNEL_ID.  ENOENT when none is waiting.
 * IMEX_CMD_IMPORT_DONE (manager): IMEX_A_IMPORT_ID, IMEX_A_REQ_STATUS (u32
 *      errno below 512, 0 for success: kernel-internal codes such as
 *      ERESTARTSYS must never reach a process), IMEX_A_DESC on success, optional
 *      IMEX_A_REQ_MESSAGE.  ENOENT when the importer no longer waits (it was
 *      interrupted or timed out): nothing to undo.
 * IMEX_CMD_IMPORT_CHECK (manager): on the exporting node, on behalf of a
 *      peer: IMEX_A_HANDLE_ID, IMEX_A_DOMAIN_UUID + IMEX_A_CHANNEL_ID (the
 *      importer's), IMEX_A_MEMBER_NAME (the importing node; required)
 *   -> IMEX_A_DESC.  ENOENT: no such export; EPERM: the export belongs to
 *      another domain or channel; ENOLINK: the domain is DOWN; EXDEV: the
 *      importing node is not a member of the domain.  A successful check
 *      marks the export as imported remotely, so its end is queued for the
 *      manager.  Handle ids start at a random value on every module load,
 *      so a handle from an earlier load does not name a later export.
 * IMEX_CMD_EXPORT_DEL: sent by the kernel on the "manager" group when an
 *      export that a remote node imported goes away (unexport, close of its
 *      fd, revocation of its channel): no attributes; the records wait in a
 *      queue of at most IMEX_EXPORT_ENDS_MAX entries.
 * IMEX_CMD_EXPORT_DEL_ACCEPT (manager): no attributes -> the oldest queued
 *      record: IMEX_A_HANDLE_ID, IMEX_A_DOMAIN_UUID, IMEX_A_CHANNEL_ID.
 *      ENOENT when none.  The queue is emptied when the manager detaches: a
 *      new daemon instance makes its peers drop every import of this node's
 *      exports anyway.
 * IMEX_CMD_IMPORT_REVOKE (manager): on an importing node: IMEX_A_HANDLE_NODE,
 *      optional IMEX_A_HANDLE_ID (absent: every export of that node),
 *      optional IMEX_A_DOMAIN_UUID (only imports through that domain's
 *      channels), IMEX_A_REVOKE_REASON (u32 enum imex_revoke_reason)
 *   -> IMEX_A_IMPORT_COUNT: imports revoked.  Pending remote imports from
 *      that node fail with EHOSTUNREACH when IMEX_A_HANDLE_ID is absent.
 *
 * When the manager detaches, pending remote imports fail with ENOTCONN and
 * every import of another node's export is revoked
 * (IMEX_REVOKE_DAEMON_LOST): nothing would tell this node of their end.
 *
 * Notifications on the "events" group (anyone may listen) for every change:
 *      IMEX_CMD_NODE_SET, IMEX_CMD_DOMAIN_NEW, IMEX_CMD_DOMAIN_DEL,
 *      IMEX_CMD_DOMAIN_SET_STATUS (domain summary attributes),
 *      IMEX_CMD_CHANNEL_NEW, IMEX_CMD_CHANNEL_DEL, IMEX_CMD_CHANNEL_SET
 *      (channel attributes), IMEX_CMD_REQ_DONE, IMEX_CMD_MANAGER_ATTACH,
 *      IMEX_CMD_MANAGER_DETACH.
 *
 * Channel character devices: /dev/imex-channels/channel<N>, char major from
 * the /proc/devices entry "imex-channels" (IMEX_A_CHRDEV_MAJOR).  The minor
 * is not N: every grant of a channel gets its own (IMEX_A_CHANNEL_MINOR, any
 * value in 0..2^20-1, reused only after all others were handed out: about
 * 2^20 reservations later, failed DOMAIN_SETs included), so a node made for
 * one grant (from a CDI spec, say) does not reach a later grant of the same
 * channel to another domain.  open() fails with ENOLINK while
 * the channel's domain is DOWN, and with ENXIO when the number is not that
 * of a granted channel (revoked, an earlier grant's, or never given out:
 * a hand-made node reaches nothing),
 * and while the channel's device node is still being made.  After revocation poll()
 * reports POLLERR | POLLHUP | POLLPRI and ioctls fail with ENODEV.
 */

#ifndef _UAPI_LINUX_IMEX_H
#define _UAPI_LINUX_IMEX_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define IMEX_GENL_NAME		"imex"
#define IMEX_GENL_VERSION	1
#define IMEX_MCGRP_EVENTS	"events"
#define IMEX_MCGRP_MANAGER	"manager"

#define IMEX_CHRDEV_NAME	"imex-channels"
#define IMEX_DEVDIR		"imex-channels"

/* Bounds, enforced by the module and documented in Documentation/. */
#define IMEX_NAME_MAX		64	/* names, including the NUL */
#define IMEX_ADDR_MAX		256	/* member, node addresses, with the NUL */
#define IMEX_UUID_LEN		16
#define IMEX_MEMBERS_MAX	160	/* 144 nodes (NVL576) and room */
#define IMEX_DOMAINS_MAX	256	/* per node */
#define IMEX_CHANNELS_MAX	(1U << 20)
#define IMEX_MINORS		(1U << 20)	/* device minors grants get */
#define IMEX_REQS_MAX		64	/* requests queued for the manager */
#define IMEX_REQ_TIMEOUT_MS	120000	/* a request not done by then fails */
#define IMEX_MESSAGE_MAX	256
#define IMEX_CHANNELS_PER_MSG	4096	/* entries in one IMEX_A_CHANNELS */
#define IMEX_CHANNEL_IDS_MAX	16000	/* ids in one IMEX_A_CHANNEL_IDS */
#define IMEX_DESC_MAX		256	/* bytes in an export's descriptor */
#define IMEX_EXPORTS_PER_FD	1024
#define IMEX_IMPORTS_PER_FD	4096	/* revoked ones not yet read included */
/*
 * Per domain, over all fds of its channels on this node: a domain at a
 * bound gets ENOBUFS, other domains are unaffected.  Nothing is bounded per
 * node beyond these times IMEX_DOMAINS_MAX: the *_MAX below, the most a node
 * can hold.
 */
#define IMEX_EXPORTS_PER_DOMAIN	16384
#define IMEX_IMPORTS_PER_DOMAIN	16384	/* revoked ones not yet read included */
#define IMEX_IMPORTS_PENDING_PER_DOMAIN 256	/* remote imports waiting */
#define IMEX_EXPORTS_MAX	(IMEX_DOMAINS_MAX * IMEX_EXPORTS_PER_DOMAIN)
#define IMEX_IMPORTS_MAX	(IMEX_DOMAINS_MAX * IMEX_IMPORTS_PER_DOMAIN)
#define IMEX_IMPORTS_PENDING_MAX (IMEX_DOMAINS_MAX * IMEX_IMPORTS_PENDING_PER_DOMAIN)
#define IMEX_EXPORT_ENDS_MAX	65536	/* export ends queued for the manager */
#define IMEX_IMPORT_TIMEOUT_MS	10000	/* default wait for a remote import */
#define IMEX_IMPORT_TIMEOUT_MAX_MS 120000

enum imex_cmd {
	IMEX_CMD_UNSPEC,
	IMEX_CMD_NODE_GET,
	IMEX_CMD_NODE_SET,
	IMEX_CMD_DOMAIN_CREATE,
	IMEX_CMD_DOMAIN_DELETE,
	IMEX_CMD_DOMAIN_GET,
	IMEX_CMD_DOMAIN_NEW,		/* notification */
	IMEX_CMD_DOMAIN_DEL,		/* notification */
	IMEX_CMD_DOMAIN_SET_STATUS,
	IMEX_CMD_CHANNEL_GET,
	IMEX_CMD_CHANNEL_SET,
	IMEX_CMD_CHANNEL_NEW,		/* notification */
	IMEX_CMD_CHANNEL_DEL,		/* notification */
	IMEX_CMD_CHANNEL_ALLOC,
	IMEX_CMD_CHANNEL_FREE,
	IMEX_CMD_MEMBER_EVICT,
	IMEX_CMD_MANAGER_ATTACH,
	IMEX_CMD_MANAGER_DETACH,
	IMEX_CMD_REQ_NOTIFY,		/* notification, manager group */
	IMEX_CMD_REQ_ACCEPT,
	IMEX_CMD_REQ_DONE,
	/* 21-24: the two-phase changes, removed; never reused: new
	 * commands go at the end. */
	IMEX_CMD_IMPORT_NOTIFY = 25,	/* notification, manager group */
	IMEX_CMD_IMPORT_ACCEPT,
	IMEX_CMD_IMPORT_DONE,
	IMEX_CMD_IMPORT_CHECK,
	IMEX_CMD_EXPORT_DEL,		/* notification, manager group */
	IMEX_CMD_EXPORT_DEL_ACCEPT,
	IMEX_CMD_IMPORT_REVOKE,
	IMEX_CMD_DOMAIN_SET,
	IMEX_CMD_DOMAIN_REMOVE,
	IMEX_CMD_NODE_JOIN,
	IMEX_CMD_NODE_LEAVE,
	IMEX_CMD_IMPORTS_REVOKED,	/* notification */
	IMEX_CMD_MEMBER_REPLACE,

	__IMEX_CMD_MAX
};
#define IMEX_CMD_MAX (__IMEX_CMD_MAX - 1)

enum imex_attr {
	IMEX_A_UNSPEC,
	IMEX_A_NODE_NAME,		/* string */
	IMEX_A_NODE_UUID,		/* binary, 16 */
	IMEX_A_FABRIC_UUID,		/* binary, 16 */
	IMEX_A_FABRIC_PARTITION,	/* u32 */
	IMEX_A_MAX_CHANNELS,		/* u32 */
	IMEX_A_CHRDEV_MAJOR,		/* u32 */
	IMEX_A_MANAGER_PID,		/* u32 */
	IMEX_A_DOMAIN_COUNT,		/* u32 */
	IMEX_A_GENERATION,		/* u32 */
	IMEX_A_DOMAIN_NAME,		/* string */
	IMEX_A_DOMAIN_UUID,		/* binary, 16 */
	IMEX_A_DOMAIN_STATE,		/* u32, enum imex_domain_state */
	IMEX_A_MEMBER_COUNT,		/* u32 */
	IMEX_A_MEMBER_SELF,		/* u32 */
	IMEX_A_MEMBERS,			/* nested array of enum imex_member_attr */
	IMEX_A_MEMBER_NAME,		/* string (MEMBER_EVICT/REPLACE, NODE_JOIN/LEAVE) */
	IMEX_A_CHANNEL_COUNT,		/* u32 */
	IMEX_A_CHANNELS,		/* nested array of enum imex_channel_attr */
	IMEX_A_CHANNEL_ID,		/* u32 */
	IMEX_A_CHANNEL_UID,		/* u32 */
	IMEX_A_CHANNEL_GID,		/* u32 */
	IMEX_A_CHANNEL_MODE,		/* u32 */
	IMEX_A_CHANNEL_STATE,		/* u32, enum imex_channel_state */
	IMEX_A_CHANNEL_OPEN_COUNT,	/* u32 */
	IMEX_A_REQ_ID,			/* u64 */
	IMEX_A_REQ_CMD,			/* u32 */
	IMEX_A_REQ_STATUS,		/* u32, positive errno or 0 */
	IMEX_A_REQ_MESSAGE,		/* string */
	IMEX_A_REQ_ATTRS,		/* nested, enum imex_attr */
	/* 30-32: the two-phase changes' attributes, removed; never reused. */
	IMEX_A_CHANNEL_IDS = 33,	/* binary, u32 array */
	IMEX_A_PAD,
	IMEX_A_IMPORT_ID,		/* u64 */
	IMEX_A_HANDLE_NODE,		/* binary, 16: exporting node's UUID */
	IMEX_A_HANDLE_ID,		/* u64 */
	IMEX_A_DESC,			/* binary, 1..IMEX_DESC_MAX */
	IMEX_A_REVOKE_REASON,		/* u32, enum imex_revoke_reason */
	IMEX_A_IMPORT_COUNT,		/* u32 */
	IMEX_A_EXPORT_COUNT,		/* u32 */
	IMEX_A_CHANNEL_MINOR,		/* u32, the grant's device minor */
	IMEX_A_DOMAIN_GENERATION,	/* u64, the manager's (domain-set) */
	IMEX_A_NODE_ADDR,		/* string, "host[:port]" (NODE_JOIN) */
	IMEX_A_DOMAIN_REASON,		/* string, why the domain is not READY */
	IMEX_A_STATS,			/* nested, enum imex_stats_attr */
	IMEX_A_MEMBER_NEW_NAME,		/* string (MEMBER_REPLACE: the new member) */

	__IMEX_A_MAX
};
#define IMEX_A_MAX (__IMEX_A_MAX - 1)

/*
 * IMEX_A_STATS (node-get replies): the node's counters since the module
 * loaded, each a u64.  A refused import counts once, under the class of
 * the errno the importer got.
 */
enum imex_stats_attr {
	IMEX_A_STATS_UNSPEC,
	IMEX_A_STATS_EXPORTS,		/* exports made */
	IMEX_A_STATS_IMPORTS,		/* new imports held (local and remote) */
	IMEX_A_STATS_REFUSED_PERMISSION, /* EPERM, EACCES: not this channel's */
	IMEX_A_STATS_REFUSED_NOT_FOUND,	/* ENOENT: no such export */
	IMEX_A_STATS_REFUSED_UNREACHABLE, /* EHOSTUNREACH: exporter not reachable */
	IMEX_A_STATS_REFUSED_TIMEOUT,	/* ETIMEDOUT: no answer in time */
	IMEX_A_STATS_REFUSED_NO_SPACE,	/* ENOBUFS, ENOSPC, EAGAIN: a table full */
	IMEX_A_STATS_REFUSED_NO_DAEMON,	/* ESRCH: no imexd attached */
	IMEX_A_STATS_REFUSED_REVOKED,	/* ENODEV: the channel was revoked */
	IMEX_A_STATS_REFUSED_OTHER,	/* any other but EINTR (ENOMEM, ...) */
	IMEX_A_STATS_PAD,

	__IMEX_A_STATS_MAX
};
#define IMEX_A_STATS_MAX (__IMEX_A_STATS_MAX - 1)

enum imex_member_attr {
	IMEX_A_MEMBER_UNSPEC,
	IMEX_A_MEMBER_ENTRY_NAME,	/* string */
	IMEX_A_MEMBER_ADDR,		/* string */
	IMEX_A_MEMBER_STATE,		/* u32, enum imex_member_state */
	IMEX_A_MEMBER_VIEW,		/* binary, u8 per member */
	IMEX_A_MEMBER_REASON,		/* string, why it is in this state */
	IMEX_A_MEMBER_SINCE,		/* u64, ms since the epoch (CLOCK_REALTIME) */
	IMEX_A_MEMBER_PAD,		/* alignment of SINCE */

	__IMEX_A_MEMBER_MAX
};
#define IMEX_A_MEMBER_MAX (__IMEX_A_MEMBER_MAX - 1)

enum imex_channel_attr {
	IMEX_A_CHANNEL_UNSPEC,
	IMEX_A_CHANNEL_ENTRY_ID,	/* u32 */
	IMEX_A_CHANNEL_ENTRY_UID,	/* u32 */
	IMEX_A_CHANNEL_ENTRY_GID,	/* u32 */
	IMEX_A_CHANNEL_ENTRY_MODE,	/* u32 */

	__IMEX_A_CHANNEL_ENTRY_MAX
};
#define IMEX_A_CHANNEL_ENTRY_MAX (__IMEX_A_CHANNEL_ENTRY_MAX - 1)

enum imex_domain_state {
	/* 0 was PREPARED (the two-phase changes, removed): never reported. */
	IMEX_DOMAIN_DOWN = 1,	/* no manager is keeping it */
	IMEX_DOMAIN_READY,	/* every member sees every other */
	IMEX_DOMAIN_DEGRADED,	/* some member is not connected */

	__IMEX_DOMAIN_STATE_MAX
};

enum imex_member_state {
	IMEX_MEMBER_UNKNOWN,
	IMEX_MEMBER_SELF,
	IMEX_MEMBER_CONNECTED,
	IMEX_MEMBER_RECOVERING,		/* heartbeats missed, grace running */
	IMEX_MEMBER_DISCONNECTED,
	IMEX_MEMBER_NEVER_CONNECTED,
	IMEX_MEMBER_VERSION_MISMATCH,
	IMEX_MEMBER_REFUSED,		/* TLS or identity check refused it */

	__IMEX_MEMBER_STATE_MAX
};

enum imex_channel_state {
	IMEX_CHANNEL_RESERVED,	/* inside IMEX_CMD_DOMAIN_SET only: never reported */
	IMEX_CHANNEL_GRANTED,	/* device node present */

	__IMEX_CHANNEL_STATE_MAX
};

/* Why an import ended, as IMEX_IOC_REVOKED reports it. */
enum imex_revoke_reason {
	IMEX_REVOKE_UNEXPORTED,		/* the exporter unexported or closed */
	IMEX_REVOKE_NODE_LOST,		/* exporting node lost past its grace */
	IMEX_REVOKE_NODE_RESTARTED,	/* exporting node's imexd restarted */
	IMEX_REVOKE_CHANNEL_GONE,	/* a channel or domain went away */
	IMEX_REVOKE_DAEMON_LOST,	/* this node's imexd went away */

	__IMEX_REVOKE_REASON_MAX
};

/*
 * Channel fd ioctls.
 *
 * IMEX_IOC_EXPORT registers an opaque descriptor (what a GPU driver would
 * hand over) under the fd's channel and returns a fabric handle: this node's
 * UUID and an id never reused while the module is loaded and starting at a
 * random 63-bit value on each load, so a handle of an earlier load names no
 * later export.  The export lives
 * until IMEX_IOC_UNEXPORT, the close of the fd, or the channel's revocation.
 *
 * IMEX_IOC_IMPORT returns the descriptor of a handle if, and only if, the
 * export was made through the same domain and channel as the importing fd.
 * A handle of this node is decided here; another node's goes through imexd
 * to that node's kernel, sleeping interruptibly for at most timeout_ms.
 * Errors: EPERM (another domain or channel), ENOENT (no such export),
 * EHOSTUNREACH (the exporting node is not connected, or not a member),
 * ESRCH (no imexd on this node), ENOTCONN (imexd left during the import),
 * ETIMEDOUT, EINTR (a signal; nothing stays behind), ENOBUFS (a bound of
 * this header reached: per fd, or per domain for the fd's domain), ENODEV
 * (the channel was revoked, a waiting remote import included).  Importing a handle the fd already holds returns
 * the descriptor again and holds it once.
 *
 * An import ends with IMEX_IOC_UNIMPORT or the close of the fd, or is
 * revoked (enum imex_revoke_reason).  Revoked imports wait on the fd until
 * IMEX_IOC_REVOKED reads them; while any waits, poll() reports EPOLLPRI.
 * Revocation of the channel itself reports EPOLLERR | EPOLLHUP | EPOLLPRI;
 * the fd's exports end and its imports are dropped with it, and its ioctls,
 * IMEX_IOC_REVOKED included, fail with ENODEV.
 */
#define IMEX_IOC_MAGIC		0xE6

struct imex_channel_info {
	__u8	domain_uuid[IMEX_UUID_LEN];
	char	domain_name[IMEX_NAME_MAX];
	__u8	fabric_uuid[IMEX_UUID_LEN];
	__u32	fabric_partition;
	__u32	channel_id;
	__u32	domain_state;		/* enum imex_domain_state */
	__u32	flags;			/* zero, reserved */
	__u32	reserved[4];		/* zero */
};

#define IMEX_IOC_CHANNEL_INFO	_IOR(IMEX_IOC_MAGIC, 0x01, struct imex_channel_info)

struct imex_handle {
	__u8	node_uuid[IMEX_UUID_LEN];
	__u64	id;
};

struct imex_export_arg {
	struct imex_handle handle;	/* out */
	__u32	desc_len;		/* in: 1..IMEX_DESC_MAX */
	__u32	flags;			/* in: zero */
	__u8	desc[IMEX_DESC_MAX];	/* in */
};

struct imex_import_arg {
	struct imex_handle handle;	/* in */
	__u32	timeout_ms;		/* in: 0 for IMEX_IMPORT_TIMEOUT_MS */
	__u32	flags;			/* in: zero */
	__u32	desc_len;		/* out */
	__u32	reserved;		/* zero */
	__u8	desc[IMEX_DESC_MAX];	/* out */
};

struct imex_revoked_entry {
	struct imex_handle handle;
	__u32	reason;			/* enum imex_revoke_reason */
	__u32	reserved;
};

struct imex_revoked_arg {
	__u64	entries;	/* in: user pointer to struct imex_revoked_entry[] */
	__u32	count;		/* in: room for entries; out: entries written */
	__u32	pending;	/* out: revoked imports still waiting */
};

#define IMEX_IOC_EXPORT		_IOWR(IMEX_IOC_MAGIC, 0x02, struct imex_export_arg)
#define IMEX_IOC_UNEXPORT	_IOW(IMEX_IOC_MAGIC, 0x03, struct imex_handle)
#define IMEX_IOC_IMPORT		_IOWR(IMEX_IOC_MAGIC, 0x04, struct imex_import_arg)
#define IMEX_IOC_UNIMPORT	_IOW(IMEX_IOC_MAGIC, 0x05, struct imex_handle)
#define IMEX_IOC_REVOKED	_IOWR(IMEX_IOC_MAGIC, 0x06, struct imex_revoked_arg)

#endif /* _UAPI_LINUX_IMEX_H */
