/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Printable names of the uAPI's domain and member states. */
#ifndef IMEX_NAMES_H
#define IMEX_NAMES_H

/* "down", "ready", "degraded"; "unknown" for any other value. */
const char *imex_domain_state_name(unsigned int state);

/* "unknown", "self", "connected", ..., "refused"; "unknown" past the end. */
const char *imex_member_state_name(unsigned int state);

#endif
