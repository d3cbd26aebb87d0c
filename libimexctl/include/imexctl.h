/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libimexctl: control IMEX channels on this node.
 *
 * The library talks to the imex kernel module over its generic netlink family
 * ("imex"), loads and unloads the module with libkmod, and writes Container
 * Device Interface (CDI) specs for granted channels.  Link with
 * `pkg-config --cflags --libs libimexctl`.
 *
 * Conventions, for every function below unless it says otherwise:
 *
 *  - Everything goes through one context, struct imexctl, made by
 *    imexctl_new().  The library has no global state.  A context is not
 *    thread-safe: use one context per thread (several contexts may be used
 *    concurrently).
 *  - Functions return 0 on success or a negative errno value.  After a
 *    failure, imexctl_errmsg() returns a sentence that names the object and,
 *    where there is one, the way out (for refusals by the kernel this is the
 *    kernel's own extended-ack message).
 *  - Strings passed in are only read during the call; the caller keeps
 *    ownership.  Memory handed back is owned by the caller and released with
 *    the function named in each description.
 *  - Errors common to every call that needs the kernel:
 *      -ENODEV   the imex module is not loaded ("imexctl module load")
 *      -EPERM    the change needs CAP_SYS_ADMIN (run as root)
 *      -ENOMEM   out of memory
 *  - Calls that change a domain's membership or channels are requests that
 *    the node's imexd daemon carries out with the other members.  They block
 *    until the daemon reports the outcome or the timeout passes.  They fail
 *    with -ESRCH when no daemon is attached to the module.  A timeout_ms < 0
 *    means IMEXCTL_REQUEST_TIMEOUT_MS, a little longer than the kernel's own
 *    limit, so the kernel's verdict is what the caller sees.  The kernel's
 *    immediate acceptance or refusal is awaited even past a shorter timeout
 *    (a few seconds at most); a request still running at the timeout returns
 *    -ETIMEDOUT and carries on without the caller.
 *  - A context caches the family id: after reloading the module, make a new
 *    context.
 */
#ifndef IMEXCTL_H
#define IMEXCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IMEXCTL_NAME_MAX	64	/* names, including the NUL */
#define IMEXCTL_ADDR_MAX	256	/* member addresses, including the NUL */
#define IMEXCTL_UUID_LEN	16
#define IMEXCTL_UUID_STR_LEN	37	/* "xxxxxxxx-xxxx-...", including the NUL */
#define IMEXCTL_MEMBERS_MAX	160
#define IMEXCTL_CHANNELS_MAX	(1U << 20)
#define IMEXCTL_CHANNELS_PER_REQUEST 4096	/* ids or count in one request */
#define IMEXCTL_REQUEST_TIMEOUT_MS 125000

/* Same values as the kernel's enum imex_domain_state. */
enum imexctl_domain_state {
	/* 0 was PREPARED (the kernel's two-phase changes): never reported. */
	IMEXCTL_DOMAIN_DOWN = 1,	/* no daemon is keeping it */
	IMEXCTL_DOMAIN_READY,		/* every member sees every other */
	IMEXCTL_DOMAIN_DEGRADED,	/* some member is not connected */
};

/* Same values as the kernel's enum imex_member_state. */
enum imexctl_member_state {
	IMEXCTL_MEMBER_UNKNOWN,
	IMEXCTL_MEMBER_SELF,
	IMEXCTL_MEMBER_CONNECTED,
	IMEXCTL_MEMBER_RECOVERING,
	IMEXCTL_MEMBER_DISCONNECTED,
	IMEXCTL_MEMBER_NEVER_CONNECTED,
	IMEXCTL_MEMBER_VERSION_MISMATCH,
	IMEXCTL_MEMBER_REFUSED,		/* TLS or identity check refused it */
};

/* Same values as the kernel's enum imex_channel_state. */
enum imexctl_channel_state {
	IMEXCTL_CHANNEL_RESERVED,	/* never reported by the kernel now */
	IMEXCTL_CHANNEL_GRANTED,	/* device node present */
};

struct imexctl;

/* ---- context ---------------------------------------------------------- */

/*
 * Make a context in *ctxp.  Nothing is opened yet: the netlink socket and
 * the "imex" family are resolved by the first call that needs them, so this
 * succeeds whether or not the module is loaded.
 * Returns 0 or -ENOMEM.  Release with imexctl_free().
 */
int imexctl_new(struct imexctl **ctxp);

/* Close the context's sockets and free it.  NULL is accepted. */
void imexctl_free(struct imexctl *ctx);

/*
 * The message of the last failed call on @ctx: one sentence, no trailing
 * newline.  Owned by the context; valid until the next call on it.  Returns
 * "" when the last call succeeded.
 */
const char *imexctl_errmsg(const struct imexctl *ctx);

/* ---- small helpers (no kernel access, no context) ----------------------- */

/*
 * True if @name is a valid domain or node name: [A-Za-z0-9][A-Za-z0-9_.-]*,
 * shorter than IMEXCTL_NAME_MAX.
 */
bool imexctl_name_valid(const char *name);

/*
 * Parse the canonical form "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (hex
 * digits, either case) into @uuid.  Returns 0 or -EINVAL.
 */
int imexctl_uuid_parse(const char *s, uint8_t uuid[IMEXCTL_UUID_LEN]);

/* Write the canonical lower-case form of @uuid into @out. */
void imexctl_uuid_format(const uint8_t uuid[IMEXCTL_UUID_LEN],
			 char out[IMEXCTL_UUID_STR_LEN]);

/* True if every byte of @uuid is zero (an unset UUID). */
bool imexctl_uuid_is_null(const uint8_t uuid[IMEXCTL_UUID_LEN]);

/*
 * Names of states: "down", "ready", "degraded"; "self",
 * "connected", "recovering", "disconnected", "never-connected",
 * "version-mismatch", "unknown"; "reserved", "granted".  A value this
 * library does not know gives "unknown".  Static strings.
 */
const char *imexctl_domain_state_name(unsigned int state);
const char *imexctl_member_state_name(unsigned int state);
const char *imexctl_channel_state_name(unsigned int state);

/*
 * One letter per member state for connectivity matrices: C connected,
 * R recovering, D disconnected, N never connected, V version mismatch,
 * - self, ? unknown.
 */
char imexctl_member_state_letter(unsigned int state);

/* ---- kernel module -------------------------------------------------------- */

struct imexctl_module_params {
	uint32_t max_channels;		/* 0: the module's default */
	bool has_fabric;		/* set fabric_uuid + fabric_partition */
	uint8_t fabric_uuid[IMEXCTL_UUID_LEN];
	uint32_t fabric_partition;
	const char *node_name;		/* NULL: the module's default */
	const char *path;		/* NULL: look "imex" up in
					 * /lib/modules/$(uname -r); else the
					 * imex.ko file to insert */
};

/*
 * Load the imex module with libkmod, the way modprobe does: options from
 * modprobe.d apply (the blacklist does not, as for an explicit modprobe),
 * then the parameters given in @params (may be NULL).  Idempotent: returns
 * 0 if the module is already loaded, unless @params asks for a value that
 * differs from the loaded module's, which is -EEXIST (unload it first).
 * Other errors: -ENOENT module file not found, -ENOSYS the kernel has no
 * module support, -EPERM not root, -EINVAL parameters refused (see dmesg).
 */
int imexctl_module_load(struct imexctl *ctx,
			const struct imexctl_module_params *params);

/*
 * Unload the module.  Idempotent: 0 if it is not loaded.  -EBUSY while a
 * channel device is open (the message names the open channels when it can
 * list them), -EOPNOTSUPP if imex is built into the kernel.
 */
int imexctl_module_unload(struct imexctl *ctx);

struct imexctl_module_status {
	bool loaded;
	bool builtin;
	char state[16];			/* "live", "coming", "going",
					 * "builtin" or "" */
	int refcount;			/* -1 if unknown */
	char version[64];		/* "" if the module has none */
	char srcversion[64];		/* "" if unknown */
	bool has_major;			/* /proc/devices has "imex-channels" */
	uint32_t major;
	/* Module parameters, from /sys/module/imex/parameters/. */
	bool has_max_channels;
	uint32_t max_channels;
	bool has_fabric_uuid;
	char fabric_uuid[IMEXCTL_UUID_STR_LEN];	/* "" if not set */
	bool has_fabric_partition;
	uint32_t fabric_partition;
	bool has_node_name;
	char node_name[IMEXCTL_NAME_MAX];
};

/*
 * Fill @status.  Not being loaded is not an error (status->loaded is false).
 * Returns 0, or a negative errno if sysfs cannot be read at all.
 */
int imexctl_module_status(struct imexctl *ctx,
			  struct imexctl_module_status *status);

/* ---- node --------------------------------------------------------------- */

struct imexctl_node {
	char name[IMEXCTL_NAME_MAX];	/* name in domain member lists */
	uint8_t uuid[IMEXCTL_UUID_LEN];	/* all-zero until imexd sets it */
	bool has_fabric;
	uint8_t fabric_uuid[IMEXCTL_UUID_LEN];
	uint32_t fabric_partition;
	uint32_t max_channels;
	uint32_t major;			/* of the imex-channels char region */
	uint32_t manager_pid;		/* imexd's pid, 0 if none attached */
	uint32_t domain_count;		/* domains on this node */
	uint32_t generation;		/* bumped on every state change */
};

/* Fill @node from the kernel (IMEX_CMD_NODE_GET). */
int imexctl_node_get(struct imexctl *ctx, struct imexctl_node *node);

/*
 * Set the node's fabric identity (NVLink cluster UUID + partition id).
 * -EBUSY while any domain exists on the node.
 */
int imexctl_node_set_fabric(struct imexctl *ctx,
			    const uint8_t uuid[IMEXCTL_UUID_LEN],
			    uint32_t partition);

/* Set the node's name.  -EBUSY while any domain exists on the node. */
int imexctl_node_set_name(struct imexctl *ctx, const char *name);

/* ---- domains ---------------------------------------------------------------- */

struct imexctl_member {
	char name[IMEXCTL_NAME_MAX];
	char addr[IMEXCTL_ADDR_MAX];
	uint32_t state;			/* enum imexctl_member_state, as this
					 * node sees the member */
	uint8_t *view;			/* how this member sees each member
					 * (one enum imexctl_member_state per
					 * member, in list order): one row of
					 * the From\To matrix; NULL if unknown */
	size_t n_view;
};

struct imexctl_domain {
	char name[IMEXCTL_NAME_MAX];
	uint8_t uuid[IMEXCTL_UUID_LEN];
	bool has_fabric;
	uint8_t fabric_uuid[IMEXCTL_UUID_LEN];
	uint32_t fabric_partition;
	uint32_t state;			/* enum imexctl_domain_state */
	uint32_t member_count;
	uint32_t channel_count;
	uint32_t member_self;		/* this node's index in members;
					 * UINT32_MAX if not reported */
	uint32_t generation;
	/* Filled by imexctl_domain_get() only (empty in lists): */
	struct imexctl_member *members;
	size_t n_members;
	uint32_t *channel_ids;		/* every channel of the domain, ascending */
	size_t n_channel_ids;
};

/*
 * All domains on this node, in summary form (no members, no channel ids).
 * On success *domains is an array of *n entries (NULL when *n is 0):
 * release it with imexctl_domain_list_free().  -EAGAIN if the list kept
 * changing while being read.
 */
int imexctl_domain_list(struct imexctl *ctx, struct imexctl_domain **domains,
			size_t *n);
void imexctl_domain_list_free(struct imexctl_domain *domains, size_t n);

/*
 * One domain with its members, their views and its channel ids.  On success
 * *domain is allocated: release it with imexctl_domain_free().
 * -ENOENT if no such domain exists on this node.
 */
int imexctl_domain_get(struct imexctl *ctx, const char *name,
		       struct imexctl_domain **domain);
void imexctl_domain_free(struct imexctl_domain *domain);

/*
 * Why, as imexd told the module, for a domain from imexctl_domain_get()
 * until imexctl_domain_free() (a list entry or a struct built by the
 * caller has none: NULL and 0):
 * imexctl_domain_reason() why it is not READY (NULL: none given, or the
 * module's own when imexd is gone); imexctl_member_reason() why member @i
 * is in its state (NULL: none); imexctl_member_since() when it entered
 * that state, in ms since the epoch (0: not known).  The strings live as
 * long as the domain.  Since version node IMEXCTL_3.
 */
const char *imexctl_domain_reason(const struct imexctl_domain *domain);
const char *imexctl_member_reason(const struct imexctl_domain *domain, size_t i);
uint64_t imexctl_member_since(const struct imexctl_domain *domain, size_t i);

struct imexctl_member_spec {
	const char *name;		/* node name, imexctl_name_valid() */
	const char *addr;		/* NULL: NODES_FILE's; else "host[:port]",
					 * which must match NODES_FILE */
};

struct imexctl_domain_spec {
	const char *name;
	const uint8_t *uuid;		/* NULL: the daemon picks one */
	const struct imexctl_member_spec *members;
	size_t n_members;		/* 1..IMEXCTL_MEMBERS_MAX, this node
					 * among them */
	uint32_t channel_count;		/* grant this many channels, or */
	const uint32_t *channel_ids;	/* exactly these (n_channel_ids > 0) */
	size_t n_channel_ids;
	bool set_owner;			/* default owner is 0:0 */
	uint32_t uid, gid;
	bool set_mode;			/* default mode is 0600 */
	uint32_t mode;			/* permission bits, at most 0777 */
};

/*
 * Create a domain (a request carried out by imexd with every member).
 * Returns when the daemons have committed it or refused; the domain may
 * still be DEGRADED until its members have connected, see
 * imexctl_domain_wait().  Refusals: -EEXIST the name is taken, -EBUSY a
 * requested channel is in use, -EXDEV fabric mismatch, ... with the
 * daemon's or kernel's message.  -ETIMEDOUT if no outcome came in time.
 */
int imexctl_domain_create(struct imexctl *ctx,
			  const struct imexctl_domain_spec *spec,
			  int timeout_ms);

/* Delete a domain on every member (a request).  -ENOENT if unknown. */
int imexctl_domain_delete(struct imexctl *ctx, const char *name,
			  int timeout_ms);

/*
 * Remove member @member from the domain on the remaining members (a
 * request): the way out when a member is gone for good and blocks changes.
 */
int imexctl_member_evict(struct imexctl *ctx, const char *domain,
			 const char *member, int timeout_ms);

/*
 * Replace member @member of the domain by node @with in one change (a
 * request): @member leaves, @with joins with the domain's channels, the
 * other members keep theirs, their open fds and their imports.  Returns
 * once the change is committed and the domain is READY on this node
 * with @with listed and every member connected, all within @timeout_ms
 * (< 0: the default request timeout).  Refused, with nothing changed:
 * -EXDEV @with in another NVLink partition, -EADDRINUSE it holds one of
 * the domain's channels for another domain, -EHOSTUNREACH it is not
 * reachable or is leaving the group, -ERANGE a channel of the domain is
 * beyond its max_channels, -ENOSPC it holds the most domains a node may,
 * -ENOENT @member is not a member, -EEXIST @with is, -EINVAL @with is not
 * in the group or is @member, or @member is this node; the message says
 * which and what to do.  -ETIMEDOUT: no outcome in time, or (the message starts
 * "replaced member ...") committed but not READY in time, naming the
 * members that are not connected and why.  Since version IMEXCTL_4.
 */
int imexctl_member_replace(struct imexctl *ctx, const char *domain,
			   const char *member, const char *with,
			   int timeout_ms);

/*
 * Add node @name to this NVLink domain's group (a request, a Raft
 * membership change carried out by imexd), so domains may name it.  @addr
 * is "host[:port]" where the daemons reach it; NULL or "": the name.  The
 * node's imexd must be running: imexd dials it and refuses it if its
 * fabric identity (cluster UUID, partition) differs from this node's
 * (-EXDEV) or it does not answer in time.  -EALREADY if it is in the group.
 * Since version IMEXCTL_2.
 */
int imexctl_node_join(struct imexctl *ctx, const char *name,
		      const char *addr, int timeout_ms);

/*
 * Remove node @name from the group (a request).  Refused while a domain
 * names it (delete the domain, or evict the node from it, first).
 * Since version IMEXCTL_2.
 */
int imexctl_node_leave(struct imexctl *ctx, const char *name, int timeout_ms);

/*
 * Wait until domain @name is usable: with @want IMEXCTL_DOMAIN_READY until it
 * is READY; with IMEXCTL_DOMAIN_DEGRADED until it is READY or DEGRADED.  The
 * domain need not exist yet (it may be created from another node).  Event
 * driven: no polling.  timeout_ms < 0 waits without limit; 0 checks once.
 * On success *state (may be NULL) is the state reached.  -ETIMEDOUT with a
 * message that states what the domain was at the timeout and which members
 * were not connected.  -EINVAL for any other @want.
 */
int imexctl_domain_wait(struct imexctl *ctx, const char *name,
			enum imexctl_domain_state want, int timeout_ms,
			enum imexctl_domain_state *state);

/* ---- channels --------------------------------------------------------------- */

struct imexctl_channel {
	uint32_t id;
	char domain[IMEXCTL_NAME_MAX];
	uint8_t domain_uuid[IMEXCTL_UUID_LEN];
	uint32_t state;			/* enum imexctl_channel_state */
	uint32_t uid, gid;
	uint32_t mode;			/* permission bits of the device node */
	uint32_t open_count;		/* open file descriptions */
	uint32_t minor;			/* this grant's device minor (not the id) */
};

/*
 * Channels of every domain, or of @domain only (NULL: all).  *channels is
 * an array of *n entries (NULL when *n is 0), ordered by id; release it with
 * free().  -EAGAIN if the list kept changing while being read.
 */
int imexctl_channel_list(struct imexctl *ctx, const char *domain,
			 struct imexctl_channel **channels, size_t *n);

/* One channel by id.  -ENOENT if it is not granted to any domain. */
int imexctl_channel_get(struct imexctl *ctx, uint32_t id,
			struct imexctl_channel *channel);

struct imexctl_channel_change {
	bool set_owner;
	uint32_t uid, gid;
	bool set_mode;
	uint32_t mode;			/* permission bits, at most 0777 */
};

/*
 * Change the owner and/or mode of channel @id; its device node is
 * re-created, open file descriptors stay open.  If @domain is not NULL the
 * channel must belong to it (-ENOENT otherwise), which guards scripts
 * against acting on another domain's channel.  -EINVAL if @change sets
 * nothing.
 */
int imexctl_channel_set(struct imexctl *ctx, const char *domain, uint32_t id,
			const struct imexctl_channel_change *change);

/*
 * Grant channels to @domain (a request): @count new channels chosen by the
 * daemon, or exactly @ids (n_ids > 0, count ignored).  If @allocated is not
 * NULL, *allocated receives the ids granted by this request, as the daemon
 * reports them (*n_allocated entries, release with free()); changes to the
 * same domain running concurrently do not appear among them.  -EPROTO if
 * the daemon completes the request without listing the ids.
 */
int imexctl_channel_alloc(struct imexctl *ctx, const char *domain,
			  uint32_t count, const uint32_t *ids, size_t n_ids,
			  int timeout_ms, uint32_t **allocated,
			  size_t *n_allocated);

/* Revoke channels @ids from @domain on every member (a request). */
int imexctl_channel_free(struct imexctl *ctx, const char *domain,
			 const uint32_t *ids, size_t n_ids, int timeout_ms);

/* ---- CDI specs ---------------------------------------------------------------- */

#define IMEXCTL_CDI_VENDOR	"imex.dev"
#define IMEXCTL_CDI_CLASS	"channel"
#define IMEXCTL_CDI_DIR		"/var/run/cdi"
#define IMEXCTL_CDI_ALL		"all"

/*
 * Where and how specs are named.  Every field may be NULL (or the whole
 * struct, where a pointer to it is taken) for the default:
 * kind "imex.dev/channel", directory /var/run/cdi, a device "all" holding
 * every channel of the spec.  The spec of id ID lives in
 * DIR/VENDOR-CLASS_ID.json.
 */
struct imexctl_cdi_opts {
	const char *vendor;		/* CDI vendor, default "imex.dev" */
	const char *class_name;		/* CDI class, default "channel"
					 * (not "class": C++ keyword) */
	const char *dir;		/* default "/var/run/cdi" */
	const char *all_name;		/* name of the device with every
					 * channel; default "all", "" for none */
	bool no_overwrite;		/* generate: fail with -EEXIST rather
					 * than replace a spec of the same id
					 * (the default replaces it) */
};

/* What imexctl_cdi_name_check() checks a name as. */
enum imexctl_cdi_name {
	IMEXCTL_CDI_NAME_VENDOR,	/* letter first; [A-Za-z0-9_.-]; alnum last */
	IMEXCTL_CDI_NAME_CLASS,		/* same rule as the vendor */
	IMEXCTL_CDI_NAME_DEVICE,	/* alnum first and last; [A-Za-z0-9_.:-] */
	IMEXCTL_CDI_NAME_SPEC_ID,	/* a transient spec id: the device rule */
};

/*
 * Check @name against the CDI naming rule for @kind (no kernel access).
 * Names are at most 63 characters.  Returns 0, or -EINVAL with *why (may be
 * NULL; a static string) saying which rule is broken.
 */
int imexctl_cdi_name_check(enum imexctl_cdi_name kind, const char *name,
			   const char **why);

/* One channel as the pure spec builder sees it. */
struct imexctl_cdi_channel {
	uint32_t id;			/* channel id: the node's name */
	uint32_t uid, gid;
	uint32_t mode;			/* permission bits */
	uint32_t minor;			/* the grant's device minor */
};

/*
 * Build a CDI spec for @channels (n > 0) of char major @major without any
 * kernel access: one device "channel<N>" per channel, plus the "all" device
 * (see imexctl_cdi_opts), each with a deviceNode
 * /dev/imex-channels/channel<N> (type c, @major, the channel's minor (each
 * grant has its own: a node of an earlier grant opens nothing), fileMode,
 * uid, gid)
 * and the lowest cdiVersion the spec needs.  On success *json is a
 * NUL-terminated JSON text (compact, one line ending in a newline) to
 * release with free().  -EINVAL for an invalid
 * vendor, class or device name or a duplicate channel (the message says
 * which rule was broken).
 */
int imexctl_cdi_spec_build(struct imexctl *ctx,
			   const struct imexctl_cdi_opts *opts, uint32_t major,
			   const struct imexctl_cdi_channel *channels,
			   size_t n, char **json);

/*
 * Build the spec for channels @ids (n_ids of them; n_ids 0: every granted
 * channel) of @domain from the kernel's state: owner, mode and major come
 * from the module.  *json as for imexctl_cdi_spec_build().  -ENOENT if the
 * domain does not exist or a channel is not granted to it.
 */
int imexctl_cdi_spec(struct imexctl *ctx, const char *domain,
		     const uint32_t *ids, size_t n_ids,
		     const struct imexctl_cdi_opts *opts, char **json);

/*
 * Build the spec of imexctl_cdi_spec() and write it as the transient spec
 * @id (CDI device-name rules: [A-Za-z0-9], then [A-Za-z0-9_.:-], ending
 * alphanumeric; no '/').  The write is atomic: a temporary file in the same
 * directory, fsync, rename over the target (or RENAME_NOREPLACE with
 * opts->no_overwrite), fsync of the directory; mode 0644.  The directory is
 * created (0755) if missing.  If @path is not NULL, *path is the spec's
 * file name (release with free()).
 */
int imexctl_cdi_generate(struct imexctl *ctx, const char *domain,
			 const uint32_t *ids, size_t n_ids, const char *id,
			 const struct imexctl_cdi_opts *opts, char **path);

/*
 * Write @json as transient spec @id atomically as imexctl_cdi_generate()
 * does, without building anything (no kernel access).
 */
int imexctl_cdi_write(struct imexctl *ctx, const char *id, const char *json,
		      const struct imexctl_cdi_opts *opts, char **path);

/* Remove transient spec @id.  -ENOENT if there is none. */
int imexctl_cdi_remove(struct imexctl *ctx, const char *id,
		       const struct imexctl_cdi_opts *opts);

struct imexctl_cdi_entry {
	char *id;			/* the transient id */
	char *path;			/* full path of the spec file */
};

/*
 * The transient specs this library would have written in opts->dir for
 * opts->vendor/opts->class_name: files named VENDOR-CLASS_ID.json with a valid
 * ID, sorted by id.  A missing directory is an empty list.  *entries is an
 * array of *n entries (NULL when *n is 0): release it with
 * imexctl_cdi_list_free().
 */
int imexctl_cdi_list(struct imexctl *ctx, const struct imexctl_cdi_opts *opts,
		     struct imexctl_cdi_entry **entries, size_t *n);
void imexctl_cdi_list_free(struct imexctl_cdi_entry *entries, size_t n);

/* ---- events ------------------------------------------------------------------ */

/*
 * Following the module's "events" multicast group (anyone may listen): every
 * change on this node arrives as one event, in the order the kernel made
 * the changes.  Since version IMEXCTL_3.
 */
#define IMEXCTL_REASON_MAX	256	/* reasons and messages, with the NUL */

enum imexctl_event_kind {
	IMEXCTL_EVENT_OTHER,		/* a notification this library does not
					 * know: only cmd is set */
	IMEXCTL_EVENT_LOST,		/* the kernel dropped events for this
					 * listener (its socket buffer was full,
					 * ENOBUFS): how many is not known, so
					 * re-read whatever state matters */
	IMEXCTL_EVENT_NODE_SET,		/* the node's identity changed */
	IMEXCTL_EVENT_DOMAIN_NEW,
	IMEXCTL_EVENT_DOMAIN_DEL,
	IMEXCTL_EVENT_DOMAIN_STATUS,	/* its state or a member's changed */
	IMEXCTL_EVENT_CHANNEL_NEW,	/* granted */
	IMEXCTL_EVENT_CHANNEL_DEL,	/* revoked */
	IMEXCTL_EVENT_CHANNEL_SET,	/* owner or mode changed */
	IMEXCTL_EVENT_REQ_DONE,		/* a request finished */
	IMEXCTL_EVENT_MANAGER_ATTACH,	/* imexd attached */
	IMEXCTL_EVENT_MANAGER_DETACH,	/* imexd detached */
	IMEXCTL_EVENT_IMPORTS_REVOKED,	/* imports through a domain revoked */
};

/* A member whose state the event reports (DOMAIN_STATUS). */
struct imexctl_event_member {
	char name[IMEXCTL_NAME_MAX];
	uint32_t state;			/* enum imexctl_member_state */
	char reason[IMEXCTL_REASON_MAX];	/* "" if none was given */
	uint64_t since_ms;		/* in this state since, ms since the
					 * epoch (imexd's clock); 0: not given */
};

/*
 * One event.  Allocated and owned by the monitor, valid until the next call
 * on it: fields may be added at the end in later versions, so never copy
 * the struct by value or allocate one.  has_* says which groups of fields
 * the notification carried; the others are zero.
 */
struct imexctl_event {
	uint32_t kind;			/* enum imexctl_event_kind */
	uint32_t cmd;			/* the module's IMEX_CMD_*; 0 for LOST */

	bool has_domain;		/* domain name (domain events, channel
					 * events of a domain, REQ_DONE naming
					 * one, IMPORTS_REVOKED) */
	char domain[IMEXCTL_NAME_MAX];
	bool has_domain_uuid;
	uint8_t domain_uuid[IMEXCTL_UUID_LEN];
	bool has_state;			/* domain state and counts */
	uint32_t state;			/* enum imexctl_domain_state */
	char reason[IMEXCTL_REASON_MAX];	/* why not READY; "" if not given */
	uint32_t member_count;
	uint32_t channel_count;
	uint32_t generation;
	const struct imexctl_event_member *members;	/* changed members */
	size_t n_members;

	bool has_channel;
	uint32_t channel_id;
	uint32_t channel_state;		/* enum imexctl_channel_state */
	uint32_t uid, gid;
	uint32_t mode;

	bool has_request;
	uint64_t req_id;
	uint32_t req_cmd;		/* the IMEX_CMD_* of the request */
	uint32_t req_status;		/* positive errno, 0 for success */
	char req_message[IMEXCTL_REASON_MAX];	/* "" if none */

	bool has_manager;
	uint32_t manager_pid;

	bool has_node;			/* NODE_SET */
	char node_name[IMEXCTL_NAME_MAX];
	uint8_t node_uuid[IMEXCTL_UUID_LEN];

	bool has_revoke;		/* IMPORTS_REVOKED */
	uint8_t handle_node[IMEXCTL_UUID_LEN];	/* the exporting node's UUID */
	uint32_t revoke_reason;		/* see imexctl_revoke_reason_name() */
	uint32_t import_count;		/* imports revoked */
};

struct imexctl_monitor;

/*
 * Subscribe to the module's events.  Nothing needs privileges.  *mon is
 * released with imexctl_monitor_free().  -ENODEV if the module is not
 * loaded.  Events are queued by the kernel from this call on.
 */
int imexctl_monitor_open(struct imexctl *ctx, struct imexctl_monitor **mon);

/* The file descriptor to poll() for POLLIN; owned by the monitor. */
int imexctl_monitor_fd(const struct imexctl_monitor *mon);

/*
 * The next event, without blocking: returns 1 with *event set (owned by the
 * monitor, valid until the next call), 0 when none is waiting (poll the fd),
 * or a negative errno: -EPROTO for a notification that does not decode
 * (it is skipped; the message says which; the monitor stays usable), -EIO
 * if the socket failed.  Lost events are an event (IMEXCTL_EVENT_LOST), not
 * an error.
 */
int imexctl_monitor_next(struct imexctl_monitor *mon,
			 const struct imexctl_event **event);

/* Close the socket and free the monitor.  NULL is accepted. */
void imexctl_monitor_free(struct imexctl_monitor *mon);

/*
 * Names: "lost", "node-set", "domain-new", "domain-del", "domain-status",
 * "channel-new", "channel-del", "channel-set", "req-done",
 * "manager-attach", "manager-detach", "imports-revoked"; "other" for
 * anything else.  Revoke reasons: "unexported", "node-lost",
 * "node-restarted", "channel-gone", "daemon-lost"; "unknown".  Static.
 */
const char *imexctl_event_kind_name(unsigned int kind);
const char *imexctl_revoke_reason_name(unsigned int reason);

#ifdef __cplusplus
}
#endif

#endif /* IMEXCTL_H */
