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

/* Set once by main() before any thread starts. */
static int family;
static uint64_t seed_rng;

/* Each thread's own: its sequence, socket state, node view and counts. */
static __thread uint64_t rng;
static __thread char node_name[IMEX_NAME_MAX];
static __thread uint8_t fabric_uuid[16];
static __thread uint32_t fabric_part;
static __thread uint32_t seq_no = 1;
static __thread bool privileged;
static __thread bool attached;	/* this thread's socket is the manager */
static __thread unsigned long stat_sent, stat_send_err, stat_ok, stat_ioctl,
	stat_ioctl_ok, stat_big, stat_upcalls;
static __thread unsigned long stat_err[134];
static __thread uint64_t upcall_id;	/* REQ_ID of the last upcall */

/* Names of domains a manager's DOMAIN_SET was accepted for, by any thread. */
static pthread_mutex_t made_lock = PTHREAD_MUTEX_INITIALIZER;
static char made[512][IMEX_NAME_MAX];
static unsigned int nmade;

static void __attribute__((noreturn, format(printf, 1, 2)))
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

static void __attribute__((format(printf, 1, 2))) broken(const char *fmt, ...)
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

/* xorshift64*: small, and the same sequence for a seed everywhere. */
static uint64_t rnd64(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

static uint32_t rnd(uint32_t n)
{
	return n ? (uint32_t)(rnd64() % n) : 0;
}

static bool chance(unsigned int pct)
{
	return rnd(100) < pct;
}

/* ---- building messages ------------------------------------------------- */

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

static __thread struct bufs *bufs;

static void bufs_get(void)
{
	struct msg *all[5];
	unsigned int i;

	bufs = calloc(1, sizeof(*bufs));
	if (!bufs)
		abort();
	all[0] = &bufs->fuzz;
	all[1] = &bufs->scenario;
	all[2] = &bufs->sync;
	all[3] = &bufs->ready;
	all[4] = &bufs->big;
	for (i = 0; i < 5; i++) {
		all[i]->d = malloc(MSG_MAX);
		if (!all[i]->d)
			abort();
	}
}

static void bufs_put(void)
{
	free(bufs->fuzz.d);
	free(bufs->scenario.d);
	free(bufs->sync.d);
	free(bufs->ready.d);
	free(bufs->big.d);
	free(bufs);
	bufs = NULL;
}

static void *put(struct msg *m, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a;
	size_t need = NLA_HDRLEN + NLA_ALIGN(len);

	if (m->len + need > MSG_MAX || len > 0xffff - NLA_HDRLEN) {
		m->overflow = true;
		return NULL;
	}
	a = (struct nlattr *)(m->d + m->len);
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	if (data)
		memcpy(a + 1, data, len);
	else
		memset(a + 1, 0, len);
	memset((uint8_t *)(a + 1) + len, 0, NLA_ALIGN(len) - len);
	m->len += need;
	return a + 1;
}

static void put_u32(struct msg *m, uint16_t type, uint32_t v)
{
	put(m, type, &v, 4);
}

static void put_u64(struct msg *m, uint16_t type, uint64_t v)
{
	put(m, type, &v, 8);
}

static void put_str(struct msg *m, uint16_t type, const char *s)
{
	put(m, type, s, strlen(s) + 1);
}

static size_t nest_start(struct msg *m, uint16_t type)
{
	size_t at = m->len;

	put(m, type | (chance(90) ? NLA_F_NESTED : 0), NULL, 0);
	return at;
}

static void nest_end(struct msg *m, size_t at)
{
	struct nlattr *a = (struct nlattr *)(m->d + at);

	if (!m->overflow)
		a->nla_len = (uint16_t)(m->len - at);
}

/* Room for one more entry of at most @entry bytes in the nest at @at. */
static bool nest_room(const struct msg *m, size_t at, size_t entry)
{
	return !m->overflow && m->len - at + entry <= 0xffff;
}

static const uint32_t interesting[] = {
	0, 1, 2, 3, 7, 0600, 0666, 0777, 01000, 4095, 4096, 65535, 65536,
	IMEX_CHANNELS_MAX - 1, IMEX_CHANNELS_MAX, 300000,
	300001, 0x7fffffff, 0x80000000, 0xffffffff,
};

static uint32_t any_u32(void)
{
	if (chance(50))
		return interesting[rnd(sizeof(interesting) / sizeof(interesting[0]))];
	if (chance(50))
		return rnd(16);
	return (uint32_t)rnd64();
}

static const char *const pool[NAMES] = { "d0", "d1", "d2", "fz.a-b_c", "x", "" };

static void fill_name(char *s, size_t size)
{
	size_t i, n;

	switch (rnd(10)) {
	case 0:
		n = 1 + rnd((uint32_t)size - 1);	/* random bytes */
		for (i = 0; i + 1 < n; i++)
			s[i] = (char)(1 + rnd(255));
		s[n - 1] = '\0';
		return;
	case 1:
		n = chance(50) ? IMEX_NAME_MAX - 1 : IMEX_NAME_MAX;
		if (n >= size)
			n = size - 1;
		memset(s, 'n', n);
		s[n] = '\0';
		return;
	case 2:
		snprintf(s, size, "%s", node_name);
		return;
	default:
		snprintf(s, size, "%s", pool[rnd(NAMES - 1)]);
	}
}

static void put_name(struct msg *m, uint16_t type)
{
	char s[IMEX_NAME_MAX + 8];

	fill_name(s, sizeof(s));
	if (chance(3)) {
		/* No NUL at the end. */
		put(m, type, s, strlen(s));
		return;
	}
	put_str(m, type, s);
}

static void uuid_of(uint8_t *u, unsigned int i)
{
	memset(u, 0, 16);
	u[0] = 0xaa;
	u[15] = (uint8_t)(i + 1);
}

static void put_uuid(struct msg *m, uint16_t type)
{
	uint8_t u[20];
	unsigned int i;

	switch (rnd(8)) {
	case 0:
		memset(u, 0, sizeof(u));
		break;
	case 1:
		for (i = 0; i < sizeof(u); i++)
			u[i] = (uint8_t)rnd(256);
		break;
	case 2:
		memcpy(u, fabric_uuid, 16);
		break;
	default:
		uuid_of(u, rnd(UUIDS));
	}
	put(m, type, u, chance(4) ? rnd(20) : 16);
}

static void put_members(struct msg *m, uint16_t type)
{
	unsigned int i, n = chance(5) ? rnd(IMEX_MEMBERS_MAX + 3) : 1 + rnd(3);
	bool big = chance(30);	/* the longest names and addresses */
	char s[IMEX_ADDR_MAX];
	uint8_t view[8];
	size_t outer = nest_start(m, type), e;

	for (i = 0; i < n && nest_room(m, outer, 512); i++) {
		e = nest_start(m, chance(95) ? (uint16_t)i : (uint16_t)rnd(5));
		if (i == 0 && chance(80)) {
			put_str(m, IMEX_A_MEMBER_ENTRY_NAME, node_name);
		} else if (big) {
			snprintf(s, IMEX_NAME_MAX, "m%03u%059u", i % 1000, 0U);
			put_str(m, IMEX_A_MEMBER_ENTRY_NAME, s);
		} else if (chance(90)) {
			put_name(m, IMEX_A_MEMBER_ENTRY_NAME);
		}
		if (big) {
			memset(s, 'a', sizeof(s) - 1);
			s[sizeof(s) - 1] = '\0';
			put_str(m, IMEX_A_MEMBER_ADDR, s);
		} else if (chance(30)) {
			put_str(m, IMEX_A_MEMBER_ADDR, chance(80) ? "10.0.0.1:50100" : "");
		}
		if (chance(20))
			put_u32(m, IMEX_A_MEMBER_STATE, rnd(__IMEX_MEMBER_STATE_MAX + 2));
		if (chance(15)) {
			for (size_t k = 0; k < sizeof(view); k++)
				view[k] = (uint8_t)rnd(__IMEX_MEMBER_STATE_MAX + 1);
			put(m, IMEX_A_MEMBER_VIEW, view, rnd(sizeof(view) + 1));
		}
		if (chance(5))
			put_u32(m, (uint16_t)rnd(8), any_u32());
		nest_end(m, e);
	}
	nest_end(m, outer);
}

static void put_channels(struct msg *m, uint16_t type)
{
	unsigned int i, n = chance(3) ? rnd(IMEX_CHANNELS_PER_MSG + 2) : rnd(5);
	size_t outer = nest_start(m, type), e;

	for (i = 0; i < n && nest_room(m, outer, 64); i++) {
		e = nest_start(m, (uint16_t)(chance(95) ? i : rnd(4)));
		if (chance(95))
			put_u32(m, IMEX_A_CHANNEL_ENTRY_ID,
				chance(90) ? rnd(16) : any_u32());
		if (chance(30))
			put_u32(m, IMEX_A_CHANNEL_ENTRY_UID, chance(50) ? NOBODY : any_u32());
		if (chance(30))
			put_u32(m, IMEX_A_CHANNEL_ENTRY_GID, chance(50) ? NOBODY : any_u32());
		if (chance(40))
			put_u32(m, IMEX_A_CHANNEL_ENTRY_MODE, chance(70) ? 0666 : any_u32());
		if (chance(3))
			put(m, (uint16_t)rnd(8), NULL, rnd(9));
		nest_end(m, e);
	}
	nest_end(m, outer);
}

/* One attribute of @type with a value of the kind the uAPI gives it. */
static void put_attr(struct msg *m, uint16_t type, int depth)
{
	uint32_t ids[8];
	uint8_t b[IMEX_DESC_MAX + 8];
	size_t i, n;

	if (chance(5)) {		/* the wrong size for any type */
		n = rnd(24);
		for (i = 0; i < n; i++)
			b[i] = (uint8_t)rnd(256);
		put(m, type, b, n);
		return;
	}
	switch (type) {
	case IMEX_A_NODE_NAME:
	case IMEX_A_DOMAIN_NAME:
	case IMEX_A_MEMBER_NAME:
		put_name(m, type);
		break;
	case IMEX_A_REQ_MESSAGE:
	case IMEX_A_NODE_ADDR:		/* IMEX_ADDR_MAX == IMEX_MESSAGE_MAX */
		n = chance(10) ? IMEX_MESSAGE_MAX + rnd(3) : rnd(20);
		memset(b, 'm', n < sizeof(b) ? n : sizeof(b) - 1);
		b[n < sizeof(b) ? n : sizeof(b) - 1] = '\0';
		put_str(m, type, (char *)b);
		break;
	case IMEX_A_NODE_UUID:
	case IMEX_A_FABRIC_UUID:
	case IMEX_A_DOMAIN_UUID:
	case IMEX_A_HANDLE_NODE:
		put_uuid(m, type);
		break;
	case IMEX_A_REQ_ID:
	case IMEX_A_IMPORT_ID:
	case IMEX_A_HANDLE_ID:
	case IMEX_A_DOMAIN_GENERATION:
		put_u64(m, type, chance(70) ? rnd(8) : rnd64());
		break;
	case IMEX_A_FABRIC_PARTITION:
		put_u32(m, type, chance(70) ? fabric_part : any_u32());
		break;
	case IMEX_A_MEMBERS:
		put_members(m, type);
		break;
	case IMEX_A_CHANNELS:
		put_channels(m, type);
		break;
	case IMEX_A_CHANNEL_IDS:
		if (chance(5)) {	/* up to IMEX_CHANNEL_IDS_MAX and past it */
			uint32_t *many;

			n = rnd(IMEX_CHANNEL_IDS_MAX + 2);
			many = put(m, type, NULL, 4 * n);
			for (i = 0; many && i < n; i++)
				many[i] = chance(90) ? (uint32_t)i : rnd(16);
			break;
		}
		n = chance(5) ? rnd(9) : 4 * rnd(9);
		for (i = 0; i < 8; i++)
			ids[i] = rnd(16);
		put(m, type, ids, n);
		break;
	case IMEX_A_DESC:
		n = chance(10) ? IMEX_DESC_MAX + rnd(3) : rnd(IMEX_DESC_MAX + 1);
		for (i = 0; i < n; i++)
			b[i] = (uint8_t)rnd(256);
		put(m, type, b, n);
		break;
	case IMEX_A_REQ_ATTRS:
		if (depth < 3) {
			size_t at = nest_start(m, type);

			n = rnd(4);
			for (i = 0; i < n; i++)
				put_attr(m, (uint16_t)rnd(IMEX_A_MAX + 2), depth + 1);
			nest_end(m, at);
		}
		break;
	case IMEX_A_DOMAIN_STATE:
		put_u32(m, type, chance(80) ? rnd(__IMEX_DOMAIN_STATE_MAX) : any_u32());
		break;
	case IMEX_A_CHANNEL_ID:
		put_u32(m, type, chance(80) ? rnd(16) : any_u32());
		break;
	case IMEX_A_CHANNEL_MODE:
		put_u32(m, type, chance(60) ? 0666 : any_u32());
		break;
	default:
		put_u32(m, type, any_u32());
	}
}

/* The attributes each command reads, so most messages get past parsing. */
static const uint8_t cmd_attrs[__IMEX_CMD_MAX][10] = {
	[IMEX_CMD_NODE_SET] = { IMEX_A_NODE_NAME, IMEX_A_NODE_UUID,
		IMEX_A_FABRIC_UUID, IMEX_A_FABRIC_PARTITION },
	[IMEX_CMD_DOMAIN_CREATE] = { IMEX_A_DOMAIN_NAME, IMEX_A_DOMAIN_UUID,
		IMEX_A_MEMBERS, IMEX_A_CHANNEL_COUNT, IMEX_A_CHANNELS,
		IMEX_A_CHANNEL_UID, IMEX_A_CHANNEL_GID, IMEX_A_CHANNEL_MODE },
	[IMEX_CMD_DOMAIN_DELETE] = { IMEX_A_DOMAIN_NAME },
	[IMEX_CMD_DOMAIN_GET] = { IMEX_A_DOMAIN_NAME, IMEX_A_DOMAIN_UUID },
	[IMEX_CMD_DOMAIN_SET_STATUS] = { IMEX_A_DOMAIN_NAME,
		IMEX_A_DOMAIN_STATE, IMEX_A_MEMBERS },
	[IMEX_CMD_CHANNEL_GET] = { IMEX_A_CHANNEL_ID, IMEX_A_DOMAIN_NAME },
	[IMEX_CMD_CHANNEL_SET] = { IMEX_A_CHANNEL_ID, IMEX_A_CHANNEL_UID,
		IMEX_A_CHANNEL_GID, IMEX_A_CHANNEL_MODE },
	[IMEX_CMD_CHANNEL_ALLOC] = { IMEX_A_DOMAIN_NAME, IMEX_A_CHANNEL_COUNT,
		IMEX_A_CHANNELS },
	[IMEX_CMD_CHANNEL_FREE] = { IMEX_A_DOMAIN_NAME, IMEX_A_CHANNELS },
	[IMEX_CMD_MEMBER_EVICT] = { IMEX_A_DOMAIN_NAME, IMEX_A_MEMBER_NAME },
	[IMEX_CMD_MEMBER_REPLACE] = { IMEX_A_DOMAIN_NAME, IMEX_A_MEMBER_NAME,
		IMEX_A_MEMBER_NEW_NAME },
	[IMEX_CMD_REQ_DONE] = { IMEX_A_REQ_ID, IMEX_A_REQ_STATUS,
		IMEX_A_REQ_MESSAGE, IMEX_A_DOMAIN_UUID, IMEX_A_CHANNEL_IDS },
	[IMEX_CMD_IMPORT_DONE] = { IMEX_A_IMPORT_ID, IMEX_A_REQ_STATUS,
		IMEX_A_DESC, IMEX_A_REQ_MESSAGE },
	[IMEX_CMD_IMPORT_CHECK] = { IMEX_A_HANDLE_ID, IMEX_A_DOMAIN_UUID,
		IMEX_A_CHANNEL_ID, IMEX_A_MEMBER_NAME },
	[IMEX_CMD_IMPORT_REVOKE] = { IMEX_A_HANDLE_NODE, IMEX_A_HANDLE_ID,
		IMEX_A_DOMAIN_UUID, IMEX_A_REVOKE_REASON },
	[IMEX_CMD_DOMAIN_SET] = { IMEX_A_DOMAIN_NAME, IMEX_A_DOMAIN_UUID,
		IMEX_A_FABRIC_UUID, IMEX_A_FABRIC_PARTITION, IMEX_A_MEMBERS,
		IMEX_A_DOMAIN_GENERATION, IMEX_A_CHANNELS, IMEX_A_CHANNEL_IDS,
		IMEX_A_CHANNEL_UID, IMEX_A_CHANNEL_MODE },
	[IMEX_CMD_DOMAIN_REMOVE] = { IMEX_A_DOMAIN_NAME, IMEX_A_DOMAIN_UUID },
	[IMEX_CMD_NODE_JOIN] = { IMEX_A_MEMBER_NAME, IMEX_A_NODE_ADDR },
	[IMEX_CMD_NODE_LEAVE] = { IMEX_A_MEMBER_NAME },
};

static bool readonly_cmd(uint8_t cmd)
{
	return cmd == IMEX_CMD_NODE_GET || cmd == IMEX_CMD_DOMAIN_GET ||
	       cmd == IMEX_CMD_CHANNEL_GET;
}

static void start(struct msg *m, uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->d;
	struct genlmsghdr *g = (struct genlmsghdr *)(h + 1);

	memset(m->d, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
	m->overflow = false;
	h->nlmsg_type = (uint16_t)family;
	h->nlmsg_flags = flags;
	h->nlmsg_seq = seq_no++;
	g->cmd = cmd;
	g->version = IMEX_GENL_VERSION;
}

static void finish(struct msg *m)
{
	((struct nlmsghdr *)m->d)->nlmsg_len = (uint32_t)m->len;
}

/* A random message for @cmd: mostly its own attributes, some others. */
static void random_msg(struct msg *m, uint8_t cmd)
{
	const uint8_t *want = cmd < __IMEX_CMD_MAX ? cmd_attrs[cmd] : NULL;
	unsigned int i, n, nwant = 0;
	uint16_t flags = NLM_F_REQUEST | NLM_F_ACK;

	while (want && nwant < 10 && want[nwant])
		nwant++;
	if (readonly_cmd(cmd) && chance(40))
		flags |= NLM_F_DUMP;
	start(m, cmd, flags);
	n = chance(10) ? rnd(24) : rnd(nwant + 2);
	for (i = 0; i < n && !m->overflow; i++) {
		if (nwant && chance(85))
			put_attr(m, want[rnd(nwant)], 0);
		else
			put_attr(m, (uint16_t)rnd(IMEX_A_MAX + 3), 0);
	}
	finish(m);
}

/* Flip, overwrite or truncate a few bytes past the netlink header. */
static void mutate(struct msg *m)
{
	unsigned int i, n = 1 + rnd(4);
	size_t at;

	for (i = 0; i < n && m->len > NLMSG_HDRLEN; i++) {
		at = NLMSG_HDRLEN + rnd((uint32_t)(m->len - NLMSG_HDRLEN));
		switch (rnd(4)) {
		case 0:
			m->d[at] ^= (uint8_t)(1u << rnd(8));
			break;
		case 1:
			m->d[at] = (uint8_t)interesting[rnd(6)];
			break;
		case 2:
			m->len = at;
			break;
		default:
			m->d[at] = (uint8_t)rnd(256);
		}
	}
	finish(m);
}

/* ---- sending and waiting ----------------------------------------------- */

static int open_raw(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 20 };
	int one = 1, size = 1 << 20;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);

	if (fd < 0)
		die("netlink socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("bind: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	/*
	 * netlink_sendmsg() refuses a message above the send buffer: root
	 * forces 1 MiB; nobody gets twice net.core.wmem_max (425984 by
	 * default), still above MSG_MAX.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	return fd;
}

/* Returns 0 or the errno of sendto(): the netlink core refuses some frames. */
static int send_raw(int fd, const void *buf, size_t len)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	stat_sent++;
	if (sendto(fd, buf, len, 0, (struct sockaddr *)&sa, sizeof(sa)) >= 0)
		return 0;
	if (errno == EBADF || errno == ENOTSOCK || errno == EFAULT)
		die("sendto: %s", strerror(errno));
	stat_send_err++;
	return errno;
}

/*
 * Read until the error/ack or the end of dump answering @seq.  Returns the
 * answer's errno (0: success).  No answer within SO_RCVTIMEO is a hang.
 */
/*
 * An upcall the manager can read: req-id, req-cmd and req-attrs, each
 * attribute exactly within the message, and those in req-attrs within it.
 */
static void check_upcall(const struct nlmsghdr *h)
{
	const struct genlmsghdr *g = NLMSG_DATA(h);
	const struct nlattr *a = (const struct nlattr *)((const uint8_t *)g + GENL_HDRLEN);
	int len = (int)h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

	stat_upcalls++;
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		uint16_t type = a->nla_type & NLA_TYPE_MASK;

		if (type != IMEX_A_REQ_ID && type != IMEX_A_REQ_CMD &&
		    type != IMEX_A_REQ_ATTRS)
			broken("REQ_ACCEPT upcall: attribute %u (%u bytes) outside req-attrs",
			       type, a->nla_len);
		if (type == IMEX_A_REQ_ID && a->nla_len == NLA_HDRLEN + 8)
			memcpy(&upcall_id, a + 1, 8);
		if (type == IMEX_A_REQ_ATTRS) {
			const struct nlattr *in = (const struct nlattr *)(a + 1);
			int rem = a->nla_len - NLA_HDRLEN;

			while (rem >= NLA_HDRLEN && in->nla_len >= NLA_HDRLEN &&
			       in->nla_len <= rem) {
				rem -= NLA_ALIGN(in->nla_len);
				in = (const struct nlattr *)((const uint8_t *)in +
							     NLA_ALIGN(in->nla_len));
			}
			if (rem > 0)
				broken("REQ_ACCEPT upcall: %d bytes of req-attrs are no attribute",
				       rem);
		}
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const uint8_t *)a + NLA_ALIGN(a->nla_len));
	}
	if (len > 0)
		broken("REQ_ACCEPT upcall: %d bytes at its end are no attribute", len);
}

