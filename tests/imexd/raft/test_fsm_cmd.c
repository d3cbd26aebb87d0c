// SPDX-License-Identifier: GPL-2.0
/*
 * test_fsm: what each command does and refuses (a refusal changes nothing),
 * and every bound on nodes, members, channels and domains.
 */
#include "test_fsm.h"

/* ---- commands ----------------------------------------------------------------- */

void test_node_set(void **state)
{
	struct tf *t = *state;
	const struct imexd_fsm_node *n;
	struct blob a, b;
	struct imexd_cmd c;

	cluster(t);
	assert_int_equal(imexd_fsm_node_count(t->fsm), 6);
	n = imexd_fsm_node(t->fsm, "a");
	assert_non_null(n);
	assert_int_equal(n->max_channels, 16);
	assert_memory_equal(n->fabric_uuid, FAB1, 16);
	/* The same report again (every start): nothing changes. */
	a = snap(t->fsm);
	ok(t, node_cmd("a", FAB1, 0, 16));
	b = snap(t->fsm);
	assert_same(a, b);
	free(a.p);
	free(b.p);
	/* A node no domain names may change. */
	ok(t, node_cmd("d", FAB2, 3, 32));
	assert_int_equal(imexd_fsm_node(t->fsm, "d")->partition, 3);
	ok(t, node_cmd("d", FAB1, 0, 16));

	ok(t, create_cmd("j", 1, "a,b", 1, NULL, 0));
	refused(t, node_cmd("a", FAB1, 0, 32), EBUSY,
		"node 'a' is a member of domain 'j': its max_channels cannot change until no domain names it");
	refused(t, node_cmd("b", FAB2, 0, 16), EBUSY, "its fabric identity cannot change");
	refused(t, node_cmd("b", FAB1, 1, 16), EBUSY, "its fabric identity cannot change");
	c = node_cmd("a", FAB1, 0, 16);
	c.u.node_set.uuid[15] ^= 1;
	refused(t, c, EBUSY, "its node UUID cannot change");
	refused(t, node_cmd("bad name", FAB1, 0, 16), EINVAL,
		"malformed command refused: node name is not");
	ok(t, delete_cmd("j"));
	ok(t, node_cmd("a", FAB1, 0, 32));
	assert_int_equal(imexd_fsm_node(t->fsm, "a")->max_channels, 32);
}

static struct imexd_cmd leave_cmd(const char *name)
{
	struct imexd_cmd c = { .type = IMEXD_CMD_NODE_LEAVE };

	snprintf(c.u.node.name, sizeof(c.u.node.name), "%s", name);
	return c;
}

/*
 * A leave's first table step marks the node leaving (refused while a
 * domain names it); a create naming it is then refused; its reports keep
 * the mark; a snapshot carries it; the second step drops the identity.
 */
void test_node_leave_marks_then_forgets(void **state)
{
	struct tf *t = *state;
	struct imexd_fsm *g = imexd_fsm_new();
	struct blob b;

	cluster(t);
	ok(t, create_cmd("j", 1, "a,b", 1, NULL, 0));
	refused(t, leave_cmd("b"), EBUSY,
		"node 'b' is a member of domain 'j': delete the domain or evict the node from it first; not removed");
	ok(t, leave_cmd("c"));
	assert_true(imexd_fsm_node(t->fsm, "c")->leaving);
	refused(t, create_cmd("k", 2, "a,c", 1, NULL, 0), EHOSTUNREACH,
		"node 'c' is leaving the NVLink domain");
	ok(t, node_cmd("c", FAB1, 0, 32));
	assert_true(imexd_fsm_node(t->fsm, "c")->leaving);
	b = snap(t->fsm);
	assert_int_equal(imexd_fsm_restore(g, t->index, b.p, b.n, NULL), 0);
	assert_true(imexd_fsm_node(g, "c")->leaving);
	assert_false(imexd_fsm_node(g, "d")->leaving);
	free(b.p);
	imexd_fsm_free(g);
	ok(t, leave_cmd("c"));
	assert_null(imexd_fsm_node(t->fsm, "c"));
	ok(t, leave_cmd("c"));	/* nothing left to do */
	/* Joined again: a fresh report, not leaving. */
	ok(t, node_cmd("c", FAB1, 0, 16));
	assert_false(imexd_fsm_node(t->fsm, "c")->leaving);
	ok(t, create_cmd("k", 2, "a,c", 1, NULL, 0));
}

