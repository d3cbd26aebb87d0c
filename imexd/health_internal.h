/* SPDX-License-Identifier: GPL-2.0 */
/*
 * health's own tables, shared by its files: health.c (inputs, peer
 * states, heartbeats, actions), health_status.c (READY and the status
 * pushes), health_tab.c (the tables sized by the committed domains).
 */
#ifndef IMEXD_HEALTH_INTERNAL_H
#define IMEXD_HEALTH_INTERNAL_H

#include "health.h"
#include "msgid.h"

#define HB_DEFAULT_MS	1000
#define MISS_DEFAULT	3
#define NO_TIME		UINT64_MAX
#define HL_LINE		256
/* Log lines an input may leave besides two per peer and one per domain. */
#define LOG_SPARE	16
/* A complaint about what peers send: at most one line a minute per kind. */
#define COMPLAIN_GAP_MS	60000
/*
 * Heartbeats on change (per peer) and pushes of a new state (per domain):
 * up to BURST at once, then one per gap (a generic cell rate algorithm
 * whose allowance is a time, *_tat), so that what a create changes goes
 * out at once while a flapping peer still gets at most one per gap.
 */
#define BURST		4

enum { L_WARN = 4, L_INFO = 6 };
/* Why a peer is not connected (with hpeer.detail and cause_at). */
enum hl_cause {
	HC_NONE,		/* never connected */
	HC_HEARTBEAT,		/* heartbeats stopped */
	HC_CLOSED,		/* its connection ended: detail says how */
	HC_VERSION,		/* detail: the versions */
	HC_REFUSED,		/* detail: TLS names, another group */
};
enum complaint { C_STRANGER, C_BAD, C_MAX };

struct hpeer {
	char name[IMEX_NAME_MAX];
	uint8_t state;
	bool link;		/* bound connection (PEER_UP or a heartbeat) */
	bool has_view;		/* a heartbeat since it last connected */
	uint8_t self_in_view;	/* its view of this node */
	uint8_t *rview;		/* its view of each peer, by peer index */
	bool dirty;		/* what a heartbeat to it carries may differ */
	bool sent;		/* a heartbeat went to it */
	bool owed;		/* it may have dropped ours: send even if same */
	bool send_due, lost_due;
	uint64_t last_rx;	/* last heartbeat or PEER_UP */
	uint64_t since;		/* when the current state began */
	uint8_t cause;		/* enum hl_cause: why it left CONNECTED */
	uint64_t cause_at;	/* when */
	char detail[IMEXD_REASON_MAX];	/* the transport's words, or "" */
	/* Refused while recovering: its grace still ends then (0: none). */
	uint64_t grace_end;
	uint64_t hb_tat, next_hb;	/* hb_tat: heartbeats' allowance */
	uint32_t seq;
	uint16_t views_cap, gens_cap;
	struct imexd_peer_view *views;	/* the last heartbeat's content */
	struct imexd_peer_gen *gens;
	struct imexd_msg msg;		/* points at views and gens */
};

struct hdom {
	uint64_t gen;			/* committed */
	uint16_t n;
	int *midx;			/* member -> peer index; -1 this node */
	uint64_t *mgen;			/* what each peer member reported */
	bool dirty;			/* the status may differ from st */
	bool valid;			/* st holds what was pushed */
	bool status_due;
	bool held;			/* dirty, no new state: waits for the gap */
	uint32_t last_state;		/* 0: never pushed */
	uint64_t status_tat;		/* the pushes' allowance */
	struct imexd_domain_status st;	/* members: n, owned */
};

/* Everything sized by the committed domains; replaced as a whole. */
struct htab {
	struct hpeer *peers;		/* sorted by name */
	size_t npeers;
	struct hdom *doms;		/* in the order given */
	size_t ndoms;
	uint8_t *mark, *rview;		/* scratch: npeers */
	struct imexd_peer_view *views;	/* scratch: a heartbeat's views */
	struct imexd_peer_gen *gens;	/* scratch: ndoms */
	struct imexd_member_status *members;	/* scratch: largest domain */
	char (*lines)[HL_LINE];
	int *levels;
	struct imexd_log_fields *fields;	/* of each line */
	size_t lines_cap;
};

