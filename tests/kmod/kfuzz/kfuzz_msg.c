// SPDX-License-Identifier: GPL-2.0
/*
 * kfuzz: building generic-netlink messages to the imex family by hand,
 * random and mutated, from the thread's random sequence.
 */
#include "kfuzz.h"

/* ---- building messages ------------------------------------------------- */

__thread struct bufs *bufs;

void bufs_get(void)
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

void bufs_put(void)
{
	free(bufs->fuzz.d);
	free(bufs->scenario.d);
	free(bufs->sync.d);
	free(bufs->ready.d);
	free(bufs->big.d);
	free(bufs);
	bufs = NULL;
}

void *put(struct msg *m, uint16_t type, const void *data, size_t len)
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

void put_u32(struct msg *m, uint16_t type, uint32_t v)
{
	put(m, type, &v, 4);
}

void put_u64(struct msg *m, uint16_t type, uint64_t v)
{
	put(m, type, &v, 8);
}

void put_str(struct msg *m, uint16_t type, const char *s)
{
	put(m, type, s, strlen(s) + 1);
}

size_t nest_start(struct msg *m, uint16_t type)
{
	size_t at = m->len;

	put(m, type | (chance(90) ? NLA_F_NESTED : 0), NULL, 0);
	return at;
}

void nest_end(struct msg *m, size_t at)
{
	struct nlattr *a = (struct nlattr *)(m->d + at);

	if (!m->overflow)
		a->nla_len = (uint16_t)(m->len - at);
}

/* Room for one more entry of at most @entry bytes in the nest at @at. */
bool nest_room(const struct msg *m, size_t at, size_t entry)
{
	return !m->overflow && m->len - at + entry <= 0xffff;
}

static const uint32_t interesting[] = {
	0, 1, 2, 3, 7, 0600, 0666, 0777, 01000, 4095, 4096, 65535, 65536,
	IMEX_CHANNELS_MAX - 1, IMEX_CHANNELS_MAX, 300000,
	300001, 0x7fffffff, 0x80000000, 0xffffffff,
};

uint32_t any_u32(void)
{
	if (chance(50))
		return interesting[rnd(sizeof(interesting) / sizeof(interesting[0]))];
	if (chance(50))
		return rnd(16);
	return (uint32_t)rnd64();
}

const char *const pool[NAMES] = { "d0", "d1", "d2", "fz.a-b_c", "x", "" };

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

void uuid_of(uint8_t *u, unsigned int i)
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

void put_channels(struct msg *m, uint16_t type)
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

bool readonly_cmd(uint8_t cmd)
{
	return cmd == IMEX_CMD_NODE_GET || cmd == IMEX_CMD_DOMAIN_GET ||
	       cmd == IMEX_CMD_CHANNEL_GET;
}

void start(struct msg *m, uint8_t cmd, uint16_t flags)
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

void finish(struct msg *m)
{
	((struct nlmsghdr *)m->d)->nlmsg_len = (uint32_t)m->len;
}

/* A random message for @cmd: mostly its own attributes, some others. */
void random_msg(struct msg *m, uint8_t cmd)
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
void mutate(struct msg *m)
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