void test_nodes_bound(void **state)
{
	struct tf *t = *state;
	char name[16];
	unsigned int i;

	for (i = 0; i < IMEXD_FSM_NODES_MAX; i++) {
		snprintf(name, sizeof(name), "n%04u", i);
		ok(t, node_cmd(name, FAB1, 0, 16));
	}
	assert_int_equal(imexd_fsm_node_count(t->fsm), IMEXD_FSM_NODES_MAX);
	refused(t, node_cmd("late", FAB1, 0, 16), ENOSPC,
		"the NVLink domain already has 1024 nodes, the most it may: node 'late' cannot join");
	/* Nodes already there still report, and change while unnamed. */
	ok(t, node_cmd("n0007", FAB1, 0, 16));
	ok(t, node_cmd("n0007", FAB1, 0, 64));
	assert_int_equal(imexd_fsm_node_count(t->fsm), IMEXD_FSM_NODES_MAX);
}

static void create_ok(struct tf *t, struct imexd_cmd c, const char *ids)
{
	struct imexd_fsm_result r;
	char name[IMEX_NAME_MAX];
	const struct imexd_def *d;
	uint32_t i;

	memcpy(name, c.u.create.name, sizeof(name));
	apply(t, &c, &r);
	if (r.error)
		fail_msg("refused (%d): %s", r.error, r.message);
	d = imexd_fsm_domain(t->fsm, name);
	assert_channels(d, ids);
	assert_channels(&r.def, ids);
	assert_true(imexd_def_equal(d, &r.def));
	assert_int_equal(d->generation, t->index);
	assert_int_equal(d->flags, 0);
	assert_int_equal(r.nids, d->nchannels);
	for (i = 0; i < r.nids; i++) {
		assert_int_equal(r.ids[i], d->channels[i].id);
		assert_int_equal(d->channels[i].uid, 1000);
		assert_int_equal(d->channels[i].mode, 0660);
	}
	imexd_fsm_result_free(&r);
}

void test_create_by_count_lowest_free_everywhere(void **state)
{
	struct tf *t = *state;
	const struct imexd_def *d;

	cluster(t);
	create_ok(t, create_cmd("d1", 1, "a,b", 2, NULL, 0), "0,1");
	create_ok(t, create_cmd("d2", 2, "b,c", 2, NULL, 0), "2,3");
	create_ok(t, create_cmd("d3", 3, "c,d", 3, NULL, 0), "0,1,4");
	create_ok(t, create_cmd("d4", 4, "a,d", 2, NULL, 0), "2,3");
	create_ok(t, create_cmd("d5", 5, "d,c,b,a", 1, NULL, 0), "5");
	create_ok(t, create_cmd("d6", 6, "b", 0, NULL, 0), "");
	d = imexd_fsm_domain(t->fsm, "d5");
	assert_memory_equal(d->fabric_uuid, FAB1, 16);
	assert_int_equal(d->partition, 0);
	assert_int_equal(d->nmembers, 4);
	assert_string_equal(d->members[0].name, "d");	/* order kept */
	assert_string_equal(d->members[0].addr, "d:1");
}

/* The same create again (forwarded again after its leader was lost):
 * answered with the domain as made, and nothing changes. */
void test_create_repeated(void **state)
{
	struct tf *t = *state;
	struct imexd_fsm_result r;
	const struct imexd_def *d;
	struct imexd_cmd c;
	uint64_t gen;

	cluster(t);
	create_ok(t, create_cmd("d1", 1, "a,b", 2, NULL, 0), "0,1");
	gen = imexd_fsm_domain(t->fsm, "d1")->generation;
	c = create_cmd("d1", 1, "b,a", 2, NULL, 0);
	apply(t, &c, &r);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.nids, 2);
	assert_int_equal(r.ids[0], 0);
	assert_int_equal(r.ids[1], 1);
	d = imexd_fsm_domain(t->fsm, "d1");
	assert_true(imexd_def_equal(d, &r.def));
	assert_int_equal(d->generation, gen);
	imexd_fsm_result_free(&r);
	/* Nothing else was taken: the next create gets channel 2. */
	create_ok(t, create_cmd("d2", 2, "a", 1, NULL, 0), "2");
}

