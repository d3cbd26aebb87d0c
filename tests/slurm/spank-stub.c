// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * spank-stub: run contrib/slurm/imex.so's callbacks the way slurmd and
 * slurmstepd do, without Slurm, so the plugin's IMEX side is tested on any
 * VM (tests/slurm/t-spank.sh); t-slurm.sh runs it under the real Slurm.
 *
 *   spank-stub PLUGIN JOBID UID GID prolog|epilog [CHANNELS|-] [ARG...]
 *   spank-stub PLUGIN JOBID UID GID step [CHANNELS|-] [ARG...] -- CMD...
 *
 * CHANNELS is the job's --imex-channels ('-': not given); ARGs are the
 * plugstack.conf arguments.  "prolog" and "epilog" read SLURM_NODELIST
 * and SLURMD_NODENAME from the environment, as the plugin does under
 * slurmd.  "step" runs init_post_opt as root, then CMD as UID:GID (no
 * supplementary groups), as slurmstepd does for a task.  Exits with the
 * callback's failure (1) or CMD's status.
 */
#include <dlfcn.h>
#include <grp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

struct spank_handle { int unused; };	// cppcheck-suppress unusedStructMember

static spank_context_t ctx_now;
static uint32_t job_id;
static uid_t job_uid;
static gid_t job_gid;
static const char *job_channels;	/* NULL: option not given */
static struct spank_option *registered;

spank_context_t spank_context(void)
{
	return ctx_now;
}

spank_err_t spank_option_register(spank_t sp, struct spank_option *opt)
{
	(void)sp;
	registered = opt;
	return ESPANK_SUCCESS;
}

spank_err_t spank_option_getopt(spank_t sp, struct spank_option *opt, char **arg)
{
	(void)sp;
	if (!opt || !opt->name || strcmp(opt->name, "imex-channels"))
		return ESPANK_BAD_ARG;
	if (!job_channels)
		return ESPANK_ERROR;
	*arg = (char *)job_channels;
	return ESPANK_SUCCESS;
}

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...)
{
	va_list ap;
	spank_err_t rc = ESPANK_SUCCESS;

	(void)sp;
	va_start(ap, item);
	switch (item) {
	case S_JOB_ID:
		*va_arg(ap, uint32_t *) = job_id;
		break;
	case S_JOB_UID:
		*va_arg(ap, uid_t *) = job_uid;
		break;
	case S_JOB_GID:
		*va_arg(ap, gid_t *) = job_gid;
		break;
	default:
		rc = ESPANK_NOT_AVAIL;
	}
	va_end(ap);
	return rc;
}

static void vlog(const char *level, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void slurm_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("error: ", fmt, ap);
	va_end(ap);
}

void slurm_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

static spank_f *sym(void *dl, const char *name)
{
	spank_f *f = (spank_f *)dlsym(dl, name);

	if (!f) {
		fprintf(stderr, "spank-stub: %s not in plugin\n", name);
		exit(2);
	}
	return f;
}

int main(int argc, char **argv)
{
	struct spank_handle h = { 0 };
	int nargs, i, step;
	const char *what;
	void *dl;

	if (argc < 6) {
		fprintf(stderr, "usage: spank-stub PLUGIN JOBID UID GID prolog|epilog|step "
			"[CHANNELS|-] [ARG...] [-- CMD...]\n");
		return 2;
	}
	job_id = (uint32_t)strtoul(argv[2], NULL, 10);
	job_uid = (uid_t)strtoul(argv[3], NULL, 10);
	job_gid = (gid_t)strtoul(argv[4], NULL, 10);
	what = argv[5];
	step = !strcmp(what, "step");
	if (argc > 6 && strcmp(argv[6], "--"))
		job_channels = strcmp(argv[6], "-") ? argv[6] : NULL;
	for (nargs = 0; 7 + nargs < argc && strcmp(argv[7 + nargs], "--"); nargs++)
		;
	dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		fprintf(stderr, "spank-stub: %s\n", dlerror());
		return 2;
	}
	ctx_now = step ? S_CTX_REMOTE : S_CTX_JOB_SCRIPT;
	if (sym(dl, "slurm_spank_init")(&h, nargs, argv + 7))
		return 1;
	if (!strcmp(what, "prolog"))
		return sym(dl, "slurm_spank_job_prolog")(&h, nargs, argv + 7) ? 1 : 0;
	if (!strcmp(what, "epilog"))
		return sym(dl, "slurm_spank_job_epilog")(&h, nargs, argv + 7) ? 1 : 0;
	if (!step || 7 + nargs >= argc - 1) {
		fprintf(stderr, "spank-stub: unknown action or no command\n");
		return 2;
	}
	/* slurmstepd parses the options (callback) before init_post_opt. */
	if (job_channels && registered && registered->cb &&
	    registered->cb(registered->val, job_channels, 1))
		return 1;
	if (sym(dl, "slurm_spank_init_post_opt")(&h, nargs, argv + 7))
		return 1;
	i = 7 + nargs + 1;
	if (setgroups(0, NULL) || setgid(job_gid) || setuid(job_uid)) {
		perror("spank-stub: becoming the job's user");
		return 2;
	}
	execvp(argv[i], argv + i);
	perror(argv[i]);
	return 127;
}
