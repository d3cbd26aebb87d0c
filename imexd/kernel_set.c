// SPDX-License-Identifier: GPL-2.0
/*
 * The manager's atomic domain operations on the imex module: DOMAIN_SET
 * ("domain X is now this") and DOMAIN_REMOVE, which the reconciler's steps
 * become.  The kernel applies each at once or refuses it and changes
 * nothing, so there is no state here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <linux/imex.h>
#include "kernel.h"
#include "kernel_internal.h"

/*
 * Channel entries one DOMAIN_SET carries: IMEX_CHANNELS_PER_MSG, and what
 * fits the 16-bit length of the IMEX_A_CHANNELS attribute (each entry: a
 * nest header and four u32 attributes), whichever is smaller.
 */
#define ENTRY_LEN	(NLA_HDRLEN + 4 * NLA_ALIGN(NLA_HDRLEN + 4))
#define ENTRIES_FIT	((0xffff - NLA_HDRLEN) / ENTRY_LEN)
#define ENTRIES_MAX	(ENTRIES_FIT < IMEX_CHANNELS_PER_MSG ? ENTRIES_FIT : \
			 IMEX_CHANNELS_PER_MSG)

static bool same_owner(const struct imexd_channel *a,
		       const struct imexd_channel *b)
{
	return a->uid == b->uid && a->gid == b->gid &&
	       (a->mode & 0777) == (b->mode & 0777);
}

/*
 * The owner that IMEX_A_CHANNEL_IDS carries: the one most channels share
 * when more than half do (majority vote), else some owner; every other
 * channel goes as an entry of its own.  Usually all share one owner.
 */
static const struct imexd_channel *bulk_owner(const struct imexd_channel *ch,
					      uint32_t n)
{
	const struct imexd_channel *cand = NULL;
	uint32_t votes = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (!votes) {
			cand = &ch[i];
			votes = 1;
		} else if (same_owner(cand, &ch[i])) {
			votes++;
		} else {
			votes--;
		}
	}
	return cand;
}

/* The channel set: the first @nids of @bulk's channels as ids, the rest
 * as entries.  -EMSGSIZE when it does not fit. */
static int put_channel_set(struct nl_msg *m, const struct imexd_channel *ch,
			   uint32_t n, const struct imexd_channel *bulk,
			   uint32_t nids)
{
	struct nlattr *a, *arr;
	uint32_t i, k = 0, e = 0;
	uint32_t *ids;

	if (nids) {
		a = nla_reserve(m, IMEX_A_CHANNEL_IDS, (int)(nids * 4));
		if (!a || nla_put_u32(m, IMEX_A_CHANNEL_UID, bulk->uid) ||
		    nla_put_u32(m, IMEX_A_CHANNEL_GID, bulk->gid) ||
		    nla_put_u32(m, IMEX_A_CHANNEL_MODE, bulk->mode & 0777))
			return -EMSGSIZE;
		ids = nla_data(a);
		for (i = 0; i < n && k < nids; i++)
			if (same_owner(bulk, &ch[i]))
				memcpy(&ids[k++], &ch[i].id, sizeof(*ids));
	}
	if (n == nids)
		return 0;
	arr = nla_nest_start(m, IMEX_A_CHANNELS);
	if (!arr)
		return -EMSGSIZE;
	k = 0;
	for (i = 0; i < n; i++) {
		struct nlattr *ent;

		/* The first nids of the bulk owner went as ids. */
		if (k < nids && same_owner(bulk, &ch[i])) {
			k++;
			continue;
		}
		ent = nla_nest_start(m, (int)(e % 0x3fff) + 1);
		if (!ent || nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_ID, ch[i].id) ||
		    nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_UID, ch[i].uid) ||
		    nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_GID, ch[i].gid) ||
		    nla_put_u32(m, IMEX_A_CHANNEL_ENTRY_MODE, ch[i].mode & 0777))
			return -EMSGSIZE;
		nla_nest_end(m, ent);
		e++;
	}
	/* libnl drops a nest past 64 KiB: never send the set without it. */
	return nla_nest_end(m, arr) < 0 ? -EMSGSIZE : 0;
}

int imexd_kernel_domain_set(struct imexd_kernel *k, const struct imexd_def *def,
			    char *msg, size_t msglen)
{
	const struct imexd_channel *bulk = NULL;
	uint32_t nbulk = 0, nids, nent;
	struct nl_msg *m;
	size_t size;
	int r = 0;

	if ((def->nmembers && !def->members) ||
	    (def->nchannels && !def->channels)) {
		snprintf(msg, msglen, "domain '%s': a count without its array",
			 def->name);
		return -EINVAL;
	}
	if (def->nchannels) {
		bulk = bulk_owner(def->channels, def->nchannels);
		for (uint32_t i = 0; i < def->nchannels; i++)
			nbulk += same_owner(bulk, &def->channels[i]);
	}
	nids = nbulk < IMEX_CHANNEL_IDS_MAX ? nbulk : IMEX_CHANNEL_IDS_MAX;
	nent = def->nchannels - nids;
	if (nent > ENTRIES_MAX) {
		snprintf(msg, msglen, "domain '%s' has %u channels, %u of them not owned as the rest: more than one DOMAIN_SET carries (%u of one owner and %u others)",
			 def->name, def->nchannels, def->nchannels - nbulk,
			 (unsigned int)IMEX_CHANNEL_IDS_MAX, (unsigned int)ENTRIES_MAX);
		return -E2BIG;
	}
	size = 2048 + (size_t)def->nmembers * 352 + (size_t)nent * 40 +
	       (size_t)nids * 4;
	m = kernel_msg_new(k, IMEX_CMD_DOMAIN_SET, 0, size);
	if (!m)
		return kernel_transact(k, NULL, NULL, NULL, NULL, msg, msglen);
	if (nla_put_string(m, IMEX_A_DOMAIN_NAME, def->name) ||
	    nla_put(m, IMEX_A_DOMAIN_UUID, 16, def->uuid) ||
	    nla_put(m, IMEX_A_FABRIC_UUID, 16, def->fabric_uuid) ||
	    nla_put_u32(m, IMEX_A_FABRIC_PARTITION, def->partition) ||
	    nla_put_u64(m, IMEX_A_DOMAIN_GENERATION, def->generation))
		r = -EMSGSIZE;
	if (!r)
		r = kernel_put_members(m, def->members, def->nmembers);
	if (!r && def->nchannels)
		r = put_channel_set(m, def->channels, def->nchannels, bulk, nids);
	if (r) {
		nlmsg_free(m);
		snprintf(msg, msglen, "domain '%s' does not fit one netlink message",
			 def->name);
		return r;
	}
	return kernel_transact(k, m, NULL, NULL, NULL, msg, msglen);
}

int imexd_kernel_domain_remove(struct imexd_kernel *k, const char *name,
			       const uint8_t *uuid, char *msg, size_t msglen)
{
	struct nl_msg *m = kernel_msg_new(k, IMEX_CMD_DOMAIN_REMOVE, 0, 0);

	if (m && (nla_put_string(m, IMEX_A_DOMAIN_NAME, name) ||
		  (uuid && memcmp(uuid, kernel_zero16, 16) &&
		   nla_put(m, IMEX_A_DOMAIN_UUID, 16, uuid)))) {
		nlmsg_free(m);
		m = NULL;
	}
	return kernel_transact(k, m, NULL, NULL, NULL, msg, msglen);
}
