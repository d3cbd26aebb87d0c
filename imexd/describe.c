// SPDX-License-Identifier: GPL-2.0
/* Names and one-line descriptions for imexd's log (describe.h). */
#include <inttypes.h>
#include <stdio.h>
#include "describe.h"
#include "imex_uuid.h"
#include "kernel.h"
#include "log.h"

const char *imexd_domain_state_name(uint32_t s)
{
	switch (s) {
	case IMEX_DOMAIN_DOWN:		return "DOWN";
	case IMEX_DOMAIN_READY:		return "READY";
	case IMEX_DOMAIN_DEGRADED:	return "DEGRADED";
	default:			return "?";
	}
}

const char *imexd_action_name(enum imexd_node_action_type t)
{
	switch (t) {
	case IMEXD_NODE_CONNECT:	return "CONNECT";
	case IMEXD_NODE_CLOSE:		return "CLOSE";
	case IMEXD_NODE_SEND:		return "SEND";
	case IMEXD_NODE_CONN_BOUND:	return "CONN_BOUND";
	case IMEXD_NODE_KERNEL_SET:	return "KERNEL_SET";
	case IMEXD_NODE_KERNEL_REMOVE:	return "KERNEL_REMOVE";
	case IMEXD_NODE_KERNEL_STATUS:	return "KERNEL_STATUS";
	case IMEXD_NODE_REQUEST_DONE:	return "REQUEST_DONE";
	case IMEXD_NODE_IMPORT_DONE:	return "IMPORT_DONE";
	case IMEXD_NODE_IMPORT_CHECK:	return "IMPORT_CHECK";
	case IMEXD_NODE_IMPORT_REVOKE:	return "IMPORT_REVOKE";
	case IMEXD_NODE_LOG:		return "LOG";
	}
	return "?";
}

void imexd_log_action(const struct imexd_node_action *a)
{
	char u[37];

	if (!imexd_log_enabled(LOG_DEBUG))
		return;
	switch (a->type) {
	case IMEXD_NODE_CONNECT:
		log_debug("action CONNECT %s", a->addr);
		break;
	case IMEXD_NODE_CLOSE:
	case IMEXD_NODE_CONN_BOUND:
		log_debug("action %s conn %" PRIu64, imexd_action_name(a->type),
			  a->conn);
		break;
	case IMEXD_NODE_SEND:
		log_debug("action SEND %zu bytes on conn %" PRIu64, a->len,
			  a->conn);
		break;
	case IMEXD_NODE_KERNEL_SET:
	case IMEXD_NODE_KERNEL_REMOVE:
		imex_uuid_format(a->def->uuid, u);
		log_debug("action %s domain %s (%s) generation %" PRIu64
			  " (%u members, %u channels)",
			  imexd_action_name(a->type), a->def->name, u,
			  a->def->generation, a->def->nmembers,
			  a->def->nchannels);
		break;
	case IMEXD_NODE_KERNEL_STATUS:
		log_debug("action KERNEL_STATUS domain %s %s (%u members)",
			  a->status->name,
			  imexd_domain_state_name(a->status->state),
			  a->status->nmembers);
		break;
	case IMEXD_NODE_REQUEST_DONE:
		log_debug("action REQUEST_DONE req %" PRIu64 " error %d: %s",
			  a->req_id, a->error, a->text ? a->text : "");
		break;
	case IMEXD_NODE_LOG:
		break;
	case IMEXD_NODE_IMPORT_DONE:
		log_debug("action IMPORT_DONE import %" PRIu64 " error %d%s%s",
			  a->import_id, a->error, a->text ? ": " : "",
			  a->text ? a->text : "");
		break;
	case IMEXD_NODE_IMPORT_CHECK:
		log_debug("action IMPORT_CHECK op %" PRIu64 " handle %" PRIu64
			  " channel %u for node %s", a->op_id, a->handle_id,
			  a->channel_id, a->peer ? a->peer : "?");
		break;
	case IMEXD_NODE_IMPORT_REVOKE:
		imex_uuid_format(a->node_uuid, u);
		log_debug("action IMPORT_REVOKE node %s handle %s%" PRIu64 " reason %u",
			  u, a->has_handle ? "" : "(all) ",
			  a->has_handle ? a->handle_id : 0, a->reason);
		break;
	}
}
