/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Structured fields a log line may carry: which domain, node or channel it
 * concerns and its kind (a journald MESSAGE_ID, see msgid.h).  Pure: the
 * node core's parts fill them in their log actions; imexd's log sends them
 * to journald as IMEX_DOMAIN=, IMEX_NODE=, IMEX_CHANNEL= and MESSAGE_ID=.
 */
#ifndef IMEXD_LOGFIELDS_H
#define IMEXD_LOGFIELDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/imex.h>

struct imexd_log_fields {
	const char *msgid;		/* IMEXD_MSGID_*; NULL: no fields */
	char domain[IMEX_NAME_MAX];	/* "": none */
	char node[IMEX_NAME_MAX];	/* "": none */
	bool has_channel;
	uint32_t channel;
};

/* @msgid with a domain and a node name (NULL or "": none). */
static inline void imexd_log_fields_set(struct imexd_log_fields *f,
					const char *msgid, const char *domain,
					const char *node)
{
	f->msgid = msgid;
	snprintf(f->domain, sizeof(f->domain), "%s", domain ? domain : "");
	snprintf(f->node, sizeof(f->node), "%s", node ? node : "");
	f->has_channel = false;
	f->channel = 0;
}

#endif /* IMEXD_LOGFIELDS_H */