static int wait_seq(int fd, uint32_t seq, uint8_t cmd)
{
	uint8_t *buf = bufs->recv;
	struct nlmsghdr *h;
	ssize_t n;
	int len;

	for (;;) {
		n = recv(fd, buf, RECV_MAX, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS)
			continue;	/* replies to an earlier message lost */
		if (n < 0)
			broken("no answer to seq %u (command %u): %s", seq, cmd,
			       strerror(errno));
		len = (int)n;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == family &&
			    h->nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN &&
			    ((struct genlmsghdr *)NLMSG_DATA(h))->cmd == IMEX_CMD_REQ_ACCEPT)
				check_upcall(h);
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				return -e->error;
			}
		}
	}
}

/* A well-formed NODE_GET: its ack says everything before it was read. */
static void sync_sock(int fd)
{
	struct msg *m = &bufs->sync;

	start(m, IMEX_CMD_NODE_GET, NLM_F_REQUEST | NLM_F_ACK);
	finish(m);
	if (send_raw(fd, m->d, m->len) ||
	    wait_seq(fd, ((struct nlmsghdr *)m->d)->nlmsg_seq, IMEX_CMD_NODE_GET))
		broken("NODE_GET fails after malformed input");
}

static void record_made(const struct msg *m)
{
	const struct nlattr *a;
	size_t off = NLMSG_HDRLEN + GENL_HDRLEN;
	unsigned int i;

	while (off + NLA_HDRLEN <= m->len) {
		a = (const struct nlattr *)(m->d + off);
		if (a->nla_len < NLA_HDRLEN || off + a->nla_len > m->len)
			break;
		if ((a->nla_type & NLA_TYPE_MASK) == IMEX_A_DOMAIN_NAME &&
		    a->nla_len > NLA_HDRLEN && a->nla_len - NLA_HDRLEN < IMEX_NAME_MAX) {
			char name[IMEX_NAME_MAX] = "";

			memcpy(name, a + 1, a->nla_len - NLA_HDRLEN);
			pthread_mutex_lock(&made_lock);
			for (i = 0; i < nmade && strcmp(made[i], name); i++)
				;
			if (i == nmade && nmade < sizeof(made) / sizeof(made[0]))
				snprintf(made[nmade++], IMEX_NAME_MAX, "%s", name);
			pthread_mutex_unlock(&made_lock);
		}
		off += NLA_ALIGN(a->nla_len);
	}
}

