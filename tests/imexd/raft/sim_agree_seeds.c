// SPDX-License-Identifier: GPL-2.0
/*
 * The node simulator's seed runs (see sim_agree.c): random requests under
 * random crashes, partitions, one-way cuts and full disks for a seeded
 * span of simulated time, then the final history check.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_agree.h"

/* A random request (ids unsorted, with duplicates: agree sorts them). */
static void random_cmd(struct sw *w, struct req_buf *b)
{
	unsigned n = sw_n(w), nodes[4], nm = 1 + sw_rand(w, n < 4 ? n : 4);
	unsigned i, j, type = sw_rand(w, 10);
	uint32_t nids = sw_rand(w, 3) ? 0 : 1 + sw_rand(w, 3);
	uint32_t ids[4];
	char name[8];

	snprintf(name, sizeof(name), "d%u", sw_rand(w, NAMES));
	for (i = 0; i < nids; i++)
		ids[i] = sw_rand(w, 14);
	if (nids > 1)
		ids[nids - 1] = ids[0];
	if (type < 4) {
		for (i = 0; i < nm; i++) {
			do {
				nodes[i] = sw_rand(w, n);
				for (j = 0; j < i && nodes[j] != nodes[i]; j++)
					;
			} while (j < i);
		}
		mk_create(b, w, name, (uint8_t)(1 + sw_rand(w, 250)), nodes, nm,
			  nids ? 0 : 1 + sw_rand(w, 3), ids, nids);
	} else if (type < 6) {
		mk_simple(b, IMEX_CMD_DOMAIN_DELETE, name, NULL);
	} else if (type < 8) {
		mk_simple(b, type == 6 ? IMEX_CMD_CHANNEL_ALLOC :
			  IMEX_CMD_CHANNEL_FREE, name, NULL);
		memcpy(b->ids, ids, sizeof(ids));
		if (type == 6) {
			b->r.count = nids ? 0 : 1 + sw_rand(w, 2);
			b->r.ids = nids ? b->ids : NULL;
			b->r.nids = nids;
			b->r.uid = 1000;
			b->r.mode = 0660;
		} else {
			b->r.ids = b->ids;
			b->r.nids = nids ? nids : 1;
		}
	} else {
		mk_simple(b, IMEX_CMD_MEMBER_EVICT, name,
			  sw_name(w, sw_rand(w, n)));
	}
}

/* ---- random runs --------------------------------------------------------- */

struct timed { uint64_t at; int what, a, b; };

enum { T_RESTART = 1, T_HEAL, T_UNCUT, T_DISK };

unsigned run_seed(unsigned seed, unsigned n, uint64_t ms, bool print)
{
	struct sw *w = world(n, seed);
	struct timed t[64];
	unsigned nt = 0, i, v, down = 0;
	bool parted = false, nofull = getenv("SIM_NO_DISKFULL") != NULL;
	uint64_t end;

	sw_run_pred(w, 50 * ET, converged);
	end = sw_now(w) + ms;
	while (sw_now(w) < end) {
		unsigned r = sw_rand(w, 100), x = sw_rand(w, n);
		struct req_buf b;

		if (r < 55) {
			random_cmd(w, &b);
			sw_request(w, x, &b.r);
		} else if (r < 63 && nt < 60 && sw_up(w, x) &&
			   (down + 1) * 2 < n && !getenv("SIM_NO_CRASH")) {
			unsigned p = sw_rand(w, 4);

			if (p)
				sw_arm(w, x, (enum sw_crash_point)p);
			else
				sw_crash(w, x);
			down++;
			/* Short or long (10-30 election timeouts) absences. */
			t[nt++] = (struct timed){ sw_now(w) +
				(sw_rand(w, 5) ? 1 + sw_rand(w, 5) :
				 10 + sw_rand(w, 20)) * ET, T_RESTART, (int)x, 0 };
		} else if (r < 68 && !parted && nt < 60 && !getenv("SIM_NO_PART")) {
			bool side[SW_NODES_MAX];

			for (i = 0; i < n; i++)
				side[i] = sw_rand(w, 2);
			sw_partition(w, side);
			parted = true;
			t[nt++] = (struct timed){ sw_now(w) +
				(10 + sw_rand(w, 6)) * ET, T_HEAL, 0, 0 };
		} else if (r < 72 && !parted && nt < 60 && !getenv("SIM_NO_CUT")) {
			unsigned y = sw_rand(w, n);

			sw_cut(w, x, y, true);
			t[nt++] = (struct timed){ sw_now(w) +
				(10 + sw_rand(w, 6)) * ET, T_UNCUT, (int)x, (int)y };
		} else if (r < 75 && nt < 60 && sw_up(w, x) && !nofull) {
			sw_disk_full(w, x, true);
			t[nt++] = (struct timed){ sw_now(w) +
				(10 + sw_rand(w, 6)) * ET, T_DISK, (int)x, 0 };
		}
		sw_run_for(w, sw_rand(w, ET));
		for (i = 0; i < nt; ) {
			if (t[i].at > sw_now(w)) {
				i++;
				continue;
			}
			if (t[i].what == T_RESTART) {
				sw_arm(w, (unsigned)t[i].a, SW_CRASH_NONE);
				sw_restart(w, (unsigned)t[i].a);
				down--;
			} else if (t[i].what == T_HEAL) {
				sw_heal(w);
				parted = false;
			} else if (t[i].what == T_UNCUT) {
				sw_cut(w, (unsigned)t[i].a, (unsigned)t[i].b, false);
			} else {
				sw_disk_full(w, (unsigned)t[i].a, false);
			}
			t[i] = t[--nt];
		}
	}
	v = sw_check_final(w);
	if (print || v) {
		const struct sw_stats *s = sw_stats(w);

		printf("seed %u: %u nodes, %llu ms: %lu msgs, %lu applied, %lu acked, %lu failed, %lu crashes, %lu storage stops, %lu kernel steps (%lu refused)%s\n",
		       seed, n, (unsigned long long)sw_now(w), s->msgs,
		       s->applied, s->acked, s->failed, s->crashes,
		       s->storage_stops, s->kernel_steps, s->kernel_refused,
		       v ? ": FAILED" : "");
	}
	sw_free(w);
	return v;
}
