// SPDX-License-Identifier: GPL-2.0
/*
 * kfuzz: random and mutated generic-netlink messages to the imex family and
 * random ioctls on channel fds, as root and as nobody, then a check that the
 * kernel's state is still one that privileged calls could have made.
 *
 *   kfuzz [--seed N] [--count N]
 *
 * Messages are built by hand on a raw socket so that any framing can be
 * sent, up to MSG_MAX (256 KiB: requests above the 64 KiB an attribute can
 * describe too); the final state is read with libnl.  Two threads fuzz at
 * once, each with its own socket, channel fds and random sequence; every
 * thread's messages are decided by the seed, printed first, so a failure
 * replays with --seed (the interleaving of the two threads may differ).
 * Every REQ_ACCEPT upcall received is checked to be well-formed.
 *
 * Exit status: 0, 1 for a broken property (printed), 2 for a setup error.
 */
#include "kfuzz.h"

/* Set once by main() before any thread starts. */
int family;
uint64_t seed_rng;

/* Each thread's own: its sequence, socket state, node view and counts. */
__thread uint64_t rng;
__thread char node_name[IMEX_NAME_MAX];
__thread uint8_t fabric_uuid[16];
__thread uint32_t fabric_part;
__thread uint32_t seq_no = 1;
__thread bool privileged;
__thread bool attached;	/* this thread's socket is the manager */
__thread unsigned long stat_sent, stat_send_err, stat_ok, stat_ioctl,
	stat_ioctl_ok, stat_big, stat_upcalls;
__thread unsigned long stat_err[134];
__thread uint64_t upcall_id;	/* REQ_ID of the last upcall */

/* Names of domains a manager's DOMAIN_SET was accepted for, by any thread. */
pthread_mutex_t made_lock = PTHREAD_MUTEX_INITIALIZER;
char made[512][IMEX_NAME_MAX];
unsigned int nmade;

void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("kfuzz: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

void __attribute__((format(printf, 1, 2))) broken(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("kfuzz: FAIL: ", stdout);
	vfprintf(stdout, fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	fflush(stdout);
	exit(1);
}

/* ---- the run ----------------------------------------------------------- */

static void fuzz(int fd, unsigned long count)
{
	struct msg *m = &bufs->fuzz;
	unsigned long i;
	uint8_t cmd;

	for (i = 0; i < count; i++) {
		if (chance(15)) {
			fuzz_ioctl();
			continue;
		}
		if (privileged && chance(12)) {
			scenario(fd);
			continue;
		}
		if (chance(1)) {
			big_request(fd);
			continue;
		}
		/* Re-attach now and then: most manager commands need it. */
		if (privileged && chance(2)) {
			start(m, chance(80) ? IMEX_CMD_MANAGER_ATTACH :
			      IMEX_CMD_MANAGER_DETACH, NLM_F_REQUEST | NLM_F_ACK);
			finish(m);
			exchange(fd, m);
			continue;
		}
		cmd = chance(97) ? (uint8_t)rnd(__IMEX_CMD_MAX) : (uint8_t)rnd(256);
		random_msg(m, cmd);
		if (chance(20))
			mutate(m);
		if (chance(8))
			malformed(fd, m);
		else
			exchange(fd, m);
	}
	close_fds();
}

/*
 * A READY domain with channels anyone may open, so that the unprivileged
 * part reaches the ioctls too.  Any of the names may be taken already.
 */
static void ready_domain(int fd)
{
	struct msg *m = &bufs->ready;
	uint8_t u[16];
	size_t outer, e;
	unsigned int d, i;

	start(m, IMEX_CMD_MANAGER_ATTACH, NLM_F_REQUEST | NLM_F_ACK);
	finish(m);
	exchange(fd, m);
	for (d = 0; d < 3; d++) {
		start(m, IMEX_CMD_DOMAIN_SET, NLM_F_REQUEST | NLM_F_ACK);
		put_str(m, IMEX_A_DOMAIN_NAME, pool[d]);
		put_u64(m, IMEX_A_DOMAIN_GENERATION, change_id++);
		uuid_of(u, d);
		put(m, IMEX_A_DOMAIN_UUID, u, 16);
		put(m, IMEX_A_FABRIC_UUID, fabric_uuid, 16);
		put_u32(m, IMEX_A_FABRIC_PARTITION, fabric_part);
		outer = nest_start(m, IMEX_A_MEMBERS);
		e = nest_start(m, 0);
		put_str(m, IMEX_A_MEMBER_ENTRY_NAME, node_name);
		nest_end(m, e);
		nest_end(m, outer);
		outer = nest_start(m, IMEX_A_CHANNELS);
		for (i = 0; i < 4; i++) {
			e = nest_start(m, (uint16_t)i);
			put_u32(m, IMEX_A_CHANNEL_ENTRY_ID, 12 + d * 4 + i);
			put_u32(m, IMEX_A_CHANNEL_ENTRY_MODE, 0666);
			nest_end(m, e);
		}
		nest_end(m, outer);
		finish(m);
		e = exchange(fd, m);
		if (e)
			printf("kfuzz: DOMAIN_SET of %s: %s\n", pool[d], strerror((int)e));
		/* Set now or by the fuzzing: either way, make it READY. */
		start(m, IMEX_CMD_DOMAIN_SET_STATUS, NLM_F_REQUEST | NLM_F_ACK);
		put_str(m, IMEX_A_DOMAIN_NAME, pool[d]);
		put_u32(m, IMEX_A_DOMAIN_STATE, IMEX_DOMAIN_READY);
		finish(m);
		exchange(fd, m);
	}
}


/* One fuzzing thread: its socket (@fd, or its own when -1) and sequence. */
struct worker {
	pthread_t thread;
	unsigned int idx;
	bool privileged;
	int fd;
	unsigned long count;
	unsigned long sent, send_err, ok, ioctls, ioctls_ok, big, upcalls;
	unsigned long err[134];
};

static void *fuzz_thread(void *arg)
{
	struct worker *w = arg;
	bool own = w->fd < 0;
	int fd;

	rng = (seed_rng ^ (0x9e3779b97f4a7c15ull * (w->idx + 1))) | 1;
	/* Generations of the threads never meet. */
	change_id = 1000 + 1000000000ull * w->idx;
	privileged = w->privileged;
	node_info();
	bufs_get();
	fd = own ? open_raw() : w->fd;
	fuzz(fd, w->count);
	if (own)
		close(fd);
	bufs_put();
	w->sent = stat_sent;
	w->send_err = stat_send_err;
	w->ok = stat_ok;
	w->ioctls = stat_ioctl;
	w->ioctls_ok = stat_ioctl_ok;
	w->big = stat_big;
	w->upcalls = stat_upcalls;
	memcpy(w->err, stat_err, sizeof(w->err));
	return NULL;
}

/* THREADS threads at once, @fd the first one's socket (or -1); summed up. */
static void run_threads(bool priv, int fd, unsigned long count, struct worker *sum)
{
	struct worker w[THREADS];
	unsigned int i, j;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].idx = i + (priv ? 0 : THREADS);
		w[i].privileged = priv;
		w[i].fd = i == 0 ? fd : -1;
		w[i].count = count / THREADS;
		if (pthread_create(&w[i].thread, NULL, fuzz_thread, &w[i]))
			die("pthread_create failed");
	}
	for (i = 0; i < THREADS; i++) {
		if (pthread_join(w[i].thread, NULL))
			die("pthread_join failed");
		sum->sent += w[i].sent;
		sum->send_err += w[i].send_err;
		sum->ok += w[i].ok;
		sum->ioctls += w[i].ioctls;
		sum->ioctls_ok += w[i].ioctls_ok;
		sum->big += w[i].big;
		sum->upcalls += w[i].upcalls;
		for (j = 0; j < 134; j++)
			sum->err[j] += w[i].err[j];
	}
}

