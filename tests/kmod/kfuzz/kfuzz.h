/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfuzz's shared parts: the limits, the message buffer, the state every
 * file reads (set in kfuzz.c), the random sequence, and the functions one
 * file calls in another.  See kfuzz.c for what the fuzzer does.
 */
#ifndef KFUZZ_H
#define KFUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>
#include <linux/imex.h>

#define MSG_MAX		(1 << 18)
#define RECV_MAX	(1 << 18)
#define THREADS		2U
#define NAMES		6
#define UUIDS		5
#define FDS		8
#define HANDLES		16
#define NOBODY		65534

/* ---- kfuzz.c: the run's state ------------------------------------------ */

/* Set once by main() before any thread starts. */
extern int family;
extern uint64_t seed_rng;

/* Each thread's own: its sequence, socket state, node view and counts. */
extern __thread uint64_t rng;
extern __thread char node_name[IMEX_NAME_MAX];
extern __thread uint8_t fabric_uuid[16];
extern __thread uint32_t fabric_part;
extern __thread uint32_t seq_no;
extern __thread bool privileged;
extern __thread bool attached;	/* this thread's socket is the manager */
extern __thread unsigned long stat_sent, stat_send_err, stat_ok, stat_ioctl,
	stat_ioctl_ok, stat_big, stat_upcalls;
extern __thread unsigned long stat_err[134];
extern __thread uint64_t upcall_id;	/* REQ_ID of the last upcall */

/* Names of domains a manager's DOMAIN_SET was accepted for, by any thread. */
extern pthread_mutex_t made_lock;
extern char made[512][IMEX_NAME_MAX];
extern unsigned int nmade;

void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...);
void __attribute__((format(printf, 1, 2))) broken(const char *fmt, ...);

/* xorshift64*: small, and the same sequence for a seed everywhere. */
static inline uint64_t rnd64(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

static inline uint32_t rnd(uint32_t n)
{
	return n ? (uint32_t)(rnd64() % n) : 0;
}

static inline bool chance(unsigned int pct)
{
	return rnd(100) < pct;
}

/* ---- kfuzz_msg.c: building messages ------------------------------------ */

struct msg {
	uint8_t *d;		/* MSG_MAX bytes, from msg_buf() */
	size_t len;
	bool overflow;
};

/* A thread's buffers: too large for its stack, freed when it ends. */
struct bufs {
	struct msg fuzz, scenario, sync, ready, big;
	uint8_t two[2 * MSG_MAX];
	uint8_t recv[RECV_MAX];
};

extern __thread struct bufs *bufs;
extern const char *const pool[NAMES];

void bufs_get(void);
void bufs_put(void);
void *put(struct msg *m, uint16_t type, const void *data, size_t len);
void put_u32(struct msg *m, uint16_t type, uint32_t v);
void put_u64(struct msg *m, uint16_t type, uint64_t v);
void put_str(struct msg *m, uint16_t type, const char *s);
size_t nest_start(struct msg *m, uint16_t type);
void nest_end(struct msg *m, size_t at);
bool nest_room(const struct msg *m, size_t at, size_t entry);
uint32_t any_u32(void);
void uuid_of(uint8_t *u, unsigned int i);
void put_channels(struct msg *m, uint16_t type);
bool readonly_cmd(uint8_t cmd);
void start(struct msg *m, uint8_t cmd, uint16_t flags);
void finish(struct msg *m);
void random_msg(struct msg *m, uint8_t cmd);
void mutate(struct msg *m);

/* ---- kfuzz_send.c: sending, waiting, the manager's scenario ------------ */

/* Domain generations: each thread's from its own base (fuzz_thread()). */
extern __thread uint64_t change_id;

int open_raw(void);
int exchange(int fd, struct msg *m);
void malformed(int fd, struct msg *m);
void scenario(int fd);
void big_request(int fd);

/* ---- kfuzz_ioctl.c: channel fds ---------------------------------------- */

void fuzz_ioctl(void);
void close_fds(void);

/* ---- kfuzz_state.c: the state afterwards, read with libnl -------------- */

void check_state(void);
void node_info(void);

#endif
