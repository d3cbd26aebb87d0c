// SPDX-License-Identifier: GPL-2.0
/* imex-nl: printing replies and events as KEY=VALUE lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <uuid/uuid.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/family.h>
#include <linux/netlink.h>
#include <linux/imex.h>

#include "imex_extack.h"
#include "imex-nl.h"
#include "failnth.h"

/* --- printing ---------------------------------------------------------------- */

static void print_uuid(const char *key, struct nlattr *a)
{
	char s[37];

	if (!a || nla_len(a) != 16)
		return;
	uuid_unparse_lower(nla_data(a), s);
	printf(" %s=%s", key, s);
}

static void print_u32(const char *key, struct nlattr *a)
{
	if (a)
		printf(" %s=%u", key, nla_get_u32(a));
}

static void print_str(const char *key, struct nlattr *a)
{
	if (a)
		printf(" %s=%s", key, (char *)nla_data(a));
}

int print_msg(struct nl_msg *m, void *arg)
{
	struct genlmsghdr *g = nlmsg_data(nlmsg_hdr(m));
	struct nlattr *tb[IMEX_A_MAX + 1];
	struct ctx *c = arg;

	if (genlmsg_parse(nlmsg_hdr(m), 0, tb, IMEX_A_MAX, NULL))
		return NL_SKIP;
	if (tb[IMEX_A_REQ_ID])
		c->req_id = nla_get_u64(tb[IMEX_A_REQ_ID]);
	if (c->quiet)
		return NL_OK;
	printf("cmd=%u", g->cmd);
	print_str("node", tb[IMEX_A_NODE_NAME]);
	print_uuid("node_uuid", tb[IMEX_A_NODE_UUID]);
	print_u32("max_channels", tb[IMEX_A_MAX_CHANNELS]);
	if (!tb[IMEX_A_CHANNEL_ID])	/* channels say devnum= instead */
		print_u32("major", tb[IMEX_A_CHRDEV_MAJOR]);
	print_u32("manager_pid", tb[IMEX_A_MANAGER_PID]);
	print_u32("domains", tb[IMEX_A_DOMAIN_COUNT]);
	print_str("name", tb[IMEX_A_DOMAIN_NAME]);
	print_uuid("uuid", tb[IMEX_A_DOMAIN_UUID]);
	print_uuid("fabric", tb[IMEX_A_FABRIC_UUID]);
	print_u32("partition", tb[IMEX_A_FABRIC_PARTITION]);
	print_u32("state", tb[IMEX_A_DOMAIN_STATE]);
	print_u32("members", tb[IMEX_A_MEMBER_COUNT]);
	print_u32("self", tb[IMEX_A_MEMBER_SELF]);
	print_u32("nchannels", tb[IMEX_A_CHANNEL_COUNT]);
	/* Only when set: a domain made by hand has 0. */
	if (tb[IMEX_A_DOMAIN_GENERATION] &&
	    nla_get_u64(tb[IMEX_A_DOMAIN_GENERATION]))
		printf(" setgen=%" PRIu64,
		       nla_get_u64(tb[IMEX_A_DOMAIN_GENERATION]));
	print_u32("channel", tb[IMEX_A_CHANNEL_ID]);
	print_u32("chstate", tb[IMEX_A_CHANNEL_STATE]);
	print_u32("uid", tb[IMEX_A_CHANNEL_UID]);
	print_u32("gid", tb[IMEX_A_CHANNEL_GID]);
	if (tb[IMEX_A_CHANNEL_MODE])
		printf(" mode=%04o", nla_get_u32(tb[IMEX_A_CHANNEL_MODE]));
	print_u32("open", tb[IMEX_A_CHANNEL_OPEN_COUNT]);
	if (tb[IMEX_A_CHANNEL_MINOR] && tb[IMEX_A_CHRDEV_MAJOR])
		printf(" devnum=%u:%u", nla_get_u32(tb[IMEX_A_CHRDEV_MAJOR]),
		       nla_get_u32(tb[IMEX_A_CHANNEL_MINOR]));
	if (tb[IMEX_A_REQ_ID])
		printf(" req=%" PRIu64, nla_get_u64(tb[IMEX_A_REQ_ID]));
	print_u32("reqcmd", tb[IMEX_A_REQ_CMD]);
	print_u32("status", tb[IMEX_A_REQ_STATUS]);
	print_str("message", tb[IMEX_A_REQ_MESSAGE]);
	print_u32("exports", tb[IMEX_A_EXPORT_COUNT]);
	print_u32("imports", tb[IMEX_A_IMPORT_COUNT]);
	if (tb[IMEX_A_STATS]) {	/* the node's counters: whether they came */
		struct nlattr *st[IMEX_A_STATS_MAX + 1];

		if (!nla_parse_nested(st, IMEX_A_STATS_MAX, tb[IMEX_A_STATS], NULL) &&
		    st[IMEX_A_STATS_IMPORTS])
			printf(" stats_imports=%" PRIu64,
			       nla_get_u64(st[IMEX_A_STATS_IMPORTS]));
	}
	if (g->cmd == IMEX_CMD_IMPORTS_REVOKED)
		print_u32("revoke_reason", tb[IMEX_A_REVOKE_REASON]);
	if (tb[IMEX_A_IMPORT_ID])
		printf(" import_id=%" PRIu64, nla_get_u64(tb[IMEX_A_IMPORT_ID]));
	print_uuid("handle_node", tb[IMEX_A_HANDLE_NODE]);
	if (tb[IMEX_A_HANDLE_ID])
		printf(" handle_id=%" PRIu64, nla_get_u64(tb[IMEX_A_HANDLE_ID]));
	if (tb[IMEX_A_DESC])
		printf(" desc=%.*s", nla_len(tb[IMEX_A_DESC]),
		       (char *)nla_data(tb[IMEX_A_DESC]));
	if (tb[IMEX_A_CHANNEL_IDS]) {
		uint32_t *ids = nla_data(tb[IMEX_A_CHANNEL_IDS]);
		int n = nla_len(tb[IMEX_A_CHANNEL_IDS]) / 4;

		printf(" ids=");
		for (int i = 0; i < n; i++)
			printf("%s%u", i ? "," : "", ids[i]);
	}
	if (tb[IMEX_A_MEMBERS]) {
		struct nlattr *e, *mt[IMEX_A_MEMBER_MAX + 1];
		int rem;

		nla_for_each_nested(e, tb[IMEX_A_MEMBERS], rem) {
			if (nla_parse_nested(mt, IMEX_A_MEMBER_MAX, e, NULL))
				continue;
			printf(" member=%s", mt[IMEX_A_MEMBER_ENTRY_NAME] ?
			       (char *)nla_data(mt[IMEX_A_MEMBER_ENTRY_NAME]) : "?");
			if (mt[IMEX_A_MEMBER_ADDR])
				printf("@%s", (char *)nla_data(mt[IMEX_A_MEMBER_ADDR]));
			if (mt[IMEX_A_MEMBER_STATE])
				printf(":%u", nla_get_u32(mt[IMEX_A_MEMBER_STATE]));
			if (mt[IMEX_A_MEMBER_VIEW]) {
				unsigned char *v = nla_data(mt[IMEX_A_MEMBER_VIEW]);

				printf(":");
				for (int i = 0; i < nla_len(mt[IMEX_A_MEMBER_VIEW]); i++)
					printf("%u", v[i]);
			}
			/* Own tokens: member= stays as tests match it. */
			if (mt[IMEX_A_MEMBER_REASON] && mt[IMEX_A_MEMBER_ENTRY_NAME])
				printf(" why[%s]=\"%s\"",
				       (char *)nla_data(mt[IMEX_A_MEMBER_ENTRY_NAME]),
				       (char *)nla_data(mt[IMEX_A_MEMBER_REASON]));
			if (mt[IMEX_A_MEMBER_SINCE] && mt[IMEX_A_MEMBER_ENTRY_NAME])
				printf(" since[%s]=%" PRIu64,
				       (char *)nla_data(mt[IMEX_A_MEMBER_ENTRY_NAME]),
				       nla_get_u64(mt[IMEX_A_MEMBER_SINCE]));
		}
	}
	if (tb[IMEX_A_DOMAIN_REASON])
		printf(" reason=\"%s\"", (char *)nla_data(tb[IMEX_A_DOMAIN_REASON]));
	printf("\n");
	return NL_OK;
}