static void node_info(void);

/* Send @m as it is and learn the outcome; privileged rules on the result. */
static int exchange(int fd, struct msg *m)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->d;
	struct genlmsghdr *g = (struct genlmsghdr *)(h + 1);
	uint8_t cmd = g->cmd;
	int e;

	e = send_raw(fd, m->d, m->len);
	if (e)
		fprintf(stderr, "kfuzz: sendto (command %u, %zu bytes): %s\n",
			cmd, m->len, strerror(e));
	else
		e = wait_seq(fd, h->nlmsg_seq, cmd);
	stat_err[e >= 0 && e < 133 ? e : 133]++;
	if (e == 0)
		stat_ok++;
	if (e == 0 && !privileged && !readonly_cmd(cmd))
		broken("command %u succeeded for an unprivileged user", cmd);
	if (e == 0 && cmd == IMEX_CMD_DOMAIN_SET)
		record_made(m);
	/* The node's name and fabric are what valid changes must name. */
	if (e == 0 && cmd == IMEX_CMD_NODE_SET)
		node_info();
	if ((e == 0 || e == EALREADY) && cmd == IMEX_CMD_MANAGER_ATTACH)
		attached = true;
	if (e == 0 && cmd == IMEX_CMD_MANAGER_DETACH)
		attached = false;
	return e;
}

