// SPDX-License-Identifier: GPL-2.0
/*
 * kfuzz: the kernel's state after the run, read with libnl, must be one
 * that privileged calls could have made.
 */
#include "kfuzz.h"

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

void check_state(void)
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

void node_info(void)
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
