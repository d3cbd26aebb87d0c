/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Valid sample definitions and messages, shared by the imexd unit tests and
 * the fuzz-corpus generator (header-only: each test is one binary).
 */
#ifndef IMEXD_TEST_SAMPLES_H
#define IMEXD_TEST_SAMPLES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

static inline void sample_uuid(uint8_t u[16], uint8_t seed)
{
	int i;

	for (i = 0; i < 16; i++)
		u[i] = (uint8_t)(seed + i * 7 + 1);
}

/* A valid def; 0 or -ENOMEM.  Channel ids 1, 4, 7, ... */
static inline int sample_def(struct imexd_def *d, const char *name,
			     uint16_t nmembers, uint32_t nchannels,
			     uint64_t generation)
{
	uint32_t i;

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	sample_uuid(d->uuid, 0x10);
	d->generation = generation;
	sample_uuid(d->fabric_uuid, 0x40);
	d->partition = 7;
	d->nmembers = nmembers;
	d->nchannels = nchannels;
	if (nmembers) {
		d->members = calloc(nmembers, sizeof(*d->members));
		if (!d->members)
			return -1;
	}
	if (nchannels) {
		d->channels = calloc(nchannels, sizeof(*d->channels));
		if (!d->channels)
			return -1;
	}
	for (i = 0; i < nmembers; i++) {
		snprintf(d->members[i].name, sizeof(d->members[i].name),
			 "node%03u", i);
		snprintf(d->members[i].addr, sizeof(d->members[i].addr),
			 "10.0.%u.%u:50100", i / 200, i % 200 + 1);
	}
	for (i = 0; i < nchannels; i++) {
		d->channels[i].id = i * 3 + 1;
		d->channels[i].uid = 1000 + i;
		d->channels[i].gid = 100;
		d->channels[i].mode = 0660;
	}
	return 0;
}

/* A valid message of @type with the header filled in; 0 or -1. */
static inline int sample_msg(struct imexd_msg *m, uint8_t type)
{
	uint16_t i;

	memset(m, 0, sizeof(*m));
	m->type = type;
	sample_uuid(m->sender_uuid, 0x80);
	m->sender_epoch = 0x0123456789abcdefULL;
	switch (type) {
	case IMEXD_MSG_HELLO:
	case IMEXD_MSG_HELLO_ACK:
		m->u.hello.proto_min = 1;
		m->u.hello.proto_max = 3;
		strcpy(m->u.hello.node_name, "gpu-node-07.rack2");
		m->u.hello.max_channels = 2048;
		sample_uuid(m->u.hello.fabric_uuid, 0x40);
		m->u.hello.partition = 0xfffffffe;
		m->u.hello.group = 0x8877665544332211ULL;
		return 0;
	case IMEXD_MSG_HEARTBEAT:
		m->u.heartbeat.seq = 42;
		m->u.heartbeat.n = 3;
		m->u.heartbeat.peers = calloc(3, sizeof(*m->u.heartbeat.peers));
		if (!m->u.heartbeat.peers)
			return -1;
		for (i = 0; i < 3; i++) {
			snprintf(m->u.heartbeat.peers[i].name,
				 sizeof(m->u.heartbeat.peers[i].name), "peer%u", i);
			m->u.heartbeat.peers[i].state = (uint8_t)(i + 2);
		}
		m->u.heartbeat.ngens = 2;
		m->u.heartbeat.gens = calloc(2, sizeof(*m->u.heartbeat.gens));
		if (!m->u.heartbeat.gens)
			return -1;
		for (i = 0; i < 2; i++) {
			sample_uuid(m->u.heartbeat.gens[i].uuid,
				    (uint8_t)(0x10 + i));
			m->u.heartbeat.gens[i].generation = 5 + i;
		}
		return 0;
	case IMEXD_MSG_LEAVE:
		m->u.leave.reason = IMEXD_LEAVE_SHUTDOWN;
		return 0;
	case IMEXD_MSG_IMPORT_REQ:
		sample_uuid(m->domain_uuid, 0x10);
		m->u.import_req.tag = 0x1122334455667788ULL;
		m->u.import_req.handle_id = 83;
		m->u.import_req.channel_id = 4;
		return 0;
	case IMEXD_MSG_IMPORT_RESP:
		sample_uuid(m->domain_uuid, 0x10);
		m->u.import_resp.tag = 0x1122334455667788ULL;
		m->u.import_resp.desc_len = 5;
		memcpy(m->u.import_resp.desc, "gpu\0\xff", 5);
		return 0;
	case IMEXD_MSG_EXPORT_REVOKE:
		sample_uuid(m->domain_uuid, 0x10);
		m->u.export_revoke.handle_id = 84;
		return 0;
	case IMEXD_MSG_RAFT:
		/* Opaque here: raftwire decodes it. */
		m->u.raft.len = 7;
		m->u.raft.data = malloc(7);
		if (!m->u.raft.data)
			return -1;
		memcpy(m->u.raft.data, "\x01\x00\x03\x00raf", 7);
		return 0;
	case IMEXD_MSG_FORWARD:
		m->u.forward.tag = 0x8877665544332211ULL;
		m->u.forward.len = 5;
		m->u.forward.cmd = malloc(5);
		if (!m->u.forward.cmd)
			return -1;
		memcpy(m->u.forward.cmd, "\x02cmd\xff", 5);
		return 0;
	case IMEXD_MSG_REPLY:
		m->u.reply.tag = 0x8877665544332211ULL;
		strcpy(m->u.reply.message, "created");
		m->u.reply.index = 1234;
		m->u.reply.has_def = true;
		if (sample_def(&m->u.reply.def, "job9", 2, 3, 4))
			return -1;
		m->u.reply.nids = 3;
		m->u.reply.ids = calloc(3, sizeof(*m->u.reply.ids));
		if (!m->u.reply.ids)
			return -1;
		for (i = 0; i < 3; i++)
			m->u.reply.ids[i] = i * 3 + 1;	/* the def's */
		memcpy(m->domain_uuid, m->u.reply.def.uuid, 16);
		/* The analyzer's memcpy() into *m forgets the def's pointers. */
		return 0;	/* NOLINT(clang-analyzer-unix.Malloc) */
	}
	return -1;
}

#endif /* IMEXD_TEST_SAMPLES_H */
