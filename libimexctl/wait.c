// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Waiting for a domain to become usable: subscribe to events, ask for the
 * domain once, then follow DOMAIN_NEW / DOMAIN_SET_STATUS / DOMAIN_DEL.
 * The reply and the notifications can arrive in either order, so the
 * domain's (uuid, generation) decides which state is the newest.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>

#include "internal.h"

/* How long a zero timeout ("check once") waits for the kernel's answer. */
#define WAIT_ONCE_MS 5000

void imexctl_wait_on_msg(struct imexctl_session *s, struct nl_msg *msg, void *arg)
{
	struct imexctl_wait_state *w = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];
	uint8_t cmd = genlmsg_hdr(nlmsg_hdr(msg))->cmd;
	uint8_t uuid[IMEX_UUID_LEN] = { 0 };
	bool same;

	(void)s;
	if (imexctl_nl_parse(msg, tb) < 0 || !tb[IMEX_A_DOMAIN_NAME] ||
	    strcmp(nla_get_string(tb[IMEX_A_DOMAIN_NAME]), w->name))
		return;
	if (cmd == IMEX_CMD_DOMAIN_DEL) {
		w->exists = false;
		w->have_gen = false;
		return;
	}
	if (!tb[IMEX_A_DOMAIN_STATE])
		return;
	if (tb[IMEX_A_DOMAIN_UUID])
		memcpy(uuid, nla_data(tb[IMEX_A_DOMAIN_UUID]), IMEX_UUID_LEN);

	same = w->exists && !memcmp(uuid, w->uuid, IMEX_UUID_LEN);
	if (same && w->have_gen && tb[IMEX_A_GENERATION] &&
	    (int32_t)(nla_get_u32(tb[IMEX_A_GENERATION]) - w->gen) < 0)
		return;	/* older than what we already know */

	w->exists = true;
	w->state = nla_get_u32(tb[IMEX_A_DOMAIN_STATE]);
	memcpy(w->uuid, uuid, IMEX_UUID_LEN);
	w->have_gen = tb[IMEX_A_GENERATION] != NULL;
	if (w->have_gen)
		w->gen = nla_get_u32(tb[IMEX_A_GENERATION]);
}

static int fill_name(struct nl_msg *msg, const char *name)
{
	return nla_put_string(msg, IMEX_A_DOMAIN_NAME, name) < 0 ? -EMSGSIZE : 0;
}

static int send_get(struct imexctl *ctx, struct imexctl_session *s,
		    const char *name)
{
	struct nl_msg *msg;
	int r;

	msg = imexctl_nl_msg(ctx, IMEX_CMD_DOMAIN_GET, 0, 0);
	if (!msg)
		return imexctl_err(ctx, -ENOMEM, "out of memory");
	r = fill_name(msg, name);
	if (r == 0)
		r = imexctl_session_send(s, msg);
	nlmsg_free(msg);
	return r;
}

static bool satisfied(uint32_t state, enum imexctl_domain_state want)
{
	if (state == IMEX_DOMAIN_READY)
		return true;
	return want == IMEXCTL_DOMAIN_DEGRADED && state == IMEX_DOMAIN_DEGRADED;
}

/* Every member connected as this node sees them, @member among them. */
static bool members_ready(const struct imexctl_domain *d, const char *member)
{
	bool found = !member;
	size_t i;

	for (i = 0; i < d->n_members; i++) {
		const struct imexctl_member *m = &d->members[i];

		if (member && !strcmp(m->name, member))
			found = true;
		if (m->state != IMEX_MEMBER_SELF &&
		    m->state != IMEX_MEMBER_CONNECTED && i != d->member_self)
			return false;
	}
	return found;
}

