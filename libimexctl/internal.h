/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Declarations shared by the library's files; nothing here is exported. */
#ifndef IMEXCTL_INTERNAL_H
#define IMEXCTL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/imex.h>		/* the project's uAPI copy: -I../include/uapi */
#include <netlink/msg.h>

#include "imexctl.h"

#define IMEXCTL_API __attribute__((visibility("default")))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define IMEXCTL_ERRMSG_MAX	1024
#define IMEXCTL_DEV_DIR		"/dev/" IMEX_DEVDIR
#define IMEXCTL_PROC_DEVICES	"/proc/devices"
#define IMEXCTL_SYSFS_MODULE	"/sys/module/imex"

struct imexctl {
	struct nl_sock *sk;		/* doit/dump socket, NULL until used */
	int family;			/* genl id of "imex", 0 until resolved */
	bool extack;			/* errmsg is the kernel's own text */
	char errmsg[IMEXCTL_ERRMSG_MAX];
};

/* error.c */
int imexctl_err(struct imexctl *ctx, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void imexctl_err_clear(struct imexctl *ctx);
int imexctl_err_kernel(struct imexctl *ctx, int err, const char *extack,
		       const char *what);

/* netlink.c: the context socket, for doit and dump exchanges. */
typedef int (*imexctl_parse_fn)(struct nl_msg *msg, void *arg);

int imexctl_nl_connect(struct imexctl *ctx);
int imexctl_nl_open(struct imexctl *ctx, struct nl_sock **skp, int *family,
		    int *events_grp);
void imexctl_nl_enable_ext_ack(struct nl_sock *sk);
struct nl_msg *imexctl_nl_msg(struct imexctl *ctx, uint8_t cmd, int flags,
			      size_t size);
int imexctl_nl_exchange(struct imexctl *ctx, struct nl_msg *msg,
			imexctl_parse_fn parse, void *arg, const char *what);
int imexctl_nl_dump(struct imexctl *ctx, uint8_t cmd,
		    int (*fill)(struct nl_msg *msg, const void *farg),
		    const void *farg, imexctl_parse_fn parse,
		    void (*reset)(void *arg), void *arg, const char *what);
int imexctl_nl_put_array_u32(struct nl_msg *msg, int attr, const uint32_t *ids,
			     size_t n);
int imexctl_nl_parse(struct nl_msg *msg, struct nlattr **tb);

/* request.c: a request answered by imexd through IMEX_CMD_REQ_DONE. */
typedef int (*imexctl_fill_fn)(struct nl_msg *msg, const void *arg);

int imexctl_request(struct imexctl *ctx, uint8_t cmd, imexctl_fill_fn fill,
		    const void *arg, size_t size, const char *what,
		    int timeout_ms);
/* As imexctl_request(), and on success *ids (release with free()) and *n_ids
 * are the channel ids of its own REQ_DONE; -EPROTO if that lists none. */
int imexctl_request_ids(struct imexctl *ctx, uint8_t cmd, imexctl_fill_fn fill,
			const void *arg, size_t size, const char *what,
			int timeout_ms, uint32_t **ids, size_t *n_ids);

/* session.c: a socket subscribed to the "events" group. */
struct imexctl_session;
typedef void (*imexctl_session_fn)(struct imexctl_session *s,
				   struct nl_msg *msg, void *arg);

struct imexctl_session {
	struct imexctl *ctx;
	struct nl_sock *sk;
	struct nl_cb *cb;
	int family;
	uint32_t seq;			/* of the command in flight */
	bool acked;			/* ACK or error received for seq */
	int err;			/* negative errno from that error */
	char extack[IMEX_MESSAGE_MAX];
	bool overrun;			/* notifications were lost */
	imexctl_session_fn on_msg;
	void *arg;
};

/* request.c: what a request has seen; fed by imexctl_req_on_msg(). */
struct imexctl_req_done {
	uint64_t id;
	uint32_t status;
	char message[IMEX_MESSAGE_MAX];
	/* IMEX_A_CHANNEL_IDS, kept only when the state wants ids: owned,
	 * NULL when empty; ids_err is -EPROTO if absent or malformed,
	 * -ENOMEM if it could not be copied. */
	uint32_t *ids;
	size_t n_ids;
	int ids_err;
};

struct imexctl_req_state {
	bool want_ids;			/* keep IMEX_A_CHANNEL_IDS */
	bool have_id;
	uint64_t id;
	bool finished;
	struct imexctl_req_done done;
	/* DONEs that arrived before our id: at most IMEX_REQS_MAX can be
	 * pending in the kernel, so a ring of that size is enough.  Their
	 * ids are allocated per entry and freed when overwritten. */
	struct imexctl_req_done early[IMEX_REQS_MAX];
	size_t n_early;
};

void imexctl_req_on_msg(struct imexctl_session *s, struct nl_msg *msg, void *arg);
/* Free @st and the ids it holds. */
void imexctl_req_state_free(struct imexctl_req_state *st);

/* wait.c: the newest known state of one domain; fed by imexctl_wait_on_msg(). */
struct imexctl_wait_state {
	const char *name;
	bool exists;
	bool have_gen;
	uint32_t state;
	uint32_t gen;
	uint8_t uuid[IMEX_UUID_LEN];
};

void imexctl_wait_on_msg(struct imexctl_session *s, struct nl_msg *msg, void *arg);

/*
 * imexctl_domain_wait(); with @member (want READY only) also until the
 * domain lists @member and every member is connected as this node sees
 * them, and the timeout's message says why each missing one is not.
 */
int imexctl_wait_ready(struct imexctl *ctx, const char *name,
		       enum imexctl_domain_state want, const char *member,
		       int timeout_ms, enum imexctl_domain_state *state);

int imexctl_session_open(struct imexctl *ctx, struct imexctl_session *s,
			 imexctl_session_fn on_msg, void *arg);
int imexctl_session_send(struct imexctl_session *s, struct nl_msg *msg);
int imexctl_session_read(struct imexctl_session *s, int64_t deadline);
void imexctl_session_close(struct imexctl_session *s);
int64_t imexctl_now_ms(void);
int64_t imexctl_deadline(int timeout_ms);

/* domain.c */
int imexctl_domain_parse(struct nl_msg *msg, struct imexctl_domain *d,
			 bool full);
void imexctl_domain_clear(struct imexctl_domain *d);

/* channel.c */
int imexctl_channel_parse(struct nl_msg *msg, struct imexctl_channel *c);

/* node.c */
int imexctl_node_parse(struct nl_msg *msg, struct imexctl_node *node);

/* event.c: @nlh's length is checked against its buffer by the caller. */
int imexctl_event_decode(struct imexctl *ctx, const struct nlmsghdr *nlh,
			 struct imexctl_event *ev,
			 struct imexctl_event_member *members, size_t max);

/* monitor.c: a monitor reading @fd (closed by imexctl_monitor_free()) for
 * messages of @family; for tests, which feed it through a socketpair. */
int imexctl_monitor_open_fd(struct imexctl *ctx, int fd, int family,
			    struct imexctl_monitor **mon);

/* sysfs.c: reading /proc and /sys, path given so tests can point elsewhere. */
int imexctl_proc_devices_major(const char *path, const char *name,
			       uint32_t *major);
int imexctl_read_line(const char *path, char *buf, size_t size);
int imexctl_read_u32(const char *path, uint32_t *val);
int imexctl_parse_u32(const char *s, uint32_t *val);

/* cdi_name.c: CDI naming rules; on failure *why says which rule. */
int imexctl_cdi_check_vendor(const char *name, const char **why);
int imexctl_cdi_check_class(const char *name, const char **why);
int imexctl_cdi_check_device(const char *name, const char **why);
int imexctl_cdi_check_id(const char *id, const char **why);
int imexctl_cdi_opts_check(struct imexctl *ctx,
			   const struct imexctl_cdi_opts *opts);
const char *imexctl_cdi_vendor(const struct imexctl_cdi_opts *opts);
const char *imexctl_cdi_class(const struct imexctl_cdi_opts *opts);
const char *imexctl_cdi_dir(const struct imexctl_cdi_opts *opts);
const char *imexctl_cdi_all_name(const struct imexctl_cdi_opts *opts);

/* cdi_version.c: lowest cdiVersion the features of a spec need. */
struct json_object;
const char *imexctl_cdi_required_version(struct json_object *spec);

/* cdi_file.c */
int imexctl_cdi_spec_path(struct imexctl *ctx,
			  const struct imexctl_cdi_opts *opts, const char *id,
			  char **path);

#endif /* IMEXCTL_INTERNAL_H */
