// SPDX-License-Identifier: GPL-2.0
/*
 * The manager: the one netlink socket (imexd's) allowed to answer requests
 * and set domains (invariant 7).  Its attachment ends with the socket; then
 * every domain is DOWN until a manager keeps it again.  Also the reaper,
 * which expires requests nobody finished.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/sched.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include "imex.h"

/*
 * The manager is its socket, not its port id: netlink_release() frees the
 * port id before it sends NETLINK_URELEASE, so another socket can bind the
 * same id and attach in between, and would be taken for the old manager
 * (then detached by the old one's notification).  The notification carries
 * only the port id (6.1 and 6.12 alike), and genl's per-socket private data
 * (sock_priv) arrived in 6.10, so: hold a reference on the manager's sock
 * while it is attached, so that its address names no other socket
 * meanwhile; compare each request's sending socket with it; and take
 * SOCK_DEAD, which netlink_release() sets (sock_orphan) just after it frees
 * the port id and before it notifies, as the end of the attachment.  (A new
 * socket attaching between those two steps is refused with EALREADY, as
 * while the old manager lived; it can retry.)  All under imex_lock.
 */
static struct sock *imex_manager_sk;	/* NULL: none attached */
static u32 imex_manager_portid;		/* its port id, to filter notifications */
static u32 imex_manager_tgid;

static void imex_reaper_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(imex_reaper, imex_reaper_fn);
static bool imex_reaper_stopped;

bool imex_manager_attached(void)
{
	return imex_manager_sk;
}

u32 imex_manager_pid(void)
{
	return imex_manager_sk ? imex_manager_tgid : 0;
}

bool imex_is_manager(const struct genl_info *info,
		     struct netlink_ext_ack *extack)
{
	if (imex_manager_sk && imex_sender_sk(info) == imex_manager_sk)
		return true;
	if (imex_manager_sk)
		imex_extack_fmt(extack, "only the attached manager (imexd, pid %u) may do this",
				imex_manager_tgid);
	else
		NL_SET_ERR_MSG(extack, "only the attached manager may do this: attach first (is imexd running?)");
	return false;
}

/* Arm the reaper for @when unless it is already due sooner. */
void imex_reaper_kick(unsigned long when)
{
	unsigned long now = jiffies;

	if (imex_reaper_stopped)
		return;
	if (!delayed_work_pending(&imex_reaper) ||
	    time_before(when, imex_reaper.timer.expires))
		mod_delayed_work(system_wq, &imex_reaper,
				 time_after(when, now) ? when - now : 0);
}

static void imex_reaper_fn(struct work_struct *work)
{
	unsigned long next;

	mutex_lock(&imex_lock);
	next = imex_requests_expire(jiffies);
	if (next)
		imex_reaper_kick(next);
	mutex_unlock(&imex_lock);
}

/*
 * Under imex_lock.  @why fails its requests; @down (a string literal) says
 * why its domains are DOWN.
 */
static void imex_manager_gone(const char *why, const char *down)
{
	struct imex_domain *d;
	u32 pid = imex_manager_tgid;

	sock_put(imex_manager_sk);
	imex_manager_sk = NULL;
	imex_manager_portid = 0;
	imex_manager_tgid = 0;
	imex_request_fail_all(ENOTCONN, why);
	imex_imports_manager_gone();
	list_for_each_entry(d, &imex_domains, list)
		imex_domain_set_down(d, down);
	imex_bump();
	imex_notify_manager(IMEX_CMD_MANAGER_DETACH, pid);
}

int imex_nl_manager_attach(struct sk_buff *skb, struct genl_info *info)
{
	struct sock *sk = NETLINK_CB(skb).sk;
	int err = 0;

	mutex_lock(&imex_lock);
	/* Released, its notification not yet in: it is gone already. */
	if (imex_manager_sk && imex_manager_sk != sk &&
	    sock_flag(imex_manager_sk, SOCK_DEAD))
		imex_manager_gone("imexd exited before finishing the request",
				  "imexd exited: no manager on this node");
	if (imex_manager_sk == sk) {
		goto out;
	} else if (imex_manager_sk) {
		imex_extack_fmt(info->extack,
				"another manager (pid %u) is attached: is a second imexd running?",
				imex_manager_tgid);
		err = -EALREADY;
		goto out;
	}
	sock_hold(sk);
	imex_manager_sk = sk;
	imex_manager_portid = NETLINK_CB(skb).portid;
	imex_manager_tgid = task_tgid_nr(current);
	imex_bump();
	imex_notify_manager(IMEX_CMD_MANAGER_ATTACH, imex_manager_tgid);
out:
	mutex_unlock(&imex_lock);
	return err;
}

int imex_nl_manager_detach(struct sk_buff *skb, struct genl_info *info)
{
	imex_manager_gone("imexd detached before finishing the request",
			  "imexd detached: no manager on this node");
	return 0;
}

static int imex_netlink_notify(struct notifier_block *nb, unsigned long event,
			       void *ptr)
{
	struct netlink_notify *n = ptr;

	if (event != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !net_eq(n->net, &init_net))
		return NOTIFY_DONE;
	/*
	 * Another socket may hold this port id by now, and be the manager:
	 * only the release of the manager's own socket ends the attachment.
	 */
	mutex_lock(&imex_lock);
	if (imex_manager_sk && n->portid == imex_manager_portid &&
	    sock_flag(imex_manager_sk, SOCK_DEAD))
		imex_manager_gone("imexd exited before finishing the request",
				  "imexd exited: no manager on this node");
	mutex_unlock(&imex_lock);
	return NOTIFY_DONE;
}

static struct notifier_block imex_netlink_nb = {
	.notifier_call = imex_netlink_notify,
};

int imex_manager_init(void)
{
	return netlink_register_notifier(&imex_netlink_nb);
}

/* After the family is gone: nothing can attach or queue any more. */
void imex_manager_exit(void)
{
	netlink_unregister_notifier(&imex_netlink_nb);
	mutex_lock(&imex_lock);
	imex_reaper_stopped = true;
	/* Still attached: drop the reference on its socket, nothing else. */
	if (imex_manager_sk)
		sock_put(imex_manager_sk);
	imex_manager_sk = NULL;
	mutex_unlock(&imex_lock);
	cancel_delayed_work_sync(&imex_reaper);
}