void test_create_refusals(void **state)
{
	struct tf *t = *state;
	struct imexd_cmd c;

	cluster(t);
	ok(t, node_cmd("p1", FAB1, 1, 16));
	ok(t, node_cmd("e", FAB1, 0, 8));
	create_ok(t, create_cmd("d1", 1, "a,b", 0, (const uint32_t[]){ 1, 5 }, 2), "1,5");
	refused(t, create_cmd("d1", 9, "c", 1, NULL, 0), EEXIST,
		"domain 'd1' already exists");
	/* Its UUID with other members is another create. */
	refused(t, create_cmd("d1", 1, "a,c", 0, (const uint32_t[]){ 1, 5 }, 2),
		EEXIST, "domain 'd1' already exists");
	refused(t, create_cmd("d9", 1, "c", 1, NULL, 0), EEXIST,
		"domain UUID of 'd9' is already in use by domain 'd1'");
	refused(t, create_cmd("d9", 9, "a,q", 1, NULL, 0), EHOSTUNREACH,
		"node 'q' has not joined the NVLink domain: check that imexd runs there");
	refused(t, create_cmd("d9", 9, "a,z", 1, NULL, 0), EXDEV,
		"node 'z' has no fabric identity: set it there with 'imexctl node set-fabric'");
	refused(t, create_cmd("d9", 9, "a,x", 1, NULL, 0), EXDEV,
		"nodes 'a' and 'x' are not in one NVLink partition");
	refused(t, create_cmd("d9", 9, "a,p1", 1, NULL, 0), EXDEV,
		"nodes 'a' and 'p1' are not in one NVLink partition");
	refused(t, create_cmd("d9", 9, "c,b", 0, (const uint32_t[]){ 2, 5 }, 2),
		EADDRINUSE, "channel 5 belongs to domain 'd1' on node 'b'");
	refused(t, create_cmd("d9", 9, "c,a", 0, (const uint32_t[]){ 16 }, 1),
		ERANGE, "channel 16 is out of range: node 'c' has max_channels=16");
	refused(t, create_cmd("d9", 9, "a,e", 0, (const uint32_t[]){ 8 }, 1),
		ERANGE, "channel 8 is out of range: node 'e' has max_channels=8");
	refused(t, create_cmd("d9", 9, "e,c", 9, NULL, 0), ERANGE,
		"9 channels asked for; node 'e' has max_channels=8");
	refused(t, create_cmd("d9", 9, "c,b", 15, NULL, 0), ENOSPC,
		"15 channels asked for, but only 14 are free on every member of domain 'd9'");
	refused(t, create_cmd("bad/name", 9, "c", 1, NULL, 0), EINVAL,
		"malformed command refused: domain name is not");
	c = create_cmd("d9", 9, "c", 1, NULL, 0);
	c.u.create.ch.mode = 01000;
	refused(t, c, EINVAL, "channel mode above 0777");
	c = create_cmd("d9", 9, "c", 1, NULL, 0);
	c.u.create.nmembers = 0;
	refused(t, c, EINVAL, "a domain needs at least one member");
	refused(t, create_cmd("d9", 9, "c,c", 1, NULL, 0), EINVAL,
		"member listed twice");
	create_ok(t, create_cmd("d9", 9, "c,b", 14, NULL, 0),
		  "0,2,3,4,6,7,8,9,10,11,12,13,14,15");
}

void test_members_bound(void **state)
{
	struct tf *t = *state;
	char csv[IMEX_MEMBERS_MAX * 8], name[16];
	size_t n = 0;
	unsigned int i;

	for (i = 0; i <= IMEX_MEMBERS_MAX; i++) {
		snprintf(name, sizeof(name), "m%u", i);
		ok(t, node_cmd(name, FAB1, 0, 16));
		if (i < IMEX_MEMBERS_MAX)
			n += (size_t)snprintf(csv + n, sizeof(csv) - n, "%s%s",
					      i ? "," : "", name);
	}
	create_ok(t, create_cmd("full", 1, csv, 1, NULL, 0), "0");
	snprintf(csv + n, sizeof(csv) - n, ",m%d", IMEX_MEMBERS_MAX);
	refused(t, create_cmd("over", 2, csv, 1, NULL, 0), E2BIG,
		"161 members is more than the 160 a domain may have");
}