/* Framings the netlink core or genl must refuse or skip, then a sync. */
static void malformed(int fd, struct msg *m)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->d;
	uint8_t *two = bufs->two;
	size_t n;

	switch (rnd(7)) {
	case 0:		/* a truncated genl header */
		h->nlmsg_len = NLMSG_HDRLEN + rnd(GENL_HDRLEN);
		send_raw(fd, m->d, h->nlmsg_len);
		break;
	case 1:		/* nlmsg_len beyond the datagram */
		h->nlmsg_len = (uint32_t)m->len + 1 + rnd(64);
		send_raw(fd, m->d, m->len);
		break;
	case 2:		/* random flags */
		h->nlmsg_flags = (uint16_t)rnd(0x10000);
		send_raw(fd, m->d, m->len);
		break;
	case 3:		/* a control message type */
		h->nlmsg_type = (uint16_t)rnd(NLMSG_MIN_TYPE);
		send_raw(fd, m->d, m->len);
		break;
	case 4:		/* two messages in one datagram, the second cut */
		n = NLMSG_ALIGN(m->len);
		memcpy(two, m->d, m->len);
		memset(two + m->len, 0, n - m->len);
		memcpy(two + n, m->d, m->len);
		send_raw(fd, two, n + rnd((uint32_t)m->len + 1));
		break;
	case 5:		/* a datagram shorter than a netlink header */
		send_raw(fd, m->d, rnd(NLMSG_HDRLEN));
		break;
	default:	/* another genl version */
		((struct genlmsghdr *)(h + 1))->version = (uint8_t)rnd(256);
		h->nlmsg_flags = NLM_F_REQUEST;
		send_raw(fd, m->d, m->len);
	}
	sync_sock(fd);
}

