// SPDX-License-Identifier: LGPL-2.1-or-later
/* Domain/node name rule and the printable names of the uAPI's states. */
#include <string.h>

#include "imex_names.h"
#include "internal.h"

_Static_assert(IMEXCTL_NAME_MAX == IMEX_NAME_MAX, "name bound differs from the uAPI");
_Static_assert(IMEXCTL_ADDR_MAX == IMEX_ADDR_MAX, "address bound differs from the uAPI");
_Static_assert(IMEXCTL_UUID_LEN == IMEX_UUID_LEN, "UUID size differs from the uAPI");
_Static_assert(IMEXCTL_MEMBERS_MAX == IMEX_MEMBERS_MAX, "member bound differs from the uAPI");
_Static_assert(IMEXCTL_CHANNELS_MAX == IMEX_CHANNELS_MAX, "channel bound differs from the uAPI");
_Static_assert(IMEXCTL_CHANNELS_PER_REQUEST == IMEX_CHANNELS_PER_MSG, "request bound differs from the uAPI");
_Static_assert((int)IMEXCTL_DOMAIN_DEGRADED == (int)IMEX_DOMAIN_DEGRADED, "domain states differ");
_Static_assert((int)IMEXCTL_MEMBER_REFUSED == (int)IMEX_MEMBER_REFUSED,
	       "member states differ");
_Static_assert((int)IMEXCTL_CHANNEL_GRANTED == (int)IMEX_CHANNEL_GRANTED, "channel states differ");

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

IMEXCTL_API bool imexctl_name_valid(const char *name)
{
	size_t i;

	if (!name || !is_alnum(name[0]))
		return false;
	for (i = 1; name[i]; i++) {
		if (i >= IMEX_NAME_MAX - 1)
			return false;
		if (!is_alnum(name[i]) && !strchr("_.-", name[i]))
			return false;
	}
	return true;
}

static const char member_letters[] = {
	[IMEX_MEMBER_UNKNOWN] = '?',
	[IMEX_MEMBER_SELF] = '-',
	[IMEX_MEMBER_CONNECTED] = 'C',
	[IMEX_MEMBER_RECOVERING] = 'R',
	[IMEX_MEMBER_DISCONNECTED] = 'D',
	[IMEX_MEMBER_NEVER_CONNECTED] = 'N',
	[IMEX_MEMBER_VERSION_MISMATCH] = 'V',
	[IMEX_MEMBER_REFUSED] = 'X',
};

static const char *const channel_states[] = {
	[IMEX_CHANNEL_RESERVED] = "reserved",
	[IMEX_CHANNEL_GRANTED] = "granted",
};

IMEXCTL_API const char *imexctl_domain_state_name(unsigned int state)
{
	return imex_domain_state_name(state);
}

IMEXCTL_API const char *imexctl_member_state_name(unsigned int state)
{
	return imex_member_state_name(state);
}

IMEXCTL_API char imexctl_member_state_letter(unsigned int state)
{
	return state < ARRAY_SIZE(member_letters) ? member_letters[state] : '?';
}

IMEXCTL_API const char *imexctl_channel_state_name(unsigned int state)
{
	return state < ARRAY_SIZE(channel_states) ? channel_states[state] : "unknown";
}
