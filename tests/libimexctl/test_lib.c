// SPDX-License-Identifier: GPL-2.0-only
/*
 * libimexctl without a kernel: error messages (the module missing, checks
 * made before anything is sent, the kernel's extended ack), parsing of the
 * module's replies and notifications, and the small helpers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>

#include "imex_extack.h"
#include "internal.h"
#include "test_util.h"

#define FAMILY 0x42

static int setup(void **state)
{
	struct imexctl *ctx;

	assert_int_equal(imexctl_new(&ctx), 0);
	*state = ctx;
	return 0;
}

static int teardown(void **state)
{
	imexctl_free(*state);
	return 0;
}

static bool module_loaded(struct imexctl *ctx)
{
	struct imexctl_node node;

	return imexctl_node_get(ctx, &node) != -ENODEV;
}

#define ASSERT_MSG(ctx, text) assert_non_null(strstr(imexctl_errmsg(ctx), text))

static void test_everything_fails_cleanly_when_the_module_is_not_loaded(void **state)
{
	struct imexctl *ctx = *state;
	struct imexctl_member_spec m = { "a", "a" };
	struct imexctl_domain_spec spec = { .name = "j", .members = &m, .n_members = 1 };
	struct imexctl_channel_change mode = { .set_mode = true, .mode = 0600 };
	uint8_t uuid[16] = { 1 };
	struct imexctl_domain *d = NULL, *list = NULL;
	struct imexctl_channel ch, *chs = NULL;
	struct imexctl_node node;
	uint32_t id = 1;
	char *json = NULL;
	size_t n;

	if (module_loaded(ctx))
		skip();	/* covered by the VM tests */

	assert_int_equal(imexctl_node_get(ctx, &node), -ENODEV);
	assert_string_equal(imexctl_errmsg(ctx),
			    "the imex kernel module is not loaded: load it with 'imexctl module load'");
	assert_int_equal(imexctl_node_set_fabric(ctx, uuid, 1), -ENODEV);
	assert_int_equal(imexctl_node_set_name(ctx, "n1"), -ENODEV);
	assert_int_equal(imexctl_domain_list(ctx, &list, &n), -ENODEV);
	assert_int_equal(imexctl_domain_get(ctx, "j", &d), -ENODEV);
	assert_int_equal(imexctl_domain_create(ctx, &spec, 1000), -ENODEV);
	assert_int_equal(imexctl_domain_delete(ctx, "j", 1000), -ENODEV);
	assert_int_equal(imexctl_member_evict(ctx, "j", "a", 1000), -ENODEV);
	assert_int_equal(imexctl_member_replace(ctx, "j", "a", "b", 1000), -ENODEV);
	assert_int_equal(imexctl_node_join(ctx, "n2", "h2:7777", 1000), -ENODEV);
	assert_int_equal(imexctl_node_leave(ctx, "n2", 1000), -ENODEV);
	assert_int_equal(imexctl_domain_wait(ctx, "j", IMEXCTL_DOMAIN_READY, 1000, NULL), -ENODEV);
	assert_int_equal(imexctl_channel_list(ctx, NULL, &chs, &n), -ENODEV);
	assert_int_equal(imexctl_channel_get(ctx, 1, &ch), -ENODEV);
	assert_int_equal(imexctl_channel_set(ctx, NULL, 1, &mode), -ENODEV);
	assert_int_equal(imexctl_channel_alloc(ctx, "j", 1, NULL, 0, 1000, NULL, NULL), -ENODEV);
	assert_int_equal(imexctl_channel_free(ctx, "j", &id, 1, 1000), -ENODEV);
	assert_int_equal(imexctl_cdi_spec(ctx, "j", NULL, 0, NULL, &json), -ENODEV);
	ASSERT_MSG(ctx, "imexctl module load");
	assert_null(d);
	assert_null(json);
}

static void test_module_status_and_unload_when_not_loaded(void **state)
{
	struct imexctl *ctx = *state;
	struct imexctl_module_status st;

	if (module_loaded(ctx))
		skip();
	assert_int_equal(imexctl_module_status(ctx, &st), 0);
	assert_false(st.loaded);
	assert_int_equal(st.refcount, -1);
	/* Idempotent: nothing to unload is success. */
	assert_int_equal(imexctl_module_unload(ctx), 0);
}

static void test_module_load_refuses_bad_parameters_and_files(void **state)
{
	struct imexctl *ctx = *state;
	struct imexctl_module_params p = { .node_name = "bad name" };

	assert_int_equal(imexctl_module_load(ctx, &p), -EINVAL);
	ASSERT_MSG(ctx, "invalid node name 'bad name'");
	p = (struct imexctl_module_params){ .max_channels = IMEXCTL_CHANNELS_MAX + 1 };
	assert_int_equal(imexctl_module_load(ctx, &p), -EINVAL);
	ASSERT_MSG(ctx, "max_channels");
	p = (struct imexctl_module_params){ .path = "/nonexistent/imex.ko" };
	assert_true(imexctl_module_load(ctx, &p) < 0);
	ASSERT_MSG(ctx, "/nonexistent/imex.ko");
}

