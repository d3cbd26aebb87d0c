// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The uAPI's state names (imex_names.h), as imexctl prints them and the
 * metrics label them: one table, so the two never differ.
 */
#include <linux/imex.h>		/* the project's uAPI copy: -I../include/uapi */

#include "imex_names.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const domain_states[] = {
	[IMEX_DOMAIN_DOWN] = "down",
	[IMEX_DOMAIN_READY] = "ready",
	[IMEX_DOMAIN_DEGRADED] = "degraded",
};

static const char *const member_states[] = {
	[IMEX_MEMBER_UNKNOWN] = "unknown",
	[IMEX_MEMBER_SELF] = "self",
	[IMEX_MEMBER_CONNECTED] = "connected",
	[IMEX_MEMBER_RECOVERING] = "recovering",
	[IMEX_MEMBER_DISCONNECTED] = "disconnected",
	[IMEX_MEMBER_NEVER_CONNECTED] = "never-connected",
	[IMEX_MEMBER_VERSION_MISMATCH] = "version-mismatch",
	[IMEX_MEMBER_REFUSED] = "refused",
};

_Static_assert(ARRAY_SIZE(domain_states) == __IMEX_DOMAIN_STATE_MAX,
	       "a domain state has no name");
_Static_assert(ARRAY_SIZE(member_states) == __IMEX_MEMBER_STATE_MAX,
	       "a member state has no name");

const char *imex_domain_state_name(unsigned int state)
{
	return state < ARRAY_SIZE(domain_states) && domain_states[state] ?
	       domain_states[state] : "unknown";
}

const char *imex_member_state_name(unsigned int state)
{
	return state < ARRAY_SIZE(member_states) && member_states[state] ?
	       member_states[state] : "unknown";
}
