/* SPDX-License-Identifier: GPL-2.0 */
/*
 * journald MESSAGE_IDs of imexd's log lines, one per kind of message: 128
 * bits as 32 lower-case hex digits, never reused nor changed once released
 * (operators filter on them: journalctl MESSAGE_ID=...).  Each has an
 * entry in imexd/imexd.catalog (installed for journalctl -x) and in
 * Documentation/journal.md; tests/ops/t-msgid.sh checks both.
 */
#ifndef IMEXD_MSGID_H
#define IMEXD_MSGID_H

/* A domain's generation is now in this node's kernel, or removed from it. */
#define IMEXD_MSGID_DOMAIN_KERNEL	"3b6935e00676412f86d65ce4f966d18d"
/* The kernel refused to take or remove a domain. */
#define IMEXD_MSGID_DOMAIN_KERNEL_REFUSED "6ecc9b59de964a9994bf09993c0db1f8"
/* A domain became READY. */
#define IMEXD_MSGID_DOMAIN_READY	"ea0a755ed4f0463ca52df08fc0417757"
/* A domain is not READY (DEGRADED), and why. */
#define IMEXD_MSGID_DOMAIN_DEGRADED	"6f58bc49017a4477a843e6670af3d498"
/* The kernel could not take a domain's health. */
#define IMEXD_MSGID_DOMAIN_HEALTH_FAILED "d7ab8a7e605040409955b14f1d4198b6"
/* A member node's state changed (connected, disconnected, ...). */
#define IMEXD_MSGID_MEMBER_STATE	"6ed89fe017d04c0a99d77c9e983bff8a"
/* A member node restarted: what it exported is gone. */
#define IMEXD_MSGID_MEMBER_RESTARTED	"9737fe8ce6ac4430a14c729093e2a137"
/* A node is being added to or removed from the group (join/leave). */
#define IMEXD_MSGID_NODE_CHANGE		"1d9f2d662ef3435ea74a411e8ea158c5"
/* A request from the imex module (domain create/delete, channel grant...). */
#define IMEXD_MSGID_REQUEST		"54b55bc73bd04be7ac57511b483e6e3b"
/* An import was refused. */
#define IMEXD_MSGID_IMPORT_REFUSED	"86d78a7635944359b9c7ca1e06d5bf14"
/* Imports of a node's exports were revoked. */
#define IMEXD_MSGID_IMPORTS_REVOKED	"8acc3f2252f041c6b95e1d32146ae7b6"

#endif /* IMEXD_MSGID_H */