static void test_requests_are_checked_before_anything_is_sent(void **state)
{
	struct imexctl *ctx = *state;
	struct imexctl_member_spec two[] = { { "a", "h1" }, { "a", "h2" } };
	static char longaddr[IMEXCTL_ADDR_MAX + 1];
	struct imexctl_member_spec longer = { "a", longaddr };
	struct imexctl_domain_spec spec = { .name = "j", .members = two, .n_members = 2 };
	struct imexctl_channel_change none = { 0 }, wide = { .set_mode = true, .mode = 01777 };
	uint32_t big = IMEXCTL_CHANNELS_MAX;
	struct imexctl_domain *d = NULL;

	assert_int_equal(imexctl_domain_create(ctx, &spec, 0), -EINVAL);
	ASSERT_MSG(ctx, "member a is listed twice");
	/* No address is fine (NODES_FILE's); a too long one is not. */
	memset(longaddr, 'h', IMEXCTL_ADDR_MAX);
	spec.members = &longer;
	spec.n_members = 1;
	assert_int_equal(imexctl_domain_create(ctx, &spec, 0), -EINVAL);
	ASSERT_MSG(ctx, "address is not shorter than 256 characters");
	spec.n_members = 0;
	assert_int_equal(imexctl_domain_create(ctx, &spec, 0), -EINVAL);
	ASSERT_MSG(ctx, "between 1 and 160 members");
	spec = (struct imexctl_domain_spec){ .name = "-j", .members = two, .n_members = 1 };
	assert_int_equal(imexctl_domain_create(ctx, &spec, 0), -EINVAL);
	ASSERT_MSG(ctx, "invalid domain name '-j'");
	spec.name = "j";
	spec.set_mode = true;
	spec.mode = 01000;
	assert_int_equal(imexctl_domain_create(ctx, &spec, 0), -EINVAL);
	ASSERT_MSG(ctx, "0777");
	assert_int_equal(imexctl_domain_create(ctx, NULL, 0), -EINVAL);
	assert_int_equal(imexctl_domain_get(ctx, "a b", &d), -EINVAL);
	assert_int_equal(imexctl_domain_delete(ctx, NULL, 0), -EINVAL);
	assert_int_equal(imexctl_member_evict(ctx, "j", "", 0), -EINVAL);
	assert_int_equal(imexctl_member_replace(ctx, "j", "a", "b c", 0), -EINVAL);
	ASSERT_MSG(ctx, "invalid new member name 'b c'");
	assert_int_equal(imexctl_member_replace(ctx, "j", NULL, "b", 0), -EINVAL);
	ASSERT_MSG(ctx, "invalid member name ''");
	assert_int_equal(imexctl_member_replace(ctx, "-j", "a", "b", 0), -EINVAL);
	assert_int_equal(imexctl_node_join(ctx, "", NULL, 0), -EINVAL);
	ASSERT_MSG(ctx, "invalid node name ''");
	assert_int_equal(imexctl_node_join(ctx, "n/2", "h2", 0), -EINVAL);
	ASSERT_MSG(ctx, "invalid node name 'n/2'");
	assert_int_equal(imexctl_node_join(ctx, "n2", "h 2", 0), -EINVAL);
	ASSERT_MSG(ctx, "give host[:port], printable, without spaces");
	assert_int_equal(imexctl_node_join(ctx, "n2", longaddr, 0), -EINVAL);
	ASSERT_MSG(ctx, "at most 255 characters");
	assert_int_equal(imexctl_node_leave(ctx, NULL, 0), -EINVAL);
	ASSERT_MSG(ctx, "invalid node name");
	assert_int_equal(imexctl_channel_set(ctx, NULL, 1, &none), -EINVAL);
	ASSERT_MSG(ctx, "nothing to change");
	assert_int_equal(imexctl_channel_set(ctx, NULL, 1, &wide), -EINVAL);
	assert_int_equal(imexctl_channel_set(ctx, "x y", 1, &wide), -EINVAL);
	assert_int_equal(imexctl_channel_alloc(ctx, "j", 0, NULL, 0, 0, NULL, NULL), -EINVAL);
	ASSERT_MSG(ctx, "ask for 1 to 4096 channels");
	assert_int_equal(imexctl_channel_alloc(ctx, "j", 1, &big, 1, 0, NULL, NULL), -EINVAL);
	ASSERT_MSG(ctx, "out of range");
	assert_int_equal(imexctl_channel_free(ctx, "j", NULL, 0, 0), -EINVAL);
	ASSERT_MSG(ctx, "name the channels");
	assert_int_equal(imexctl_domain_wait(ctx, "j", IMEXCTL_DOMAIN_DOWN, 0, NULL), -EINVAL);
	ASSERT_MSG(ctx, "'ready' or 'degraded'");
	assert_int_equal(imexctl_node_set_name(ctx, ""), -EINVAL);
	assert_int_equal(imexctl_node_set_fabric(ctx, NULL, 0), -EINVAL);
}

static void test_errmsg_is_cleared_by_a_successful_call(void **state)
{
	struct imexctl *ctx = *state;
	struct imexctl_cdi_channel ch = { .id = 0, .mode = 0600 };
	char *json = NULL;

	assert_int_equal(imexctl_channel_free(ctx, "j", NULL, 0, 0), -EINVAL);
	assert_string_not_equal(imexctl_errmsg(ctx), "");
	assert_int_equal(imexctl_cdi_spec_build(ctx, NULL, 1, &ch, 1, &json), 0);
	assert_string_equal(imexctl_errmsg(ctx), "");
	assert_string_equal(imexctl_errmsg(NULL), "no imexctl context");
	free(json);
}