void test_channels_per_command_bound(void **state)
{
	uint32_t *ids = calloc(IMEX_CHANNEL_IDS_MAX + 1, sizeof(*ids));
	struct tf *t = *state;
	uint32_t i;

	assert_non_null(ids);
	for (i = 0; i <= IMEX_CHANNEL_IDS_MAX; i++)
		ids[i] = 20000 + i;
	ok(t, node_cmd("big", FAB1, 0, 40000));
	ok(t, create_cmd("by-count", 1, "big", IMEX_CHANNEL_IDS_MAX, NULL, 0));
	assert_int_equal(imexd_fsm_domain(t->fsm, "by-count")->nchannels,
			 IMEX_CHANNEL_IDS_MAX);
	ok(t, create_cmd("by-ids", 2, "big", 0, ids, IMEX_CHANNEL_IDS_MAX));
	refused(t, create_cmd("c1", 3, "big", IMEX_CHANNEL_IDS_MAX + 1, NULL, 0),
		E2BIG, "16001 channels in one request is more than the 16000 allowed: split it");
	refused(t, create_cmd("c2", 4, "big", 0, ids, IMEX_CHANNEL_IDS_MAX + 1),
		E2BIG, "16001 channels in one request is more than the 16000 allowed");
	refused(t, alloc_cmd("by-count", IMEX_CHANNEL_IDS_MAX + 1, NULL, 0),
		E2BIG, "16001 channels in one request");
	refused(t, alloc_cmd("by-count", 0, ids, IMEX_CHANNEL_IDS_MAX + 1),
		E2BIG, "16001 channels in one request");
	for (i = 0; i <= IMEX_CHANNEL_IDS_MAX; i++)
		ids[i] = i;
	refused(t, free_cmd("by-count", ids, IMEX_CHANNEL_IDS_MAX + 1),
		E2BIG, "16001 channels in one request");
	ok(t, free_cmd("by-count", ids, IMEX_CHANNEL_IDS_MAX));
	assert_int_equal(imexd_fsm_domain(t->fsm, "by-count")->nchannels, 0);
	free(ids);
}

void test_domains_per_node_bound(void **state)
{
	struct tf *t = *state;
	char name[16];
	unsigned int i;

	cluster(t);
	for (i = 0; i < IMEX_DOMAINS_MAX; i++) {
		snprintf(name, sizeof(name), "j%03u", i);
		ok(t, create_cmd(name, 100 + i, i % 2 ? "a,b" : "a", 0, NULL, 0));
	}
	refused(t, create_cmd("one-more", 1, "c,a", 0, NULL, 0), ENOSPC,
		"node 'a' already holds 256 domains, the most it may");
	ok(t, create_cmd("other", 1, "b,c", 0, NULL, 0));
	ok(t, delete_cmd("j000"));
	ok(t, create_cmd("one-more", 2, "c,a", 0, NULL, 0));
}