/* ---- a domain set the way a manager sets it ---------------------------- */

/* Domain generations: each thread's from its own base (fuzz_thread()). */
static __thread uint64_t change_id = 1000;

/* A domain set as a manager sets it (a few channels, both forms), or removed. */
static void scenario_set(int fd, struct msg *m, unsigned int d)
{
	uint32_t ids[4];
	unsigned int i, n;
	size_t outer, e;
	uint8_t u[16];

	uuid_of(u, d);
	if (chance(25)) {
		start(m, IMEX_CMD_DOMAIN_REMOVE, NLM_F_REQUEST | NLM_F_ACK);
		put_str(m, IMEX_A_DOMAIN_NAME, pool[d]);
		if (chance(50))
			put(m, IMEX_A_DOMAIN_UUID, u, 16);
		finish(m);
		exchange(fd, m);
		return;
	}
	start(m, IMEX_CMD_DOMAIN_SET, NLM_F_REQUEST | NLM_F_ACK);
	put_str(m, IMEX_A_DOMAIN_NAME, pool[d]);
	put(m, IMEX_A_DOMAIN_UUID, u, 16);
	put(m, IMEX_A_FABRIC_UUID, fabric_uuid, 16);
	put_u32(m, IMEX_A_FABRIC_PARTITION, fabric_part);
	put_u64(m, IMEX_A_DOMAIN_GENERATION, change_id++);
	outer = nest_start(m, IMEX_A_MEMBERS);
	e = nest_start(m, 0);
	put_str(m, IMEX_A_MEMBER_ENTRY_NAME, node_name);
	nest_end(m, e);
	if (chance(50)) {
		e = nest_start(m, 1);
		put_str(m, IMEX_A_MEMBER_ENTRY_NAME, chance(50) ? "peer" : "peer2");
		nest_end(m, e);
	}
	nest_end(m, outer);
	if (chance(70)) {
		outer = nest_start(m, IMEX_A_CHANNELS);
		n = rnd(4);
		for (i = 0; i < n; i++) {
			e = nest_start(m, (uint16_t)i);
			put_u32(m, IMEX_A_CHANNEL_ENTRY_ID, rnd(16));
			put_u32(m, IMEX_A_CHANNEL_ENTRY_MODE, chance(50) ? 0666 : 0600);
			nest_end(m, e);
		}
		nest_end(m, outer);
	}
	if (chance(40)) {
		n = rnd(4);
		for (i = 0; i < n; i++)
			ids[i] = rnd(16);
		put(m, IMEX_A_CHANNEL_IDS, ids, n * sizeof(ids[0]));
		put_u32(m, IMEX_A_CHANNEL_UID, rnd(3));
	}
	finish(m);
	exchange(fd, m);
}

static void scenario(int fd)
{
	struct msg *m = &bufs->scenario;
	unsigned int d = rnd(3);

	if (!attached) {
		start(m, IMEX_CMD_MANAGER_ATTACH, NLM_F_REQUEST | NLM_F_ACK);
		finish(m);
		exchange(fd, m);
	}
	scenario_set(fd, m, d);
	if (chance(70)) {
		start(m, IMEX_CMD_DOMAIN_SET_STATUS, NLM_F_REQUEST | NLM_F_ACK);
		put_str(m, IMEX_A_DOMAIN_NAME, pool[d]);
		put_u32(m, IMEX_A_DOMAIN_STATE, chance(80) ? IMEX_DOMAIN_READY :
			IMEX_DOMAIN_DEGRADED);
		finish(m);
		exchange(fd, m);
	}
}