static void test_kernel_refusals_become_sentences(void **state)
{
	struct imexctl *ctx = *state;

	assert_int_equal(imexctl_err_kernel(ctx, -ESRCH, NULL, "creating domain j"), -ESRCH);
	assert_string_equal(imexctl_errmsg(ctx),
			    "creating domain j: imexd is not running on this node: start it with 'systemctl start imexd'");
	assert_int_equal(imexctl_err_kernel(ctx, -EPERM, "", "x"), -EPERM);
	ASSERT_MSG(ctx, "CAP_SYS_ADMIN");
	assert_int_equal(imexctl_err_kernel(ctx, -EBUSY, "channel 3 is granted to domain k",
					    "creating domain j"), -EBUSY);
	assert_string_equal(imexctl_errmsg(ctx),
			    "creating domain j: channel 3 is granted to domain k");
	assert_true(ctx->extack);
	assert_int_equal(imexctl_err_kernel(ctx, -ENOTCONN, NULL, "x"), -ENOTCONN);
	ASSERT_MSG(ctx, "imexd detached");
	assert_false(ctx->extack);
}

/* An NLMSG_ERROR as the kernel builds it, with an NLMSGERR_ATTR_MSG TLV. */
static size_t build_ack(unsigned char *buf, size_t size, bool capped, const char *text)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct nlmsgerr *e = NLMSG_DATA(nlh);
	size_t payload = capped ? 0 : 8, off, tlen = text ? strlen(text) + 1 : 0;
	struct nlattr *a;

	memset(buf, 0, size);
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_flags = (text ? NLM_F_ACK_TLVS : 0) | (capped ? NLM_F_CAPPED : 0);
	e->error = -EBUSY;
	e->msg.nlmsg_len = (uint32_t)(sizeof(struct nlmsghdr) + 8);
	e->msg.nlmsg_type = FAMILY;
	off = NLMSG_SPACE(sizeof(*e)) + NLMSG_ALIGN(payload);
	if (text) {
		a = (struct nlattr *)(buf + off);
		a->nla_type = NLMSGERR_ATTR_MSG;
		a->nla_len = (uint16_t)(NLA_HDRLEN + tlen);
		memcpy((char *)a + NLA_HDRLEN, text, tlen);
		off += NLA_ALIGN(a->nla_len);
	}
	nlh->nlmsg_len = (uint32_t)off;
	return off;
}

static void test_extended_ack_text_is_found_capped_or_not(void **state)
{
	unsigned char buf[256] __attribute__((aligned(4)));
	char msg[IMEX_MESSAGE_MAX];
	size_t len;

	(void)state;
	build_ack(buf, sizeof(buf), false, "channel 3 is in use");
	imex_extack_msg((struct nlmsghdr *)buf, msg, sizeof(msg));
	assert_string_equal(msg, "channel 3 is in use");
	build_ack(buf, sizeof(buf), true, "domain j exists");
	imex_extack_msg((struct nlmsghdr *)buf, msg, sizeof(msg));
	assert_string_equal(msg, "domain j exists");
	build_ack(buf, sizeof(buf), true, NULL);
	imex_extack_msg((struct nlmsghdr *)buf, msg, sizeof(msg));
	assert_string_equal(msg, "");
	/* A small buffer truncates, never overflows. */
	build_ack(buf, sizeof(buf), false, "a rather long message from the kernel");
	imex_extack_msg((struct nlmsghdr *)buf, msg, 8);
	assert_string_equal(msg, "a rathe");
	/* Lengths that lie are ignored, not followed. */
	len = build_ack(buf, sizeof(buf), false, "x");
	((struct nlmsgerr *)NLMSG_DATA((struct nlmsghdr *)buf))->msg.nlmsg_len = 4000;
	imex_extack_msg((struct nlmsghdr *)buf, msg, sizeof(msg));
	assert_string_equal(msg, "");
	((struct nlmsghdr *)buf)->nlmsg_len = (uint32_t)len;
	((struct nlmsgerr *)NLMSG_DATA((struct nlmsghdr *)buf))->msg.nlmsg_len = 2;
	imex_extack_msg((struct nlmsghdr *)buf, msg, sizeof(msg));
	assert_string_equal(msg, "");
	((struct nlmsghdr *)buf)->nlmsg_len = 10;
	imex_extack_msg((struct nlmsghdr *)buf, msg, sizeof(msg));
	assert_string_equal(msg, "");
}

/* The TLVs themselves, for callers that want more than the text. */
static void test_extended_ack_tlvs_are_parsed_only_when_present(void **state)
{
	unsigned char buf[256] __attribute__((aligned(4)));
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];

	(void)state;
	build_ack(buf, sizeof(buf), false, "x");
	assert_int_equal(imex_extack_parse((struct nlmsghdr *)buf, tb), 0);
	assert_non_null(tb[NLMSGERR_ATTR_MSG]);
	assert_null(tb[NLMSGERR_ATTR_OFFS]);
	build_ack(buf, sizeof(buf), true, NULL);
	assert_int_equal(imex_extack_parse((struct nlmsghdr *)buf, tb), -1);
}

static struct nl_msg *genl_msg(uint8_t cmd, uint32_t seq)
{
	struct nl_msg *m = nlmsg_alloc_size(65536);

	assert_non_null(m);
	assert_non_null(genlmsg_put(m, 0, seq, FAMILY, 0, 0, cmd, IMEX_GENL_VERSION));
	return m;
}