void test_alloc_and_free(void **state)
{
	struct tf *t = *state;
	struct imexd_fsm_result r;
	const struct imexd_def *d;
	struct imexd_cmd c;

	cluster(t);
	create_ok(t, create_cmd("d1", 1, "a,b", 0, (const uint32_t[]){ 0 }, 1), "0");
	create_ok(t, create_cmd("d2", 2, "b,c", 0, (const uint32_t[]){ 1 }, 1), "1");
	c = alloc_cmd("d1", 2, NULL, 0);
	apply(t, &c, &r);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.nids, 2);
	assert_int_equal(r.ids[0], 2);
	assert_int_equal(r.ids[1], 3);
	assert_channels(&r.def, "0,2,3");
	d = imexd_fsm_domain(t->fsm, "d1");
	assert_true(imexd_def_equal(d, &r.def));
	assert_int_equal(d->generation, t->index);
	assert_int_equal(d->channels[0].uid, 1000);	/* old ones keep theirs */
	assert_int_equal(d->channels[1].uid, 7);
	assert_int_equal(d->channels[1].gid, 8);
	assert_int_equal(d->channels[1].mode, 0600);
	imexd_fsm_result_free(&r);

	refused(t, alloc_cmd("d1", 0, (const uint32_t[]){ 0 }, 1), EEXIST,
		"channel 0 is already granted to domain 'd1'");
	refused(t, alloc_cmd("d1", 0, (const uint32_t[]){ 1 }, 1), EADDRINUSE,
		"channel 1 belongs to domain 'd2' on node 'b'");
	refused(t, alloc_cmd("nope", 1, NULL, 0), ENOENT,
		"no domain 'nope': see 'imexctl domain list'");
	refused(t, alloc_cmd("d1", 0, NULL, 0), EINVAL,
		"neither a channel count nor channel ids");
	refused(t, alloc_cmd("d1", 0, (const uint32_t[]){ 16 }, 1), ERANGE,
		"channel 16 is out of range");
	refused(t, alloc_cmd("d1", 13, NULL, 0), ENOSPC,
		"13 channels asked for, but only 12 are free on every member of domain 'd1'");
	refused(t, free_cmd("d1", (const uint32_t[]){ 1 }, 1), ENOENT,
		"channel 1 is not granted to domain 'd1'");
	refused(t, free_cmd("d1", (const uint32_t[]){ 0, 1 }, 2), ENOENT,
		"channel 1 is not granted to domain 'd1'");
	refused(t, free_cmd("nope", (const uint32_t[]){ 0 }, 1), ENOENT,
		"no domain 'nope'");

	c = free_cmd("d1", (const uint32_t[]){ 0, 3 }, 2);
	apply(t, &c, &r);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.nids, 2);
	assert_int_equal(r.ids[1], 3);
	assert_channels(&r.def, "2");
	assert_int_equal(imexd_fsm_domain(t->fsm, "d1")->generation, t->index);
	imexd_fsm_result_free(&r);
	/* What was freed on b is free for d2 now. */
	ok(t, alloc_cmd("d2", 0, (const uint32_t[]){ 0, 3 }, 2));
	assert_channels(imexd_fsm_domain(t->fsm, "d2"), "0,1,3");
}

void test_evict(void **state)
{
	struct tf *t = *state;
	struct imexd_fsm_result r;
	struct imexd_cmd c;
	size_t pos = 0;

	cluster(t);
	create_ok(t, create_cmd("d1", 1, "a,b,c", 0, (const uint32_t[]){ 4 }, 1), "4");
	refused(t, create_cmd("d2", 2, "c", 0, (const uint32_t[]){ 4 }, 1),
		EADDRINUSE, "channel 4 belongs to domain 'd1' on node 'c'");
	refused(t, evict_cmd("d1", "q"), ENOENT, "'q' is not a member of domain 'd1'");
	refused(t, evict_cmd("nope", "a"), ENOENT, "no domain 'nope'");
	c = evict_cmd("d1", "b");
	apply(t, &c, &r);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.def.nmembers, 2);
	assert_string_equal(r.def.members[0].name, "a");
	assert_string_equal(r.def.members[1].name, "c");
	assert_int_equal(r.def.generation, t->index);
	assert_true(imexd_def_equal(&r.def, imexd_fsm_domain(t->fsm, "d1")));
	imexd_fsm_result_free(&r);
	assert_null(imexd_fsm_domain_of(t->fsm, "b", &pos));
	/* The evicted node's channel 4 is free there now. */
	ok(t, create_cmd("d2", 2, "b", 0, (const uint32_t[]){ 4 }, 1));
	ok(t, evict_cmd("d1", "c"));
	refused(t, evict_cmd("d1", "a"), EINVAL,
		"'a' is the last member of domain 'd1': delete the domain instead");
}

/*
 * b leaves d1 and e takes its place, position and channels; a and c keep
 * theirs.  Every refusal changes nothing and says why.
 */