struct imexd_health {
	char self[IMEX_NAME_MAX];
	uint32_t hb_ms, miss_count;
	int64_t grace_ms;		/* < 0: forever */
	uint64_t now;
	struct htab t;
	struct imexd_peer_gen *kgens;	/* what this node's kernel holds */
	size_t nkgens, kgens_cap;
	size_t nlines, line_rd;
	unsigned long dropped;
	char drop_line[HL_LINE];
	uint64_t complained[C_MAX];
	bool complained_ever[C_MAX];
	unsigned long quiet[C_MAX];
	size_t cur_lost, cur_status, cur_send;
	bool wall_set;
	int64_t wall_off;		/* wall clock minus now, ms */
	char quorum[IMEXD_REASON_MAX];	/* the agreement layer's, or "" */
};

static inline uint64_t hl_max1(uint64_t v)
{
	return v ? v : 1;
}

/* How far ahead of now an allowance may run: BURST - 1 gaps. */
static inline uint64_t hl_slack(uint64_t gap)
{
	return (BURST - 1) * gap;
}

/* The allowance after one more send at @now. */
static inline uint64_t hl_tat_next(uint64_t tat, uint64_t now, uint64_t gap)
{
	return (tat > now ? tat : now) + gap;
}

/* health.c */
__attribute__((format(printf, 3, 4)))
void hl_log(struct imexd_health *h, int level, const char *fmt, ...);
/* A line with fields: kind @msgid about @domain, @node (NULL: none). */
__attribute__((format(printf, 6, 7)))
void hl_log_f(struct imexd_health *h, const char *msgid, const char *domain,
	      const char *node, int level, const char *fmt, ...);
const char *hl_state_name(uint8_t s);
int hl_peer_find(const struct htab *t, const char *name);
int hl_dom_find(const struct htab *t, const uint8_t uuid[16]);
/* Member index of peer @p in @d, -1 if not a member. */
int hl_dom_member(const struct hdom *d, int p);
const char *hl_member_name(const struct imexd_health *h, const struct htab *t,
			   const struct hdom *d, uint16_t i);
/* The generation of @uuid this node's kernel holds; 0 none. */
uint64_t hl_kgen(const struct imexd_health *h, const uint8_t uuid[16]);

/* t->mark[q] = 1 for each peer q sharing a domain with peer @p. */
void hl_mark_shared(struct imexd_health *h, int p);
/* What changed: peer @p's state, or what it reported. */
void hl_state_changed(struct imexd_health *h, int p);
void hl_report_changed(struct imexd_health *h, int p);
void hl_set_state(struct imexd_health *h, int p, uint8_t state,
		  uint64_t since, const char *why);
/* Every input runs between these: deadlines passed, then what is due. */
void hl_begin(struct imexd_health *h, uint64_t now);
void hl_end(struct imexd_health *h);

/* health_status.c */
/* @ms of the health clock as ISO 8601 UTC ("" when the wall is unknown). */
void hl_iso(const struct imexd_health *h, uint64_t ms, char out[32]);
/* Why peer @pe is in its state; "" when connected. */
void hl_peer_reason(const struct imexd_health *h, const struct hpeer *pe,
		    char *out, size_t len);
bool hl_dom_ready(const struct imexd_health *h, const struct hdom *d,
		  char *why, size_t len);
void hl_status_flush(struct imexd_health *h);

/* health_tab.c */
int hl_tab_build(const struct imexd_health *h,
		 const struct imexd_def *const *defs, size_t n, struct htab *t);
void hl_tab_swap(struct imexd_health *h, struct htab *t);
void hl_tab_free(struct htab *t);

#endif /* IMEXD_HEALTH_INTERNAL_H */