static void put_member(struct nl_msg *m, int idx, const char *name, const char *addr,
		       uint32_t st, const uint8_t *view, size_t n_view)
{
	struct nlattr *e = nla_nest_start(m, idx);

	nla_put_string(m, IMEX_A_MEMBER_ENTRY_NAME, name);
	nla_put_string(m, IMEX_A_MEMBER_ADDR, addr);
	nla_put_u32(m, IMEX_A_MEMBER_STATE, st);
	if (view)
		nla_put(m, IMEX_A_MEMBER_VIEW, (int)n_view, view);
	nla_nest_end(m, e);
}

static void test_domain_reply_is_parsed_with_members_views_and_ids(void **state)
{
	static const uint8_t view_b[] = { IMEX_MEMBER_CONNECTED, IMEX_MEMBER_SELF,
					  IMEX_MEMBER_DISCONNECTED };
	const uint32_t ids[] = { 0, 1, 2, 3, 7 };
	uint8_t uuid[16], fab[16];
	struct imexctl_domain d;
	struct nlattr *arr;
	struct nl_msg *m = genl_msg(IMEX_CMD_DOMAIN_GET, 1);

	(void)state;
	memset(uuid, 0xab, sizeof(uuid));
	memset(fab, 0x11, sizeof(fab));
	nla_put_string(m, IMEX_A_DOMAIN_NAME, "job7");
	nla_put(m, IMEX_A_DOMAIN_UUID, 16, uuid);
	nla_put(m, IMEX_A_FABRIC_UUID, 16, fab);
	nla_put_u32(m, IMEX_A_FABRIC_PARTITION, 3);
	nla_put_u32(m, IMEX_A_DOMAIN_STATE, IMEX_DOMAIN_DEGRADED);
	nla_put_u32(m, IMEX_A_MEMBER_COUNT, 3);
	nla_put_u32(m, IMEX_A_CHANNEL_COUNT, 5);
	nla_put_u32(m, IMEX_A_MEMBER_SELF, 0);
	nla_put_u32(m, IMEX_A_GENERATION, 9);
	arr = nla_nest_start(m, IMEX_A_MEMBERS);
	put_member(m, 1, "a", "192.0.2.1:50000", IMEX_MEMBER_SELF, NULL, 0);
	put_member(m, 2, "b", "192.0.2.2", IMEX_MEMBER_CONNECTED, view_b, 3);
	put_member(m, 3, "c", "192.0.2.3", IMEX_MEMBER_NEVER_CONNECTED, NULL, 0);
	nla_nest_end(m, arr);
	nla_put(m, IMEX_A_CHANNEL_IDS, sizeof(ids), ids);

	assert_int_equal(imexctl_domain_parse(m, &d, true), 0);
	assert_string_equal(d.name, "job7");
	assert_memory_equal(d.uuid, uuid, 16);
	assert_true(d.has_fabric);
	assert_int_equal(d.fabric_partition, 3);
	assert_int_equal(d.state, IMEXCTL_DOMAIN_DEGRADED);
	assert_int_equal(d.member_self, 0);
	assert_int_equal(d.generation, 9);
	assert_int_equal(d.n_members, 3);
	assert_string_equal(d.members[1].addr, "192.0.2.2");
	assert_int_equal(d.members[2].state, IMEXCTL_MEMBER_NEVER_CONNECTED);
	assert_null(d.members[0].view);
	assert_int_equal(d.members[1].n_view, 3);
	assert_int_equal(d.members[1].view[2], IMEX_MEMBER_DISCONNECTED);
	assert_int_equal(d.n_channel_ids, 5);
	assert_int_equal(d.channel_ids[4], 7);
	imexctl_domain_clear(&d);

	/* Summary form: no members, no ids even if present. */
	assert_int_equal(imexctl_domain_parse(m, &d, false), 0);
	assert_null(d.members);
	assert_null(d.channel_ids);
	nlmsg_free(m);
}

/* Reasons and since come through the accessors, only for a parsed domain. */
static void test_domain_reasons_and_since_are_parsed(void **state)
{
	struct imexctl_domain d, copy, built = { .name = "x" };
	struct nlattr *arr, *e;
	struct nl_msg *m = genl_msg(IMEX_CMD_DOMAIN_GET, 1);

	(void)state;
	nla_put_string(m, IMEX_A_DOMAIN_NAME, "job7");
	nla_put_u32(m, IMEX_A_DOMAIN_STATE, IMEX_DOMAIN_DEGRADED);
	nla_put_string(m, IMEX_A_DOMAIN_REASON, "b disconnected: heartbeat lost");
	arr = nla_nest_start(m, IMEX_A_MEMBERS);
	put_member(m, 1, "a", "192.0.2.1", IMEX_MEMBER_SELF, NULL, 0);
	e = nla_nest_start(m, 2);
	nla_put_string(m, IMEX_A_MEMBER_ENTRY_NAME, "b");
	nla_put_u32(m, IMEX_A_MEMBER_STATE, IMEX_MEMBER_DISCONNECTED);
	nla_put_string(m, IMEX_A_MEMBER_REASON, "heartbeat lost");
	nla_put_u64(m, IMEX_A_MEMBER_SINCE, 1795000000123ULL);
	nla_nest_end(m, e);
	nla_nest_end(m, arr);

	assert_int_equal(imexctl_domain_parse(m, &d, true), 0);
	assert_string_equal(imexctl_domain_reason(&d), "b disconnected: heartbeat lost");
	assert_null(imexctl_member_reason(&d, 0));
	assert_int_equal(imexctl_member_since(&d, 0), 0);
	assert_string_equal(imexctl_member_reason(&d, 1), "heartbeat lost");
	assert_int_equal(imexctl_member_since(&d, 1), 1795000000123ULL);
	assert_null(imexctl_member_reason(&d, 2));	/* out of range */
	copy = d;	/* a copy shares the members, and the reasons */
	assert_string_equal(imexctl_member_reason(&copy, 1), "heartbeat lost");
	imexctl_domain_clear(&d);
	/* A struct the caller built, or a list entry, has none. */
	assert_null(imexctl_domain_reason(&built));
	assert_null(imexctl_member_reason(&built, 0));
	assert_null(imexctl_domain_reason(NULL));
	assert_int_equal(imexctl_domain_parse(m, &d, false), 0);
	assert_null(imexctl_domain_reason(&d));
	nlmsg_free(m);
}