void test_replace(void **state)
{
	struct tf *t = *state;
	struct imexd_fsm_result r;
	struct imexd_cmd c;
	const struct imexd_def *d;
	size_t pos = 0;

	cluster(t);
	ok(t, node_cmd("e", FAB1, 0, 16));
	ok(t, node_cmd("p1", FAB1, 1, 16));
	ok(t, node_cmd("small", FAB1, 0, 4));
	ok(t, node_cmd("gone", FAB1, 0, 16));
	ok(t, (struct imexd_cmd){ .type = IMEXD_CMD_NODE_LEAVE,
				  .u.node.name = "gone" });
	create_ok(t, create_cmd("d1", 1, "a,b,c", 0, (const uint32_t[]){ 4, 6 }, 2), "4,6");
	create_ok(t, create_cmd("d2", 2, "d", 0, (const uint32_t[]){ 6 }, 1), "6");

	refused(t, replace_cmd("nope", "b", "e"), ENOENT, "no domain 'nope'");
	refused(t, replace_cmd("d1", "b", "b"), EINVAL,
		"'b' cannot replace itself in domain 'd1'");
	refused(t, replace_cmd("d1", "q", "e"), ENOENT,
		"'q' is not a member of domain 'd1'");
	refused(t, replace_cmd("d1", "b", "c"), EEXIST,
		"'c' is a member of domain 'd1' already");
	refused(t, replace_cmd("d1", "b", "w"), EINVAL,
		"node 'w' is not in the group");
	refused(t, replace_cmd("d1", "b", "gone"), EHOSTUNREACH,
		"node 'gone' is leaving the NVLink domain");
	refused(t, replace_cmd("d1", "b", "z"), EXDEV,
		"node 'z' has no fabric identity");
	refused(t, replace_cmd("d1", "b", "x"), EXDEV,
		"node 'x' is in another NVLink domain (fabric UUID) than domain 'd1'");
	refused(t, replace_cmd("d1", "b", "p1"), EXDEV,
		"node 'p1' is in NVLink partition 1, domain 'd1' in partition 0: pick a spare of partition 0");
	refused(t, replace_cmd("d1", "b", "d"), EADDRINUSE,
		"channel 6 is held on node 'd' by domain 'd2': free it there, or pick another spare");
	refused(t, replace_cmd("d1", "b", "small"), ERANGE,
		"channel 4 of domain 'd1' is out of range on node 'small' (max_channels=4)");

	c = replace_cmd("d1", "b", "e");
	apply(t, &c, &r);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.def.nmembers, 3);
	assert_string_equal(r.def.members[0].name, "a");
	assert_string_equal(r.def.members[1].name, "e");
	assert_string_equal(r.def.members[2].name, "c");
	assert_string_equal(r.def.members[1].addr, "");
	assert_string_equal(r.def.members[2].addr, "c:1");
	assert_int_equal(r.def.generation, t->index);
	assert_int_equal(r.nids, 0);
	assert_channels(&r.def, "4,6");
	d = imexd_fsm_domain(t->fsm, "d1");
	assert_true(imexd_def_equal(&r.def, d));
	assert_int_equal(d->channels[0].uid, 1000);
	assert_int_equal(d->channels[0].mode, 0660);
	imexd_fsm_result_free(&r);
	assert_null(imexd_fsm_domain_of(t->fsm, "b", &pos));
	pos = 0;
	assert_ptr_equal(imexd_fsm_domain_of(t->fsm, "e", &pos), d);
	/* Done once: the same request again (forwarded again after its
	 * leader was lost) finds b gone and e there, and answers the domain
	 * as it is, changing nothing. */
	{
		struct blob before = snap(t->fsm), after;

		c = replace_cmd("d1", "b", "e");
		apply(t, &c, &r);
		assert_int_equal(r.error, 0);
		assert_true(imexd_def_equal(&r.def, d));
		imexd_fsm_result_free(&r);
		after = snap(t->fsm);
		assert_same(before, after);
		free(before.p);
		free(after.p);
	}
	/* b's channels are free there; e's are held by d1. */
	ok(t, create_cmd("d3", 3, "b", 0, (const uint32_t[]){ 4 }, 1));
	refused(t, create_cmd("d4", 4, "e", 0, (const uint32_t[]){ 4 }, 1),
		EADDRINUSE, "channel 4 belongs to domain 'd1' on node 'e'");
	/* A one-member domain's member can be replaced too. */
	ok(t, replace_cmd("d2", "d", "b"));
	refused(t, replace_cmd("d1", "a", "b"), EADDRINUSE,
		"channel 6 is held on node 'b' by domain 'd2'");
}

/* A node holding IMEX_DOMAINS_MAX domains takes no place in another. */
void test_replace_domains_per_node_bound(void **state)
{
	struct tf *t = *state;
	char name[16];
	unsigned int i;

	cluster(t);
	ok(t, create_cmd("big", 1, "a,b", 1, NULL, 0));
	for (i = 0; i < IMEX_DOMAINS_MAX; i++) {
		snprintf(name, sizeof(name), "c%u", i);
		ok(t, create_cmd(name, 10 + i, "c", 0, NULL, 0));
	}
	refused(t, replace_cmd("big", "b", "c"), ENOSPC,
		"node 'c' already holds 256 domains, the most it may");
	ok(t, delete_cmd("c0"));
	ok(t, replace_cmd("big", "b", "c"));
}

