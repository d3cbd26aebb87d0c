// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * imex.so: a SPANK plugin that gives every Slurm job its own IMEX domain
 * "slurm-job<ID>" over exactly the job's nodes, with its own channel(s),
 * and shows each step only the job's channels.  See Documentation/slurm.md.
 *
 *   job_prolog (slurmd, root, every node of the job; PrologFlags=Alloc so
 *               it runs at allocation and before any step): the job's first
 *               node creates the domain (the daemons create it on every
 *               member); every node then waits on the event until it is
 *               READY here and writes the job's CDI spec.
 *   init_post_opt (slurmstepd, root, every step on every node, before the
 *               tasks fork): a private mount namespace whose
 *               /dev/imex-channels is a tmpfs holding only the job's
 *               channel nodes.  Tasks inherit it.
 *   job_epilog (slurmd, root, every node): CDI spec removed; the job's
 *               first node (or, if it is gone, the first connected one)
 *               evicts lost members and deletes the domain, which revokes
 *               the channels everywhere.
 *
 * plugstack.conf arguments: channels=N (default per job, 1), max_channels=N
 * (the most a job may ask for, 16), timeout=SECONDS (create and READY wait,
 * 120).  Members are the job's Slurm node names, which must be imexd's
 * NODE_NAMEs and in its NODES_FILE: addresses come from that file.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slurm/spank.h>

#include <imexctl.h>

#include "hostlist.h"

SPANK_PLUGIN(imex, 1);

#define CHANNEL_DIR	"/dev/imex-channels"
#define MAX_CHANNELS_CAP 4096	/* IMEXCTL_CHANNELS_PER_REQUEST */

static unsigned int default_channels = 1;
static unsigned int max_channels = 16;
static unsigned int timeout_s = 120;
/* The user's --imex-channels, where the option callback ran (remote and
 * local contexts); -1 when not given. */
static long opt_channels = -1;