static void test_malformed_replies_are_protocol_errors(void **state)
{
	struct imexctl_domain d;
	struct imexctl_channel c;
	struct nl_msg *m;

	(void)state;
	m = genl_msg(IMEX_CMD_DOMAIN_GET, 1);	/* no name */
	nla_put_u32(m, IMEX_A_DOMAIN_STATE, 1);
	assert_int_equal(imexctl_domain_parse(m, &d, true), -EPROTO);
	nlmsg_free(m);

	m = genl_msg(IMEX_CMD_DOMAIN_GET, 1);	/* ids not a u32 array */
	nla_put_string(m, IMEX_A_DOMAIN_NAME, "j");
	nla_put(m, IMEX_A_CHANNEL_IDS, 6, "abcdef");
	assert_int_equal(imexctl_domain_parse(m, &d, true), -EPROTO);
	assert_null(d.channel_ids);
	nlmsg_free(m);

	m = genl_msg(IMEX_CMD_DOMAIN_GET, 1);	/* short UUID */
	nla_put_string(m, IMEX_A_DOMAIN_NAME, "j");
	nla_put(m, IMEX_A_DOMAIN_UUID, 4, "abcd");
	assert_int_equal(imexctl_domain_parse(m, &d, true), -EPROTO);
	nlmsg_free(m);

	m = genl_msg(IMEX_CMD_CHANNEL_GET, 1);	/* no id */
	nla_put_string(m, IMEX_A_DOMAIN_NAME, "j");
	assert_int_equal(imexctl_channel_parse(m, &c), -EPROTO);
	nlmsg_free(m);

	m = genl_msg(IMEX_CMD_CHANNEL_GET, 1);	/* u32 too short */
	nla_put_u16(m, IMEX_A_CHANNEL_ID, 1);
	assert_int_equal(imexctl_channel_parse(m, &c), -EPROTO);
	nlmsg_free(m);
}

static void test_channel_and_node_replies_are_parsed(void **state)
{
	struct imexctl_channel c;
	struct imexctl_node n;
	uint8_t u[16] = { 9 };
	struct nl_msg *m = genl_msg(IMEX_CMD_CHANNEL_GET, 1);

	(void)state;
	nla_put_u32(m, IMEX_A_CHANNEL_ID, 12);
	nla_put_string(m, IMEX_A_DOMAIN_NAME, "job7");
	nla_put_u32(m, IMEX_A_CHANNEL_STATE, IMEX_CHANNEL_GRANTED);
	nla_put_u32(m, IMEX_A_CHANNEL_UID, 1000);
	nla_put_u32(m, IMEX_A_CHANNEL_GID, 100);
	nla_put_u32(m, IMEX_A_CHANNEL_MODE, 0660);
	nla_put_u32(m, IMEX_A_CHANNEL_OPEN_COUNT, 2);
	nla_put_u32(m, IMEX_A_CHANNEL_MINOR, 70001);
	assert_int_equal(imexctl_channel_parse(m, &c), 0);
	assert_int_equal(c.id, 12);
	assert_string_equal(c.domain, "job7");
	assert_int_equal(c.state, IMEXCTL_CHANNEL_GRANTED);
	assert_int_equal(c.mode, 0660);
	assert_int_equal(c.open_count, 2);
	assert_int_equal(c.minor, 70001);
	nlmsg_free(m);

	/* A module before per-grant numbers: the minor was the id. */
	m = genl_msg(IMEX_CMD_CHANNEL_GET, 1);
	nla_put_u32(m, IMEX_A_CHANNEL_ID, 12);
	assert_int_equal(imexctl_channel_parse(m, &c), 0);
	assert_int_equal(c.minor, 12);
	nlmsg_free(m);

	m = genl_msg(IMEX_CMD_NODE_GET, 1);
	nla_put_string(m, IMEX_A_NODE_NAME, "tray03");
	nla_put(m, IMEX_A_NODE_UUID, 16, u);
	nla_put_u32(m, IMEX_A_MAX_CHANNELS, 2048);
	nla_put_u32(m, IMEX_A_CHRDEV_MAJOR, 509);
	nla_put_u32(m, IMEX_A_DOMAIN_COUNT, 2);
	assert_int_equal(imexctl_node_parse(m, &n), 0);
	assert_string_equal(n.name, "tray03");
	assert_int_equal(n.uuid[0], 9);
	assert_false(n.has_fabric);	/* fabric absent: not set */
	assert_int_equal(n.manager_pid, 0);	/* absent: no imexd */
	assert_int_equal(n.max_channels, 2048);
	assert_int_equal(n.major, 509);
	nlmsg_free(m);
}