void test_delete(void **state)
{
	struct tf *t = *state;
	struct imexd_fsm_result r;
	struct imexd_cmd c;

	cluster(t);
	create_ok(t, create_cmd("d1", 1, "a,b", 0, (const uint32_t[]){ 3 }, 1), "3");
	refused(t, delete_cmd("nope"), ENOENT,
		"no domain 'nope': see 'imexctl domain list'");
	c = delete_cmd("d1");
	apply(t, &c, &r);
	assert_int_equal(r.error, 0);
	assert_string_equal(r.def.name, "d1");
	assert_int_equal(r.def.flags, IMEXD_DEF_DELETED);
	assert_int_equal(r.def.generation, t->index);
	assert_channels(&r.def, "3");
	assert_int_equal(r.def.nmembers, 2);
	imexd_fsm_result_free(&r);
	assert_null(imexd_fsm_domain(t->fsm, "d1"));
	assert_int_equal(imexd_fsm_domain_count(t->fsm), 0);
	refused(t, delete_cmd("d1"), ENOENT, "no domain 'd1'");
	/* Its name, UUID and channel are free again. */
	create_ok(t, create_cmd("d1", 1, "b", 0, (const uint32_t[]){ 3 }, 1), "3");
}

void test_queries(void **state)
{
	struct tf *t = *state;
	const struct imexd_def *d;
	uint8_t u[16];
	size_t pos = 0;

	cluster(t);
	ok(t, create_cmd("j3", 3, "a,c", 1, NULL, 0));
	ok(t, create_cmd("j1", 1, "a,b", 1, NULL, 0));
	ok(t, create_cmd("j2", 2, "b,c", 1, NULL, 0));
	d = imexd_fsm_domain_of(t->fsm, "a", &pos);
	assert_string_equal(d->name, "j1");
	d = imexd_fsm_domain_of(t->fsm, "a", &pos);
	assert_string_equal(d->name, "j3");
	assert_null(imexd_fsm_domain_of(t->fsm, "a", &pos));
	pos = 0;
	assert_null(imexd_fsm_domain_of(t->fsm, "d", &pos));
	uuid_of(u, 2);
	assert_string_equal(imexd_fsm_domain_by_uuid(t->fsm, u)->name, "j2");
	uuid_of(u, 9);
	assert_null(imexd_fsm_domain_by_uuid(t->fsm, u));
	assert_int_equal(imexd_fsm_domain_count(t->fsm), 3);
	assert_string_equal(imexd_fsm_domain_at(t->fsm, 0)->name, "j1");
	assert_string_equal(imexd_fsm_domain_at(t->fsm, 2)->name, "j3");
	assert_null(imexd_fsm_domain_at(t->fsm, 3));
	assert_null(imexd_fsm_domain(t->fsm, NULL));
	assert_null(imexd_fsm_domain(t->fsm, "j4"));
	assert_string_equal(imexd_fsm_node_at(t->fsm, 0)->name, "a");
	assert_string_equal(imexd_fsm_node_at(t->fsm, 5)->name, "z");
	assert_null(imexd_fsm_node_at(t->fsm, 6));
	assert_null(imexd_fsm_node(t->fsm, "q"));
}

void test_index_must_increase(void **state)
{
	struct tf *t = *state;
	struct imexd_fsm_result r;
	struct imexd_cmd c;
	struct blob a, b;

	cluster(t);
	a = snap(t->fsm);
	c = create_cmd("j", 1, "a", 1, NULL, 0);
	assert_int_equal(imexd_fsm_apply(t->fsm, t->index, &c, &r), -EINVAL);
	assert_int_equal(imexd_fsm_apply(t->fsm, 0, &c, &r), -EINVAL);
	b = snap(t->fsm);
	assert_same(a, b);
	assert_int_equal(imexd_fsm_last_index(t->fsm), t->index);
	imexd_cmd_free(&c);
	free(a.p);
	free(b.p);
}

