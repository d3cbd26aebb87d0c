// SPDX-License-Identifier: GPL-2.0
/* Names and one-line descriptions for imexd's log (describe.h). */
#include <inttypes.h>
#include <stdio.h>
#include "describe.h"
#include "kernel.h"
#include "log.h"

const char *imexd_domain_state_name(uint32_t s)
{
	switch (s) {
	case IMEX_DOMAIN_PREPARED:	return "PREPARED";
	case IMEX_DOMAIN_DOWN:		return "DOWN";
	case IMEX_DOMAIN_READY:		return "READY";
	case IMEX_DOMAIN_DEGRADED:	return "DEGRADED";
	default:			return "?";
	}
}

void imexd_uuid_str(const uint8_t u[16], char out[37])
{
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

const char *imexd_action_name(enum imexd_action_type t)
{
	switch (t) {
	case IMEXD_ACT_CONNECT:		return "CONNECT";
	case IMEXD_ACT_CLOSE:		return "CLOSE";
	case IMEXD_ACT_SEND:		return "SEND";
	case IMEXD_ACT_KERNEL_PREPARE:	return "KERNEL_PREPARE";
	case IMEXD_ACT_KERNEL_COMMIT:	return "KERNEL_COMMIT";
	case IMEXD_ACT_KERNEL_ABORT:	return "KERNEL_ABORT";
	case IMEXD_ACT_KERNEL_STATUS:	return "KERNEL_STATUS";
	case IMEXD_ACT_REQUEST_DONE:	return "REQUEST_DONE";
	case IMEXD_ACT_STORE_DEF:	return "STORE_DEF";
	case IMEXD_ACT_STORE_REMOVE:	return "STORE_REMOVE";
	case IMEXD_ACT_PEER_RESTARTED:	return "PEER_RESTARTED";
	case IMEXD_ACT_LOG:		return "LOG";
	case IMEXD_ACT_IMPORT_DONE:	return "IMPORT_DONE";
	case IMEXD_ACT_IMPORT_CHECK:	return "IMPORT_CHECK";
	case IMEXD_ACT_IMPORT_REVOKE:	return "IMPORT_REVOKE";
	}
	return "?";
}

void imexd_log_action(const struct imexd_action *a)
{
	char u[37];

	if (!imexd_log_enabled(LOG_DEBUG))
		return;
	switch (a->type) {
	case IMEXD_ACT_CONNECT:
		log_debug("action CONNECT %s", a->addr);
		break;
	case IMEXD_ACT_CLOSE:
		log_debug("action CLOSE conn %" PRIu64, a->conn);
		break;
	case IMEXD_ACT_SEND:
		log_debug("action SEND %s on conn %" PRIu64,
			  imexd_msg_type_name(a->msg.type), a->conn);
		break;
	case IMEXD_ACT_KERNEL_PREPARE:
		log_debug("action KERNEL_PREPARE op %" PRIu64 " change %" PRIu64
			  " %s domain %s (%u members, %u channels, delta %u) lease %u ms",
			  a->op_id, a->change_id, imexd_kernel_op_name(a->op),
			  a->def.name, a->def.nmembers, a->def.nchannels,
			  a->nchans, a->lease_ms);
		break;
	case IMEXD_ACT_KERNEL_COMMIT:
	case IMEXD_ACT_KERNEL_ABORT:
		log_debug("action %s op %" PRIu64 " change %" PRIu64,
			  imexd_action_name(a->type), a->op_id, a->change_id);
		break;
	case IMEXD_ACT_KERNEL_STATUS:
		log_debug("action KERNEL_STATUS domain %s %s (%u members)",
			  a->status.name, imexd_domain_state_name(a->status.state),
			  a->status.nmembers);
		break;
	case IMEXD_ACT_REQUEST_DONE:
		log_debug("action REQUEST_DONE req %" PRIu64 " error %d: %s",
			  a->req_id, a->error, a->text);
		break;
	case IMEXD_ACT_STORE_DEF:
		imexd_uuid_str(a->def.uuid, u);
		log_debug("action STORE_DEF domain %s (%s) generation %" PRIu64 "%s",
			  a->def.name, u, a->def.generation,
			  a->def.flags & IMEXD_DEF_DELETED ? " (deleted)" : "");
		break;
	case IMEXD_ACT_STORE_REMOVE:
		imexd_uuid_str(a->def.uuid, u);
		log_debug("action STORE_REMOVE %s", u);
		break;
	case IMEXD_ACT_PEER_RESTARTED:
		log_debug("action PEER_RESTARTED %s", a->peer);
		break;
	case IMEXD_ACT_LOG:
		break;
	case IMEXD_ACT_IMPORT_DONE:
		log_debug("action IMPORT_DONE import %" PRIu64 " error %d%s%s",
			  a->import_id, a->error, a->text[0] ? ": " : "", a->text);
		break;
	case IMEXD_ACT_IMPORT_CHECK:
		log_debug("action IMPORT_CHECK op %" PRIu64 " handle %" PRIu64
			  " channel %u for node %s", a->op_id, a->handle_id,
			  a->channel_id, a->peer);
		break;
	case IMEXD_ACT_IMPORT_REVOKE:
		imexd_uuid_str(a->node_uuid, u);
		log_debug("action IMPORT_REVOKE node %s handle %s%" PRIu64 " reason %u",
			  u, a->has_handle ? "" : "(all) ",
			  a->has_handle ? a->handle_id : 0, a->reason);
		break;
	}
}