/* Say what the domain is at the timeout, and who is missing (and why). */
static int timed_out(struct imexctl *ctx, const char *name,
		     enum imexctl_domain_state want, const char *member,
		     int timeout_ms)
{
	struct imexctl_domain *d = NULL;
	char missing[512] = "";
	size_t i, len = 0;
	const char *hint = "";
	int secs = (timeout_ms + 999) / 1000;

	if (imexctl_domain_get(ctx, name, &d) < 0)
		return imexctl_err(ctx, -ETIMEDOUT,
				   "domain %s does not exist on this node after %d s: create it with 'imexctl domain create' or check the name with 'imexctl domain list'",
				   name, secs);

	for (i = 0; i < d->n_members; i++) {
		const struct imexctl_member *m = &d->members[i];
		const char *why = imexctl_member_reason(d, i);

		if (m->state == IMEX_MEMBER_SELF || m->state == IMEX_MEMBER_CONNECTED ||
		    i == d->member_self)
			continue;
		len += (size_t)snprintf(missing + len, len < sizeof(missing) ? sizeof(missing) - len : 0,
					"%s%s (%s%s%s)", len ? ", " : "", m->name,
					imexctl_member_state_name(m->state),
					member && why ? ": " : "",
					member && why ? why : "");
		if (len >= sizeof(missing))
			break;
	}
	if (member && !missing[0] && d->state == IMEX_DOMAIN_READY) {
		imexctl_err(ctx, -ETIMEDOUT,
			    "domain %s does not list %s as a connected member after %d s: see 'imexctl domain show %s'",
			    name, member, secs, name);
		imexctl_domain_free(d);
		return -ETIMEDOUT;
	}
	if (d->state == IMEX_DOMAIN_DOWN)
		hint = ": imexd is not keeping it, start it with 'systemctl start imexd'";
	else if (missing[0])
		hint = ": not connected: ";

	imexctl_err(ctx, -ETIMEDOUT, "domain %s is %s after %d s (waited for %s)%s%s",
		    name, imexctl_domain_state_name(d->state), secs,
		    want == IMEXCTL_DOMAIN_READY ? "ready" : "ready or degraded",
		    hint, d->state == IMEX_DOMAIN_READY || d->state == IMEX_DOMAIN_DEGRADED ? missing : "");
	imexctl_domain_free(d);
	return -ETIMEDOUT;
}

/*
 * READY with @member listed and every member connected: a READY from
 * before this node's kernel took the new member list says nothing of
 * @member, so each new generation that says READY is checked in full.
 */
static bool check_members(struct imexctl *ctx, const char *name,
			  const char *member)
{
	struct imexctl_domain *d = NULL;
	bool ok;

	if (imexctl_domain_get(ctx, name, &d) < 0)
		return false;
	ok = d->state == IMEX_DOMAIN_READY && members_ready(d, member);
	imexctl_domain_free(d);
	return ok;
}

int imexctl_wait_ready(struct imexctl *ctx, const char *name,
		       enum imexctl_domain_state want, const char *member,
		       int timeout_ms, enum imexctl_domain_state *state)
{
	struct imexctl_wait_state w = { .name = name };
	struct imexctl_session s;
	bool once = timeout_ms == 0, resend = false, checked = false;
	uint32_t checked_gen = 0;
	int64_t deadline;
	int r;

	if (!imexctl_name_valid(name))
		return imexctl_err(ctx, -EINVAL, "invalid domain name '%s'",
				   name ? name : "");
	if (want != IMEXCTL_DOMAIN_READY && want != IMEXCTL_DOMAIN_DEGRADED)
		return imexctl_err(ctx, -EINVAL,
				   "domain %s: can wait for 'ready' or 'degraded' only", name);

	r = imexctl_session_open(ctx, &s, imexctl_wait_on_msg, &w);
	if (r < 0)
		return r;
	deadline = imexctl_deadline(once ? WAIT_ONCE_MS : timeout_ms);
	r = send_get(ctx, &s, name);

	while (r == 0) {
		if (w.exists && satisfied(w.state, want) && member &&
		    (!checked || !w.have_gen || w.gen != checked_gen)) {
			checked = true;
			checked_gen = w.gen;
			if (check_members(ctx, name, member)) {
				if (state)
					*state = (enum imexctl_domain_state)w.state;
				break;
			}
		}
		if (w.exists && satisfied(w.state, want) && !member) {
			if (state)
				*state = (enum imexctl_domain_state)w.state;
			break;
		}
		if (s.acked && s.err && s.err != -ENOENT) {
			r = imexctl_err_kernel(ctx, s.err, s.extack, name);
			break;
		}
		if (once && s.acked) {
			r = -ETIMEDOUT;
			break;
		}
		/* Lost notifications: ask again once the last ask is answered. */
		if (s.overrun) {
			s.overrun = false;
			resend = true;
		}
		if (resend && s.acked) {
			resend = false;
			r = send_get(ctx, &s, name);
			continue;
		}
		r = imexctl_session_read(&s, deadline);
		if (r < 0 && r != -ETIMEDOUT)
			r = imexctl_err(ctx, r, "domain %s: reading from the imex module failed: %s",
					name, strerror(-r));
	}
	imexctl_session_close(&s);
	if (r == -ETIMEDOUT)
		return timed_out(ctx, name, want, member, once ? 0 : timeout_ms);
	return r;
}

IMEXCTL_API int imexctl_domain_wait(struct imexctl *ctx, const char *name,
				    enum imexctl_domain_state want,
				    int timeout_ms,
				    enum imexctl_domain_state *state)
{
	imexctl_err_clear(ctx);
	return imexctl_wait_ready(ctx, name, want, NULL, timeout_ms, state);
}