static void feed_req(struct imexctl_session *s, struct imexctl_req_state *st,
		     uint8_t cmd, uint32_t seq, uint64_t id, int status, const char *text)
{
	struct nl_msg *m = genl_msg(cmd, seq);

	nla_put_u64(m, IMEX_A_REQ_ID, id);
	if (status >= 0)
		nla_put_u32(m, IMEX_A_REQ_STATUS, (uint32_t)status);
	if (text)
		nla_put_string(m, IMEX_A_REQ_MESSAGE, text);
	imexctl_req_on_msg(s, m, st);
	nlmsg_free(m);
}

static void test_request_outcome_is_matched_by_id(void **state)
{
	struct imexctl_session s = { .seq = 42 };
	struct imexctl_req_state *st = calloc(1, sizeof(*st));

	(void)state;
	feed_req(&s, st, IMEX_CMD_REQ_DONE, 0, 6, 0, NULL);	/* someone else's */
	feed_req(&s, st, IMEX_CMD_DOMAIN_CREATE, 41, 99, -1, NULL);	/* not our seq */
	assert_false(st->have_id);
	feed_req(&s, st, IMEX_CMD_DOMAIN_CREATE, 42, 7, -1, NULL);	/* our reply */
	assert_true(st->have_id);
	assert_int_equal(st->id, 7);
	assert_false(st->finished);
	feed_req(&s, st, IMEX_CMD_REQ_DONE, 0, 8, EBUSY, "not ours");
	assert_false(st->finished);
	feed_req(&s, st, IMEX_CMD_REQ_DONE, 0, 7, 0, NULL);
	assert_true(st->finished);
	assert_int_equal(st->done.status, 0);
	imexctl_req_state_free(st);
}

static void test_request_outcome_may_overtake_the_reply(void **state)
{
	struct imexctl_session s = { .seq = 5 };
	struct imexctl_req_state *st = calloc(1, sizeof(*st));
	int i;

	(void)state;
	/* imexd was faster than the unicast reply carrying our id. */
	for (i = 0; i < 100; i++)	/* more than the ring holds */
		feed_req(&s, st, IMEX_CMD_REQ_DONE, 0, 1000 + (uint64_t)i, 0, NULL);
	feed_req(&s, st, IMEX_CMD_REQ_DONE, 0, 77, EXDEV, "fabric of node b differs");
	assert_false(st->finished);
	feed_req(&s, st, IMEX_CMD_DOMAIN_CREATE, 5, 77, -1, NULL);
	assert_true(st->finished);
	assert_int_equal(st->done.status, EXDEV);
	assert_string_equal(st->done.message, "fabric of node b differs");
	/* A duplicate DONE changes nothing. */
	feed_req(&s, st, IMEX_CMD_REQ_DONE, 0, 77, 0, NULL);
	assert_int_equal(st->done.status, EXDEV);
	imexctl_req_state_free(st);
}

/* A REQ_DONE with @len bytes of IMEX_A_CHANNEL_IDS from @ids (none if < 0). */
static void feed_done_ids(struct imexctl_session *s, struct imexctl_req_state *st,
			  uint64_t id, int status, const uint32_t *ids, int len)
{
	struct nl_msg *m = genl_msg(IMEX_CMD_REQ_DONE, 0);

	nla_put_u64(m, IMEX_A_REQ_ID, id);
	nla_put_u32(m, IMEX_A_REQ_STATUS, (uint32_t)status);
	if (len >= 0)
		nla_put(m, IMEX_A_CHANNEL_IDS, len, ids);
	imexctl_req_on_msg(s, m, st);
	nlmsg_free(m);
}

static void test_request_done_gives_exactly_its_channel_ids(void **state)
{
	const uint32_t theirs[] = { 1, 2 }, ours[] = { 9, 3, 5 };
	struct imexctl_session s = { .seq = 42 };
	struct imexctl_req_state *st = calloc(1, sizeof(*st));

	(void)state;
	st->want_ids = true;
	feed_req(&s, st, IMEX_CMD_CHANNEL_ALLOC, 42, 7, -1, NULL);
	assert_true(st->have_id);
	/* Another allocation on the same domain completes first. */
	feed_done_ids(&s, st, 8, 0, theirs, (int)sizeof(theirs));
	assert_false(st->finished);
	feed_done_ids(&s, st, 7, 0, ours, (int)sizeof(ours));
	assert_true(st->finished);
	assert_int_equal(st->done.ids_err, 0);
	assert_int_equal(st->done.n_ids, 3);
	assert_memory_equal(st->done.ids, ours, sizeof(ours));
	/* A later duplicate changes nothing (and leaks nothing). */
	feed_done_ids(&s, st, 7, 0, theirs, (int)sizeof(theirs));
	assert_int_equal(st->done.n_ids, 3);
	assert_memory_equal(st->done.ids, ours, sizeof(ours));
	imexctl_req_state_free(st);

	/* Absent or malformed ids are a protocol error, not "none". */
	st = calloc(1, sizeof(*st));
	st->want_ids = true;
	feed_req(&s, st, IMEX_CMD_CHANNEL_ALLOC, 42, 7, -1, NULL);
	feed_done_ids(&s, st, 7, 0, NULL, -1);
	assert_true(st->finished);
	assert_int_equal(st->done.ids_err, -EPROTO);
	assert_null(st->done.ids);
	imexctl_req_state_free(st);

	st = calloc(1, sizeof(*st));
	st->want_ids = true;
	feed_req(&s, st, IMEX_CMD_CHANNEL_ALLOC, 42, 7, -1, NULL);
	feed_done_ids(&s, st, 7, 0, ours, 6);
	assert_int_equal(st->done.ids_err, -EPROTO);
	assert_null(st->done.ids);
	assert_int_equal(st->done.n_ids, 0);
	imexctl_req_state_free(st);

	/* A refusal's ids, and ids nobody asked for, are not kept. */
	st = calloc(1, sizeof(*st));
	st->want_ids = true;
	feed_req(&s, st, IMEX_CMD_CHANNEL_ALLOC, 42, 7, -1, NULL);
	feed_done_ids(&s, st, 7, ENOSPC, ours, (int)sizeof(ours));
	assert_int_equal(st->done.status, ENOSPC);
	assert_null(st->done.ids);
	imexctl_req_state_free(st);

	st = calloc(1, sizeof(*st));
	feed_req(&s, st, IMEX_CMD_CHANNEL_FREE, 42, 7, -1, NULL);
	feed_done_ids(&s, st, 7, 0, ours, (int)sizeof(ours));
	assert_true(st->finished);
	assert_null(st->done.ids);
	imexctl_req_state_free(st);
}