static int parse_uint(const char *s, unsigned long max, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

static int opt_cb(int val, const char *optarg, int remote)
{
	unsigned int n;

	(void)val;
	(void)remote;
	if (parse_uint(optarg, max_channels, &n)) {
		slurm_error("imex: --imex-channels=%s: give a number from 0 to %u",
			    optarg ? optarg : "", max_channels);
		return -1;
	}
	opt_channels = n;
	return 0;
}

static struct spank_option channels_opt = {
	.name = "imex-channels",
	.arginfo = "N",
	.usage = "IMEX channels for this job on every node (0: no IMEX "
		 "domain; default set by the site, usually 1)",
	.has_arg = 1,
	.val = 0,
	.cb = opt_cb,
};

static int parse_args(int ac, char **av)
{
	int i;

	for (i = 0; i < ac; i++) {
		const char *a = av[i];
		int bad;

		if (!strncmp(a, "channels=", 9))
			bad = parse_uint(a + 9, MAX_CHANNELS_CAP, &default_channels);
		else if (!strncmp(a, "max_channels=", 13))
			bad = parse_uint(a + 13, MAX_CHANNELS_CAP, &max_channels);
		else if (!strncmp(a, "timeout=", 8))
			bad = parse_uint(a + 8, 3600, &timeout_s) || !timeout_s;
		else
			bad = 1;
		if (bad) {
			slurm_error("imex: plugstack.conf: bad argument '%s' "
				    "(channels=N max_channels=N timeout=SECONDS)", a);
			return -1;
		}
	}
	if (default_channels > max_channels) {
		slurm_error("imex: plugstack.conf: channels=%u is above max_channels=%u",
			    default_channels, max_channels);
		return -1;
	}
	return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	if (parse_args(ac, av))
		return -1;
	/* Options must be registered in every context that parses them:
	 * sbatch/salloc/srun and slurmstepd.  Elsewhere the call is refused
	 * harmlessly. */
	if (spank_context() != S_CTX_SLURMD)
		spank_option_register(sp, &channels_opt);
	return 0;
}

static void domain_name(char *buf, size_t len, uint32_t job_id)
{
	snprintf(buf, len, "slurm-job%" PRIu32, job_id);
}

/* The channels this job asked for, in job_prolog (options come through the
 * job's control environment there, not through the callback).  On a bad
 * value, *bad is the user's text. */
static int job_channels(spank_t sp, unsigned int *n, const char **bad)
{
	char *arg = NULL;

	*n = default_channels;
	if (spank_option_getopt(sp, &channels_opt, &arg) != ESPANK_SUCCESS || !arg)
		return 0;
	if (parse_uint(arg, max_channels, n)) {
		*bad = arg;
		return -1;
	}
	return 0;
}

/*
 * Tell the user why the job could not start: slurmd only records
 * "Prolog error", so the reason goes into the job's Comment, which
 * `scontrol show job` and `sacct -o Comment` print.  Best effort.
 */
static void record_reason(uint32_t job_id, const char *reason)
{
	char id[32], comment[512];
	char *argv[] = { "scontrol", "update", id, comment, NULL };
	extern char **environ;
	pid_t pid;
	int st;

	snprintf(id, sizeof(id), "JobId=%" PRIu32, job_id);
	snprintf(comment, sizeof(comment), "Comment=imex: %s", reason);
	if (posix_spawnp(&pid, "scontrol", NULL, NULL, argv, environ))
		return;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

__attribute__((format(printf, 2, 3)))
static int prolog_fail(uint32_t job_id, const char *fmt, ...)
{
	char reason[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	slurm_error("imex: job %" PRIu32 ": %s", job_id, reason);
	record_reason(job_id, reason);
	return -1;
}

/* The job's nodes, in the prolog's and epilog's environment: 22.05's
 * slurmd sets only SLURM_NODELIST there; later ones both names. */
static const char *job_nodelist(void)
{
	const char *list = getenv("SLURM_JOB_NODELIST");

	return list ? list : getenv("SLURM_NODELIST");
}

/* The node's own Slurm name: imex member names are the Slurm node names. */
static const char *self_name(struct imexctl *ctx, char *buf, size_t len)
{
	const char *env = getenv("SLURMD_NODENAME");
	struct imexctl_node node;

	if (env && *env)
		return env;
	if (imexctl_node_get(ctx, &node))
		return NULL;
	snprintf(buf, len, "%s", node.name);
	return buf;
}

int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
	char name[IMEXCTL_NAME_MAX], selfbuf[IMEXCTL_NAME_MAX];
	struct imexctl_member_spec *members = NULL;
	struct imexctl_domain_spec spec = { 0 };
	char **hosts = NULL;
	const char *nodelist, *self, *bad = NULL;
	struct imexctl *ctx = NULL;
	unsigned int channels;
	size_t n = 0, i;
	uint32_t job_id;
	uid_t uid;
	gid_t gid;
	int rc = -1, err;
	bool created = false;

	(void)ac;
	(void)av;
	if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS) {
		slurm_error("imex: job_prolog: no job id, uid or gid from Slurm");
		return -1;
	}
	if (job_channels(sp, &channels, &bad))
		return prolog_fail(job_id, "--imex-channels=%s: give a number from 0 to %u",
				   bad, max_channels);
	if (!channels)
		return 0;	/* the job asked for no IMEX domain */
	domain_name(name, sizeof(name), job_id);

	nodelist = job_nodelist();
	if (!nodelist)
		return prolog_fail(job_id, "SLURM_NODELIST is not set in the prolog environment");
	err = hostlist_expand(nodelist, IMEXCTL_MEMBERS_MAX, &hosts, &n);
	if (err)
		return prolog_fail(job_id, "node list %s: %s", nodelist,
				   err == -E2BIG ? "more nodes than an IMEX domain allows"
						 : "cannot parse it");
	if (imexctl_new(&ctx)) {
		prolog_fail(job_id, "out of memory");
		goto out;
	}
	self = self_name(ctx, selfbuf, sizeof(selfbuf));
	if (!self) {
		prolog_fail(job_id, "this node's name: %s", imexctl_errmsg(ctx));
		goto out;
	}

	/* The first node of the job creates the domain on all of them; the
	 * others wait for it on the event (no polling, no sleep). */
	if (!strcmp(hosts[0], self)) {
		members = calloc(n, sizeof(*members));
		if (!members) {
			prolog_fail(job_id, "out of memory");
			goto out;
		}
		for (i = 0; i < n; i++)
			members[i].name = hosts[i];	/* addresses: NODES_FILE */
		spec.name = name;
		spec.members = members;
		spec.n_members = n;
		spec.channel_count = channels;
		spec.set_owner = true;
		spec.uid = uid;
		spec.gid = gid;
		spec.set_mode = true;
		spec.mode = 0600;
		err = imexctl_domain_create(ctx, &spec, (int)timeout_s * 1000);
		/* A prolog run again (slurmd restarted, job requeued on the
		 * same nodes) finds its domain: keep it. */
		if (err && err != -EEXIST) {
			/* "creating domain NAME: why" */
			prolog_fail(job_id, "%s", imexctl_errmsg(ctx));
			goto out;
		}
		created = !err;
	}
	err = imexctl_domain_wait(ctx, name, IMEXCTL_DOMAIN_READY,
				  (int)timeout_s * 1000, NULL);
	if (err) {
		char why[256];
		struct imexctl_domain *d = NULL;

		snprintf(why, sizeof(why), "%s", imexctl_errmsg(ctx));
		/* Never created: the first node's prolog failed and put its
		 * reason in the job's Comment; keep it there. */
		if (strcmp(hosts[0], self) &&
		    imexctl_domain_get(ctx, name, &d) == -ENOENT)
			slurm_error("imex: job %" PRIu32 ": waiting for IMEX domain %s: %s",
				    job_id, name, why);
		else
			prolog_fail(job_id, "waiting for IMEX domain %s: %s", name, why);
		imexctl_domain_free(d);
		/* Made, but never READY (a member's imexd is down): the
		 * domain is committed and would stay until an epilog that
		 * Slurm may not run; the job fails here, so it goes now. */
		if (created)
			err = imexctl_domain_delete(ctx, name,
						    (int)timeout_s * 1000);
		if (created && err && err != -ENOENT)
			slurm_error("imex: job %" PRIu32 ": deleting IMEX domain %s after the failed prolog: %s",
				    job_id, name, imexctl_errmsg(ctx));
		goto out;
	}
	err = imexctl_cdi_generate(ctx, name, NULL, 0, name, NULL, NULL);
	if (err) {
		prolog_fail(job_id, "CDI spec for %s: %s", name, imexctl_errmsg(ctx));
		goto out;
	}
	slurm_info("imex: job %" PRIu32 ": domain %s READY with %u channel(s)",
		   job_id, name, channels);
	rc = 0;
out:
	free(members);
	hostlist_free(hosts, n);
	imexctl_free(ctx);
	return rc;
}

/* A member this node has lost: not merely reconnecting (RECOVERING) or
 * catching up with a change, which a delete waits for. */
static bool member_gone(const struct imexctl_member *mb)
{
	return mb->state == IMEXCTL_MEMBER_DISCONNECTED ||
	       mb->state == IMEXCTL_MEMBER_NEVER_CONNECTED;
}

/*
 * Whether this node deletes the job's domain: the first member, in job
 * node order, that is self or not lost seen from here does it, so one
 * delete runs normally (the job's first node) and the survivors agree on a
 * stand-in when that node is gone.  Without a node list, every node tries.
 */
static bool deleter(const struct imexctl_domain *d, const char *self)
{
	const char *list = job_nodelist();
	char **hosts;
	size_t n, i, m;
	bool me = true;

	if (!self || !list || hostlist_expand(list, IMEXCTL_MEMBERS_MAX, &hosts, &n))
		return true;
	for (i = 0; i < n; i++) {
		if (!strcmp(hosts[i], self))
			break;
		for (m = 0; m < d->n_members; m++)
			if (!strcmp(d->members[m].name, hosts[i]))
				break;
		if (m < d->n_members && !member_gone(&d->members[m])) {
			me = false;
			break;
		}
	}
	hostlist_free(hosts, n);
	return me;
}

/*
 * Every node removes its CDI spec; one node deletes the domain on every
 * member (see deleter()), which revokes the channels and removes their
 * device nodes everywhere; a member that was down drops it when it is
 * back.  Nothing of the job may stay, so failures are errors (Slurm drains
 * the node: the site sees it).
 */
int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	char name[IMEXCTL_NAME_MAX], selfbuf[IMEXCTL_NAME_MAX];
	struct imexctl_domain *d = NULL;
	struct imexctl *ctx;
	uint32_t job_id;
	int rc = 0, err;
	size_t m, evicted;

	(void)ac;
	(void)av;
	if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) {
		slurm_error("imex: job_epilog: no job id from Slurm");
		return -1;
	}
	domain_name(name, sizeof(name), job_id);
	if (imexctl_new(&ctx))
		return -1;
	err = imexctl_cdi_remove(ctx, name, NULL);
	if (err && err != -ENOENT) {
		slurm_error("imex: job %" PRIu32 ": removing CDI spec: %s", job_id,
			    imexctl_errmsg(ctx));
		rc = -1;
	}
	err = imexctl_domain_get(ctx, name, &d);
	if (err == -ENOENT)
		goto out;	/* none asked for, or already deleted */
	if (err) {
		slurm_error("imex: job %" PRIu32 ": domain %s: %s", job_id, name,
			    imexctl_errmsg(ctx));
		rc = -1;
		goto out;
	}
	if (!deleter(d, self_name(ctx, selfbuf, sizeof(selfbuf))))
		goto out;
	/* The delete goes through the Raft log: a majority of the voters
	 * commits it and each member's imexd removes the domain from its
	 * kernel, a lost one when it is back.  Evicting the members that
	 * are gone (a node Slurm declared down) first, and the wait for
	 * READY after it, are kept from the two-phase protocol, where a
	 * delete needed every member. */
	for (m = 0, evicted = 0; m < d->n_members; m++) {
		const struct imexctl_member *mb = &d->members[m];

		if (!member_gone(mb))
			continue;
		err = imexctl_member_evict(ctx, name, mb->name, (int)timeout_s * 1000);
		if (err && err != -ENOENT) {
			slurm_error("imex: job %" PRIu32 ": evicting %s from %s: %s",
				    job_id, mb->name, name, imexctl_errmsg(ctx));
			continue;
		}
		slurm_info("imex: job %" PRIu32 ": evicted lost node %s from %s",
			   job_id, mb->name, name);
		evicted++;
	}
	if (evicted)
		imexctl_domain_wait(ctx, name, IMEXCTL_DOMAIN_READY,
				    (int)timeout_s * 1000, NULL);
	err = imexctl_domain_delete(ctx, name, (int)timeout_s * 1000);
	if (err && err != -ENOENT &&
	    !imexctl_domain_wait(ctx, name, IMEXCTL_DOMAIN_READY, (int)timeout_s * 1000, NULL))
		/* Failed (e.g. no leader reachable for a while): once more,
		 * once the domain is READY again. */
		err = imexctl_domain_delete(ctx, name, (int)timeout_s * 1000);
	if (err && err != -ENOENT) {
		slurm_error("imex: job %" PRIu32 ": deleting domain %s: %s", job_id,
			    name, imexctl_errmsg(ctx));
		rc = -1;
	}
