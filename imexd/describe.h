/* SPDX-License-Identifier: GPL-2.0 */
/* Names and one-line descriptions for imexd's log. */
#ifndef IMEXD_DESCRIBE_H
#define IMEXD_DESCRIBE_H

#include <stdint.h>
#include "node.h"

/* "READY", "DEGRADED", ... for enum imex_domain_state. */
const char *imexd_domain_state_name(uint32_t state);
/* "CONNECT", "SEND", ... */
const char *imexd_action_name(enum imexd_node_action_type t);
/* One debug line for @a (nothing unless LOG_LEVEL=debug; LOG actions are
 * logged by their own level instead). */
void imexd_log_action(const struct imexd_node_action *a);

#endif /* IMEXD_DESCRIBE_H */