static void test_early_done_keeps_its_ids(void **state)
{
	const uint32_t ours[] = { 11, 12 };
	struct imexctl_session s = { .seq = 5 };
	struct imexctl_req_state *st = calloc(1, sizeof(*st));
	uint32_t theirs[3];
	int i;

	(void)state;
	st->want_ids = true;
	/* Others' DONEs with ids, more than the ring holds: the overwritten
	 * entries' ids are freed (ASan reports a leak otherwise). */
	for (i = 0; i < 100; i++) {
		theirs[0] = theirs[1] = theirs[2] = 100 + (uint32_t)i;
		feed_done_ids(&s, st, 1000 + (uint64_t)i, 0, theirs,
			      (int)sizeof(theirs));
	}
	feed_done_ids(&s, st, 77, 0, ours, (int)sizeof(ours));
	for (i = 0; i < 10; i++)
		feed_done_ids(&s, st, 2000 + (uint64_t)i, 0, theirs,
			      (int)sizeof(theirs));
	assert_false(st->finished);
	feed_req(&s, st, IMEX_CMD_CHANNEL_ALLOC, 5, 77, -1, NULL);
	assert_true(st->finished);
	assert_int_equal(st->done.status, 0);
	assert_int_equal(st->done.ids_err, 0);
	assert_int_equal(st->done.n_ids, 2);
	assert_memory_equal(st->done.ids, ours, sizeof(ours));
	imexctl_req_state_free(st);
}

static void feed_dom(struct imexctl_wait_state *w, uint8_t cmd, const char *name,
		     uint8_t uuid_byte, int state, uint32_t gen)
{
	struct imexctl_session s = { .seq = 1 };
	struct nl_msg *m = genl_msg(cmd, 0);
	uint8_t uuid[16];

	memset(uuid, uuid_byte, sizeof(uuid));
	nla_put_string(m, IMEX_A_DOMAIN_NAME, name);
	nla_put(m, IMEX_A_DOMAIN_UUID, 16, uuid);
	if (state >= 0)
		nla_put_u32(m, IMEX_A_DOMAIN_STATE, (uint32_t)state);
	nla_put_u32(m, IMEX_A_GENERATION, gen);
	imexctl_wait_on_msg(&s, m, w);
	nlmsg_free(m);
}

static void test_wait_keeps_the_newest_domain_state(void **state)
{
	struct imexctl_wait_state w = { .name = "job7" };

	(void)state;
	feed_dom(&w, IMEX_CMD_DOMAIN_GET, "job7", 1, IMEX_DOMAIN_DEGRADED, 5);
	assert_true(w.exists);
	assert_int_equal(w.state, IMEX_DOMAIN_DEGRADED);
	/* A stale notification queued before the reply is ignored. */
	feed_dom(&w, IMEX_CMD_DOMAIN_SET_STATUS, "job7", 1, IMEX_DOMAIN_DOWN, 4);
	assert_int_equal(w.state, IMEX_DOMAIN_DEGRADED);
	/* Other domains are not ours. */
	feed_dom(&w, IMEX_CMD_DOMAIN_SET_STATUS, "job8", 1, IMEX_DOMAIN_READY, 50);
	assert_int_equal(w.state, IMEX_DOMAIN_DEGRADED);
	feed_dom(&w, IMEX_CMD_DOMAIN_SET_STATUS, "job7", 1, IMEX_DOMAIN_READY, 6);
	assert_int_equal(w.state, IMEX_DOMAIN_READY);
	/* Deleted, then created again (new uuid, generation restarts). */
	feed_dom(&w, IMEX_CMD_DOMAIN_DEL, "job7", 1, -1, 7);
	assert_false(w.exists);
	feed_dom(&w, IMEX_CMD_DOMAIN_NEW, "job7", 2, IMEX_DOMAIN_DOWN, 1);
	assert_true(w.exists);
	assert_int_equal(w.state, IMEX_DOMAIN_DOWN);
	/* Generations compare as serial numbers: they may wrap around. */
	feed_dom(&w, IMEX_CMD_DOMAIN_DEL, "job7", 2, -1, 2);
	feed_dom(&w, IMEX_CMD_DOMAIN_NEW, "job7", 3, IMEX_DOMAIN_DEGRADED, 0xfffffffe);
	feed_dom(&w, IMEX_CMD_DOMAIN_SET_STATUS, "job7", 3, IMEX_DOMAIN_READY, 1);
	assert_int_equal(w.state, IMEX_DOMAIN_READY);
	feed_dom(&w, IMEX_CMD_DOMAIN_SET_STATUS, "job7", 3, IMEX_DOMAIN_DOWN, 0xffffffff);
	assert_int_equal(w.state, IMEX_DOMAIN_READY);
}