static void run_unprivileged(unsigned long count)
{
	pid_t pid = fork();
	struct worker sum;
	int status;

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			die("cannot become nobody: %s", strerror(errno));
		run_threads(false, -1, count, &sum);
		printf("kfuzz: nobody (%u threads): %lu messages (%lu refused by sendto, %lu large requests), %lu succeeded (read-only), %lu ioctls (%lu succeeded)\n",
		       THREADS, sum.sent, sum.send_err, sum.big, sum.ok, sum.ioctls,
		       sum.ioctls_ok);
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

int main(int argc, char **argv)
{
	unsigned long count = 120000, seed = 0;
	bool have_seed = false;
	struct worker sum;
	unsigned int i;
	int a, fd;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--seed") && a + 1 < argc) {
			seed = strtoul(argv[++a], NULL, 0);
			have_seed = true;
		} else if (!strcmp(argv[a], "--count") && a + 1 < argc) {
			count = strtoul(argv[++a], NULL, 0);
		} else {
			fprintf(stderr, "usage: kfuzz [--seed N] [--count N]\n");
			return 2;
		}
	}
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (unsigned long)ts.tv_sec * 1000003ul ^ (unsigned long)ts.tv_nsec ^
		       (unsigned long)getpid();
	}
	printf("kfuzz: seed %lu (replay: kfuzz --seed %lu --count %lu)\n",
	       seed, seed, count);
	fflush(stdout);
	seed_rng = seed * 2 + 1;
	rng = seed_rng;
	if (geteuid() != 0)
		die("run as root: part of the run is as root, part as nobody");
	node_info();

	/* The first thread's socket outlives it: ready_domain() is its manager. */
	privileged = true;
	fd = open_raw();
	run_threads(true, fd, count - count / 5, &sum);
	bufs_get();
	ready_domain(fd);
	bufs_put();
	printf("kfuzz: root (%u threads): %lu messages (%lu refused by sendto, %lu large requests), %lu succeeded, %lu REQ_ACCEPT upcalls well-formed, %lu ioctls (%lu succeeded), %u domain names set\n",
	       THREADS, sum.sent, sum.send_err, sum.big, sum.ok, sum.upcalls, sum.ioctls,
	       sum.ioctls_ok, nmade);
	printf("kfuzz: errnos:");
	for (i = 0; i < 134; i++)
		if (sum.err[i])
			printf(" %s=%lu", i ? (i == 133 ? "other" : strerrorname_np((int)i)) : "0",
			       sum.err[i]);
	printf("\n");
	fflush(stdout);
	/* While this socket is still the manager: domains stay READY. */
	run_unprivileged(count / 5);
	close(fd);
	check_state();
	return 0;
}