/* This node and IMEX_MEMBERS_MAX - 1 others, names and addresses longest. */
static void put_big_members(struct msg *m)
{
	char s[IMEX_ADDR_MAX];
	size_t outer = nest_start(m, IMEX_A_MEMBERS), e;
	unsigned int i;

	for (i = 0; i < IMEX_MEMBERS_MAX && nest_room(m, outer, 512); i++) {
		e = nest_start(m, (uint16_t)(i + 1));
		if (i == 0) {
			put_str(m, IMEX_A_MEMBER_ENTRY_NAME, node_name);
		} else {
			snprintf(s, IMEX_NAME_MAX, "m%03u%059u", i % 1000, 0U);
			put_str(m, IMEX_A_MEMBER_ENTRY_NAME, s);
			memset(s, 'a', sizeof(s) - 1);
			s[sizeof(s) - 1] = '\0';
			put_str(m, IMEX_A_MEMBER_ADDR, s);
		}
		nest_end(m, e);
	}
	nest_end(m, outer);
}

/*
 * A request as large as a message allows (64,000 bytes of channel ids, the
 * longest member list, a long channel list), on a command that takes them
 * or not; then, as the manager, REQ_ACCEPT whatever is queued (wait_seq()
 * checks each upcall) and REQ_DONE it, so the queue does not fill up.
 */
static void big_request(int fd)
{
	static const uint8_t cmds[] = { IMEX_CMD_DOMAIN_CREATE, IMEX_CMD_DOMAIN_CREATE,
					IMEX_CMD_DOMAIN_DELETE, IMEX_CMD_CHANNEL_ALLOC,
					IMEX_CMD_CHANNEL_FREE };
	struct msg *m = &bufs->big;
	uint8_t cmd = cmds[rnd(sizeof(cmds))];
	char name[16];
	uint32_t *ids;
	unsigned int i, n;

	stat_big++;
	if (privileged && !attached) {
		start(m, IMEX_CMD_MANAGER_ATTACH, NLM_F_REQUEST | NLM_F_ACK);
		finish(m);
		exchange(fd, m);
	}
	start(m, cmd, NLM_F_REQUEST | NLM_F_ACK);
	snprintf(name, sizeof(name), "big%u", rnd(1000));
	put_str(m, IMEX_A_DOMAIN_NAME, cmd == IMEX_CMD_DOMAIN_CREATE ? name : pool[rnd(3)]);
	if (chance(60)) {
		n = IMEX_CHANNEL_IDS_MAX - rnd(100);
		ids = put(m, IMEX_A_CHANNEL_IDS, NULL, (size_t)n * 4);
		for (i = 0; ids && i < n; i++)
			ids[i] = i;
	}
	if (chance(80))
		put_big_members(m);
	if (chance(50))
		put_channels(m, IMEX_A_CHANNELS);
	finish(m);
	exchange(fd, m);
	for (i = 0; i < 4 && attached; i++) {
		upcall_id = 0;
		start(m, IMEX_CMD_REQ_ACCEPT, NLM_F_REQUEST | NLM_F_ACK);
		finish(m);
		if (exchange(fd, m) || !upcall_id)
			break;
		start(m, IMEX_CMD_REQ_DONE, NLM_F_REQUEST | NLM_F_ACK);
		put_u64(m, IMEX_A_REQ_ID, upcall_id);
		put_u32(m, IMEX_A_REQ_STATUS, ECANCELED);
		finish(m);
		exchange(fd, m);
	}
}

/* ---- channel fds ------------------------------------------------------- */

static __thread int fds[FDS] = { -1, -1, -1, -1, -1, -1, -1, -1 };
static __thread uint32_t fd_chan[FDS];
static __thread struct imex_handle handles[HANDLES];
static __thread unsigned int nhandles;

static void random_handle(struct imex_handle *h, bool *local)
{
	*local = nhandles && chance(70);
	if (*local) {
		*h = handles[rnd(nhandles)];
		return;
	}
	uuid_of(h->node_uuid, rnd(UUIDS));
	h->id = chance(50) ? rnd(8) : rnd64();
}