/* The longest messages, with IMEX_NAME_MAX - 1 names, are not cut. */
void test_messages_fit_longest_names(void **state)
{
	char n1[IMEX_NAME_MAX], n2[IMEX_NAME_MAX], n3[IMEX_NAME_MAX];
	char d1[IMEX_NAME_MAX], d2[IMEX_NAME_MAX], want[1024], csv[256];
	struct tf *t = *state;
	struct imexd_cmd c;

	memset(n1, 'a', IMEX_NAME_MAX - 1);
	memset(n2, 'b', IMEX_NAME_MAX - 1);
	memset(n3, 'c', IMEX_NAME_MAX - 1);
	memset(d1, 'D', IMEX_NAME_MAX - 1);
	memset(d2, 'E', IMEX_NAME_MAX - 1);
	n1[IMEX_NAME_MAX - 1] = n2[IMEX_NAME_MAX - 1] = n3[IMEX_NAME_MAX - 1] = 0;
	d1[IMEX_NAME_MAX - 1] = d2[IMEX_NAME_MAX - 1] = 0;
	ok(t, node_cmd(n1, FAB1, 0, IMEX_CHANNELS_MAX));
	ok(t, node_cmd(n2, FAB1, 0, IMEX_CHANNELS_MAX));
	ok(t, node_cmd(n3, FAB2, 0, IMEX_CHANNELS_MAX));
	snprintf(want, sizeof(want), "%s,%s", n1, n2);
	ok(t, create_cmd(d1, 1, want, 0, (const uint32_t[]){ IMEX_CHANNELS_MAX - 1 }, 1));

	snprintf(want, sizeof(want),
		 "channel %u belongs to domain '%s' on node '%s': use other ids ('imexctl channel list' there)",
		 IMEX_CHANNELS_MAX - 1, d1, n2);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	refused(t, create_cmd(d2, 2, n2, 0, (const uint32_t[]){ IMEX_CHANNELS_MAX - 1 }, 1),
		EADDRINUSE, want);
	snprintf(want, sizeof(want),
		 "nodes '%s' and '%s' are not in one NVLink partition: compare 'imexctl node show' on both",
		 n1, n3);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	snprintf(csv, sizeof(csv), "%s,%s", n1, n3);
	c = create_cmd(d2, 2, csv, 1, NULL, 0);
	refused(t, c, EXDEV, want);
	snprintf(want, sizeof(want),
		 "node '%s' is a member of domain '%s': its fabric identity cannot change until no domain names it",
		 n1, d1);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	refused(t, node_cmd(n1, FAB2, 0, IMEX_CHANNELS_MAX), EBUSY, want);
	snprintf(want, sizeof(want),
		 "node '%s' is in another NVLink domain (fabric UUID) than domain '%s': pick a spare of its fabric",
		 n3, d1);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	refused(t, replace_cmd(d1, n2, n3), EXDEV, want);
	ok(t, create_cmd(d2, 2, n3, 0, (const uint32_t[]){ IMEX_CHANNELS_MAX - 1 }, 1));
	snprintf(want, sizeof(want),
		 "channel %u is held on node '%s' by domain '%s': free it there, or pick another spare",
		 IMEX_CHANNELS_MAX - 1, n2, d1);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	refused(t, replace_cmd(d2, n3, n2), EXDEV, "another NVLink domain");
	snprintf(want, sizeof(want),
		 "channel %u of domain '%s' is out of range on node '%s' (max_channels=%u): pick another spare",
		 IMEX_CHANNELS_MAX - 1, d1, n3, (unsigned int)IMEX_CHANNELS_MAX);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	snprintf(want, sizeof(want),
		 "node '%s' is in NVLink partition %u, domain '%s' in partition %u: pick a spare of partition %u",
		 n3, UINT32_MAX, d1, UINT32_MAX, UINT32_MAX);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	snprintf(want, sizeof(want),
		 "'%s' cannot replace itself in domain '%s': name a spare as the new member",
		 n1, d1);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	refused(t, replace_cmd(d1, n1, n1), EINVAL, want);
	snprintf(want, sizeof(want),
		 "node '%s' is not in the group: join it with 'imexctl node join' and check that imexd runs there",
		 n1);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
	snprintf(want, sizeof(want),
		 "%u channels asked for, but only %u are free on every member of domain '%s'",
		 (unsigned int)IMEX_CHANNEL_IDS_MAX,
		 (unsigned int)IMEX_CHANNEL_IDS_MAX - 1, d1);
	assert_true(strlen(want) < IMEXD_MESSAGE_MAX);
}