out:
	imexctl_domain_free(d);
	imexctl_free(ctx);
	return rc;
}

/*
 * Give this step (and so its tasks) a private view of CHANNEL_DIR: a
 * mount namespace whose mounts do not propagate back to the host, and a
 * tmpfs there holding only the job's channel nodes.
 */
static int step_namespace(uint32_t job_id)
{
	char name[IMEXCTL_NAME_MAX], path[64];
	struct imexctl_channel *ch = NULL;
	struct imexctl_node node;
	struct imexctl *ctx = NULL;
	size_t n = 0, i;
	int rc = -1, err;

	domain_name(name, sizeof(name), job_id);
	if (imexctl_new(&ctx))
		return -1;
	err = imexctl_node_get(ctx, &node);
	if (!err)
		err = imexctl_channel_list(ctx, name, &ch, &n);
	/* No domain: the job asked for none (the prolog fails otherwise). */
	if (err && err != -ENOENT) {
		slurm_error("imex: job %" PRIu32 ": channels of %s: %s", job_id,
			    name, imexctl_errmsg(ctx));
		goto out;
	}
	if (unshare(CLONE_NEWNS)) {
		slurm_error("imex: job %" PRIu32 ": unshare(CLONE_NEWNS): %m", job_id);
		goto out;
	}
	if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL)) {
		slurm_error("imex: job %" PRIu32 ": making / a slave mount: %m", job_id);
		goto out;
	}
	if (mkdir(CHANNEL_DIR, 0755) && errno != EEXIST) {
		slurm_error("imex: job %" PRIu32 ": mkdir %s: %m", job_id, CHANNEL_DIR);
		goto out;
	}
	if (mount("imex-channels", CHANNEL_DIR, "tmpfs", MS_NOSUID | MS_NOEXEC,
		  "mode=0755,size=64k")) {
		slurm_error("imex: job %" PRIu32 ": tmpfs on %s: %m", job_id, CHANNEL_DIR);
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (ch[i].state != IMEXCTL_CHANNEL_GRANTED)
			continue;	/* reserved by a change: no device yet */
		snprintf(path, sizeof(path), CHANNEL_DIR "/channel%" PRIu32, ch[i].id);
		/* mknod applies the umask: set the mode explicitly after. */
		if (mknod(path, S_IFCHR | 0600, makedev(node.major, ch[i].minor)) ||
		    chown(path, ch[i].uid, ch[i].gid) ||
		    chmod(path, ch[i].mode & 0777)) {
			slurm_error("imex: job %" PRIu32 ": %s: %m", job_id, path);
			goto out;
		}
	}
	rc = 0;
out:
	free(ch);
	imexctl_free(ctx);
	return rc;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	uint32_t job_id;

	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) {
		slurm_error("imex: init_post_opt: no job id from Slurm");
		return -1;
	}
	return step_namespace(job_id);
}