static void fuzz_ioctl(void)
{
	uint8_t arg[4096];
	unsigned int slot = rnd(FDS);
	int fd = fds[slot], r;
	struct imex_channel_info info;
	struct imex_export_arg ex;
	struct imex_import_arg im;
	struct imex_revoked_arg rv;
	struct imex_revoked_entry ent[8];
	struct imex_handle h;
	struct pollfd pfd;
	char path[64];
	bool local;
	size_t i;
	unsigned long cmd;

	if (fd < 0 || chance(5)) {
		if (fd >= 0)
			close(fd);
		fd_chan[slot] = rnd(24);
		snprintf(path, sizeof(path), "/dev/" IMEX_DEVDIR "/channel%u",
			 fd_chan[slot]);
		fds[slot] = open(path, (chance(90) ? O_RDWR : O_RDONLY) | O_CLOEXEC);
		return;
	}
	stat_ioctl++;
	switch (rnd(9)) {
	case 0:
		memset(&info, 0xa5, sizeof(info));
		r = ioctl(fd, IMEX_IOC_CHANNEL_INFO, &info);
		if (!r && (info.channel_id != fd_chan[slot] || info.flags ||
			   info.reserved[0] || info.reserved[1] ||
			   info.reserved[2] || info.reserved[3] ||
			   !memchr(info.domain_name, '\0', sizeof(info.domain_name))))
			broken("CHANNEL_INFO on channel %u: id %u, flags %#x, reserved or name not clean",
			       fd_chan[slot], info.channel_id, info.flags);
		break;
	case 1:
		memset(&ex, 0, sizeof(ex));
		ex.desc_len = chance(80) ? 1 + rnd(IMEX_DESC_MAX) : any_u32();
		ex.flags = chance(90) ? 0 : any_u32();
		for (i = 0; i < sizeof(ex.desc); i++)
			ex.desc[i] = (uint8_t)rnd(256);
		r = ioctl(fd, IMEX_IOC_EXPORT, &ex);
		if (!r) {
			if (ex.desc_len < 1 || ex.desc_len > IMEX_DESC_MAX || ex.flags)
				broken("EXPORT accepted desc_len %u flags %#x",
				       ex.desc_len, ex.flags);
			handles[nhandles < HANDLES ? nhandles++ : rnd(HANDLES)] = ex.handle;
		}
		break;
	case 2:
		random_handle(&h, &local);
		r = ioctl(fd, IMEX_IOC_UNEXPORT, &h);
		break;
	case 3:
	case 4:
		memset(&im, 0, sizeof(im));
		random_handle(&im.handle, &local);
		/* A remote handle waits for the manager: keep that short. */
		im.timeout_ms = 1 + rnd(5);
		im.flags = chance(95) ? 0 : any_u32();
		im.reserved = chance(95) ? 0 : any_u32();
		r = ioctl(fd, IMEX_IOC_IMPORT, &im);
		if (!r && (im.desc_len < 1 || im.desc_len > IMEX_DESC_MAX))
			broken("IMPORT returned desc_len %u", im.desc_len);
		break;
	case 5:
		random_handle(&h, &local);
		r = ioctl(fd, IMEX_IOC_UNIMPORT, &h);
		break;
	case 6:
		memset(&rv, 0, sizeof(rv));
		rv.count = chance(80) ? rnd(9) : any_u32();
		rv.entries = (uintptr_t)ent;
		if (rv.count > 8)
			rv.entries = chance(50) ? 0 : 1;	/* refused, no write */
		r = ioctl(fd, IMEX_IOC_REVOKED, &rv);
		if (!r && rv.count > 8)
			broken("REVOKED wrote %u entries to a bad pointer", rv.count);
		break;
	case 7:
		pfd.fd = fd;
		pfd.events = POLLIN | POLLPRI | POLLOUT;
		r = poll(&pfd, 1, 0);
		break;
	default:
		/* Any command number and size, arguments random or unmapped. */
		/* Other types stay near ours: generic VFS ioctls could
		 * change the device node itself (FS_IOC_SETFLAGS). */
		cmd = _IOC(rnd(4), chance(85) ? IMEX_IOC_MAGIC : IMEX_IOC_MAGIC + 1, rnd(12),
			   chance(50) ? rnd(600) : rnd(1 << 14));
		for (i = 0; i < sizeof(arg); i++)
			arg[i] = (uint8_t)rnd(256);
		if (cmd == IMEX_IOC_IMPORT)
			((struct imex_import_arg *)arg)->timeout_ms = 1 + rnd(5);
		if (cmd == IMEX_IOC_REVOKED)
			((struct imex_revoked_arg *)arg)->entries = 0;
		r = ioctl(fd, cmd, chance(90) ? (void *)arg : (void *)8);
	}
	if (r == 0)
		stat_ioctl_ok++;
}

static void close_fds(void)
{
	for (unsigned int i = 0; i < FDS; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
	nhandles = 0;
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

/* ---- the state afterwards, read with libnl ----------------------------- */

struct seen_domain {
	char name[IMEX_NAME_MAX];
	uint8_t uuid[16];
	uint32_t state, channels, counted;
};

struct state {
	struct seen_domain d[IMEX_DOMAINS_MAX + 1];
	unsigned int nd, nchan;
	uint32_t domain_count, exports, imports;
	bool manager, intr;
	int parse_errors;
};

static int on_node(struct nl_msg *msg, void *arg)
{
	struct state *s = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, IMEX_A_MAX, NULL) ||
	    !tb[IMEX_A_DOMAIN_COUNT]) {
		s->parse_errors++;
		return NL_SKIP;
	}
	s->domain_count = nla_get_u32(tb[IMEX_A_DOMAIN_COUNT]);
	s->manager = tb[IMEX_A_MANAGER_PID] != NULL;
	if (tb[IMEX_A_EXPORT_COUNT])
		s->exports = nla_get_u32(tb[IMEX_A_EXPORT_COUNT]);
	if (tb[IMEX_A_IMPORT_COUNT])
		s->imports = nla_get_u32(tb[IMEX_A_IMPORT_COUNT]);
	return NL_OK;
}

static int on_domain(struct nl_msg *msg, void *arg)
{
	struct state *s = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];
	struct seen_domain *d;

	if (nlmsg_hdr(msg)->nlmsg_flags & NLM_F_DUMP_INTR)
		s->intr = true;
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, IMEX_A_MAX, NULL) ||
	    !tb[IMEX_A_DOMAIN_NAME] || !tb[IMEX_A_DOMAIN_UUID] ||
	    !tb[IMEX_A_DOMAIN_STATE] || !tb[IMEX_A_CHANNEL_COUNT] ||
	    s->nd > IMEX_DOMAINS_MAX) {
		printf("kfuzz: a domain in the dump lacks name, UUID, state or channel count: %d%d%d%d\n",
		       !!tb[IMEX_A_DOMAIN_NAME], !!tb[IMEX_A_DOMAIN_UUID],
		       !!tb[IMEX_A_DOMAIN_STATE], !!tb[IMEX_A_CHANNEL_COUNT]);
		s->parse_errors++;
		return NL_SKIP;
	}
	d = &s->d[s->nd++];
	memset(d, 0, sizeof(*d));
	nla_strlcpy(d->name, tb[IMEX_A_DOMAIN_NAME], sizeof(d->name));
	nla_memcpy(d->uuid, tb[IMEX_A_DOMAIN_UUID], 16);
	d->state = nla_get_u32(tb[IMEX_A_DOMAIN_STATE]);
	d->channels = nla_get_u32(tb[IMEX_A_CHANNEL_COUNT]);
	return NL_OK;
}