static void test_uuids_parse_strictly_and_print_lower_case(void **state)
{
	static const char *const bad[] = {
		"", "4f8a1c2e-9b3d-4e5f-8a6b-7c8d9e0f1a2", "4f8a1c2e-9b3d-4e5f-8a6b-7c8d9e0f1a2bc",
		"4f8a1c2e9b3d-4e5f-8a6b-7c8d9e0f1a2b-", "4f8a1c2e-9b3d-4e5f-8a6b-7c8d9e0f1a2g",
		"4f8a1c2e-9b3d-4e5f+8a6b-7c8d9e0f1a2b", "{4f8a1c2e-9b3d-4e5f-8a6b-7c8d9e0f1a}",
	};
	char out[IMEXCTL_UUID_STR_LEN];
	uint8_t u[16];
	size_t i;

	(void)state;
	assert_int_equal(imexctl_uuid_parse("4F8A1C2E-9B3D-4E5F-8A6B-7C8D9E0F1A2B", u), 0);
	assert_int_equal(u[0], 0x4f);
	assert_int_equal(u[15], 0x2b);
	imexctl_uuid_format(u, out);
	assert_string_equal(out, "4f8a1c2e-9b3d-4e5f-8a6b-7c8d9e0f1a2b");
	assert_false(imexctl_uuid_is_null(u));
	memset(u, 0, sizeof(u));
	assert_true(imexctl_uuid_is_null(u));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(imexctl_uuid_parse(bad[i], u), -EINVAL);
	assert_int_equal(imexctl_uuid_parse(NULL, u), -EINVAL);
}

static void test_names_and_state_words(void **state)
{
	char name[80];

	(void)state;
	memset(name, 'x', sizeof(name));
	name[63] = '\0';
	assert_true(imexctl_name_valid(name));
	name[63] = 'x';
	name[64] = '\0';
	assert_false(imexctl_name_valid(name));
	assert_true(imexctl_name_valid("0a.b-c_d"));
	assert_false(imexctl_name_valid("a b"));
	assert_false(imexctl_name_valid(NULL));
	assert_string_equal(imexctl_domain_state_name(IMEXCTL_DOMAIN_READY), "ready");
	assert_string_equal(imexctl_domain_state_name(99), "unknown");
	assert_string_equal(imexctl_domain_state_name(0), "unknown");
	assert_string_equal(imexctl_member_state_name(IMEXCTL_MEMBER_NEVER_CONNECTED),
			    "never-connected");
	assert_int_equal(imexctl_member_state_letter(IMEXCTL_MEMBER_VERSION_MISMATCH), 'V');
	assert_int_equal(imexctl_member_state_letter(IMEXCTL_MEMBER_SELF), '-');
	assert_int_equal(imexctl_member_state_letter(200), '?');
	assert_string_equal(imexctl_channel_state_name(IMEXCTL_CHANNEL_RESERVED), "reserved");
}

static void test_proc_devices_gives_the_char_major(void **state)
{
	char *dir = make_tmpdir(), path[512];
	uint32_t major = 0;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/devices", dir);
	f = fopen(path, "w");
	fputs("Character devices:\n  1 mem\n 10 misc\n511 imex-channels2\n510 imex-channels\n"
	      "\nBlock devices:\n  8 sd\n259 imex-channels\n", f);
	fclose(f);
	assert_int_equal(imexctl_proc_devices_major(path, "imex-channels", &major), 0);
	assert_int_equal(major, 510);
	assert_int_equal(imexctl_proc_devices_major(path, "sd", &major), -ENOENT);
	assert_int_equal(imexctl_proc_devices_major("/nonexistent", "x", &major), -ENOENT);
	rm_tree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_everything_fails_cleanly_when_the_module_is_not_loaded,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_module_status_and_unload_when_not_loaded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_module_load_refuses_bad_parameters_and_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_requests_are_checked_before_anything_is_sent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errmsg_is_cleared_by_a_successful_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_refusals_become_sentences, setup, teardown),
		cmocka_unit_test(test_extended_ack_text_is_found_capped_or_not),
		cmocka_unit_test(test_extended_ack_tlvs_are_parsed_only_when_present),
		cmocka_unit_test(test_domain_reply_is_parsed_with_members_views_and_ids),
		cmocka_unit_test(test_domain_reasons_and_since_are_parsed),
		cmocka_unit_test(test_malformed_replies_are_protocol_errors),
		cmocka_unit_test(test_channel_and_node_replies_are_parsed),
		cmocka_unit_test(test_request_outcome_is_matched_by_id),
		cmocka_unit_test(test_request_outcome_may_overtake_the_reply),
		cmocka_unit_test(test_request_done_gives_exactly_its_channel_ids),
		cmocka_unit_test(test_early_done_keeps_its_ids),
		cmocka_unit_test(test_wait_keeps_the_newest_domain_state),
		cmocka_unit_test(test_uuids_parse_strictly_and_print_lower_case),
		cmocka_unit_test(test_names_and_state_words),
		cmocka_unit_test(test_proc_devices_gives_the_char_major),
	};

	return cmocka_run_group_tests_name("lib", tests, NULL, NULL);
}
