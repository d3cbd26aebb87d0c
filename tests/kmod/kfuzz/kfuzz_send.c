// SPDX-License-Identifier: GPL-2.0
/*
 * kfuzz: sending on the raw socket and waiting for the answer (checking
 * every upcall on the way), and the messages a manager sends: a domain set
 * as it sets one, and requests larger than an attribute can describe.
 */
#include "kfuzz.h"

/* ---- sending and waiting ----------------------------------------------- */

int open_raw(void)
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

/* Send @m as it is and learn the outcome; privileged rules on the result. */
int exchange(int fd, struct msg *m)
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
void malformed(int fd, struct msg *m)
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
__thread uint64_t change_id = 1000;

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

void scenario(int fd)
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
void big_request(int fd)
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