static int on_channel(struct nl_msg *msg, void *arg)
{
	struct state *s = arg;
	struct nlattr *tb[IMEX_A_MAX + 1];
	char name[IMEX_NAME_MAX];
	uint8_t uuid[16];
	unsigned int i;

	if (nlmsg_hdr(msg)->nlmsg_flags & NLM_F_DUMP_INTR)
		s->intr = true;
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, IMEX_A_MAX, NULL) ||
	    !tb[IMEX_A_CHANNEL_ID] || !tb[IMEX_A_DOMAIN_NAME] ||
	    !tb[IMEX_A_DOMAIN_UUID] || !tb[IMEX_A_CHANNEL_STATE]) {
		printf("kfuzz: a channel in the dump lacks id, domain name, UUID or state: %d%d%d%d\n",
		       !!tb[IMEX_A_CHANNEL_ID], !!tb[IMEX_A_DOMAIN_NAME],
		       !!tb[IMEX_A_DOMAIN_UUID], !!tb[IMEX_A_CHANNEL_STATE]);
		s->parse_errors++;
		return NL_SKIP;
	}
	s->nchan++;
	nla_strlcpy(name, tb[IMEX_A_DOMAIN_NAME], sizeof(name));
	nla_memcpy(uuid, tb[IMEX_A_DOMAIN_UUID], 16);
	for (i = 0; i < s->nd; i++)
		if (!strcmp(s->d[i].name, name))
			break;
	if (i == s->nd)
		broken("channel %u belongs to domain '%s', which does not exist",
		       nla_get_u32(tb[IMEX_A_CHANNEL_ID]), name);
	if (memcmp(uuid, s->d[i].uuid, 16))
		broken("channel %u: domain '%s' with another UUID",
		       nla_get_u32(tb[IMEX_A_CHANNEL_ID]), name);
	if (nla_get_u32(tb[IMEX_A_CHANNEL_STATE]) != IMEX_CHANNEL_GRANTED)
		broken("channel %u is still reserved with no manager attached",
		       nla_get_u32(tb[IMEX_A_CHANNEL_ID]));
	s->d[i].counted++;
	return NL_OK;
}

static void query(struct nl_sock *sk, uint8_t cmd, int flags,
		  nl_recvmsg_msg_cb_t cb, struct state *s)
{
	struct nl_msg *msg = nlmsg_alloc();
	int r;

	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0,
				 flags, cmd, IMEX_GENL_VERSION))
		die("out of memory");
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, cb, s);
	r = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (r >= 0)
		r = nl_recvmsgs_default(sk);
	if (r < 0)
		broken("command %u after fuzzing: %s", cmd, nl_geterror(r));
}

static void check_state(void)
{
	static struct state s;
	struct nl_sock *sk = nl_socket_alloc();
	unsigned int i, j, tries;

	if (!sk || genl_connect(sk))
		die("cannot open a netlink socket");
	nl_socket_set_buffer_size(sk, 1 << 20, 1 << 20);
	nl_socket_set_msg_buf_size(sk, 1 << 20);
	/* A doit's reply ends a read; an ack after it would end the next. */
	nl_socket_disable_auto_ack(sk);
	/* A dump that raced a change is read again. */
	for (tries = 0; tries < 5; tries++) {
		memset(&s, 0, sizeof(s));
		query(sk, IMEX_CMD_NODE_GET, 0, on_node, &s);
		query(sk, IMEX_CMD_DOMAIN_GET, NLM_F_DUMP, on_domain, &s);
		query(sk, IMEX_CMD_CHANNEL_GET, NLM_F_DUMP, on_channel, &s);
		if (!s.intr)
			break;
	}
	nl_socket_free(sk);
	if (s.parse_errors)
		broken("%d replies lack their attributes", s.parse_errors);
	if (s.manager)
		broken("a manager is still attached after its socket closed");
	if (s.exports || s.imports)
		broken("%u exports, %u imports left with every fd closed",
		       s.exports, s.imports);
	if (s.domain_count != s.nd)
		broken("NODE_GET counts %u domains, the dump has %u",
		       s.domain_count, s.nd);
	for (i = 0; i < s.nd; i++) {
		struct seen_domain *d = &s.d[i];

		for (j = 0; j < nmade && strcmp(made[j], d->name); j++)
			;
		if (j == nmade)
			broken("domain '%s' exists, but no manager set it",
			       d->name);
		if (d->state != IMEX_DOMAIN_DOWN)
			broken("domain '%s' is in state %u with no manager",
			       d->name, d->state);
		if (d->channels != d->counted)
			broken("domain '%s' counts %u channels, the dump has %u",
			       d->name, d->channels, d->counted);
		for (j = 0; j < i; j++)
			if (!strcmp(s.d[j].name, d->name) ||
			    !memcmp(s.d[j].uuid, d->uuid, 16))
				broken("two domains named '%s' or with its UUID",
				       d->name);
	}
	printf("kfuzz: state consistent: %u domains, %u channels\n", s.nd, s.nchan);
}

static void node_info(void)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct nl_msg *msg;
	struct nlmsghdr *h;
	struct nlattr *tb[IMEX_A_MAX + 1];
	unsigned char *buf = NULL;
	struct sockaddr_nl who;
	int n;

	if (!sk || genl_connect(sk))
		die("cannot open a netlink socket");
	if (!family) {
		family = genl_ctrl_resolve(sk, IMEX_GENL_NAME);
		if (family < 0)
			die("no generic netlink family '%s': is imex loaded?", IMEX_GENL_NAME);
	}
	msg = nlmsg_alloc();
	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0,
				 IMEX_CMD_NODE_GET, IMEX_GENL_VERSION) ||
	    nl_send_auto(sk, msg) < 0)
		die("NODE_GET: cannot send");
	nlmsg_free(msg);
	n = nl_recv(sk, &who, &buf, NULL);
	h = (struct nlmsghdr *)buf;
	if (n <= 0 || !nlmsg_ok(h, n) || h->nlmsg_type != family ||
	    genlmsg_parse(h, 0, tb, IMEX_A_MAX, NULL))
		die("NODE_GET: no answer");
	/* Absent while the node is unnamed: member lists then never match. */
	if (tb[IMEX_A_NODE_NAME])
		nla_strlcpy(node_name, tb[IMEX_A_NODE_NAME], sizeof(node_name));
	if (tb[IMEX_A_FABRIC_UUID])
		nla_memcpy(fabric_uuid, tb[IMEX_A_FABRIC_UUID], 16);
	if (tb[IMEX_A_FABRIC_PARTITION])
		fabric_part = nla_get_u32(tb[IMEX_A_FABRIC_PARTITION]);
	free(buf);
	nl_socket_free(sk);
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
