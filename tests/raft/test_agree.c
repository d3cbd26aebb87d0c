// SPDX-License-Identifier: GPL-2.0
/*
 * The agreement part on its own: a node refuses to start from a raft log
 * whose group another NODES_FILE formed (the ids would count votes for the
 * wrong nodes), says which nodes formed it, and starts with the right one.
 * The cluster behaviour is the simulator's (sim_agree).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agree.h"

/* Start a node of @roster on @disk; returns imexd_agree_start()'s value and
 * copies the LOG lines it queued into @logs. */
static int start_on(struct imexd_raftlog_mem *disk, const char *const *roster,
		    unsigned n, char *logs, size_t len)
{
	struct imexd_agree_config cfg = {
		.roster = roster, .n_roster = n, .self = "a",
	};
	struct imexd_raftlog_io io;
	struct imexd_raftlog *log = NULL;
	struct imexd_agree_action act;
	struct imexd_agree *ag = NULL;
	char note[256], err[256];
	int rv;

	imexd_raftlog_mem_io(disk, &io);
	assert_int_equal(imexd_raftlog_open(&log, &io, note, sizeof(note), err,
					    sizeof(err)), 0);
	snprintf(cfg.identity.name, sizeof(cfg.identity.name), "a");
	cfg.identity.uuid[0] = 1;
	cfg.identity.max_channels = 8;
	cfg.log = log;
	assert_int_equal(imexd_agree_new(&cfg, &ag), 0);
	rv = imexd_agree_start(ag, 1000, NULL, 0);
	logs[0] = '\0';
	while (imexd_agree_next(ag, &act))
		if (act.type == IMEXD_AGREE_LOG)
			snprintf(logs + strlen(logs), len - strlen(logs),
				 "%s\n", act.message);
	imexd_agree_free(ag);
	imexd_raftlog_close(log);
	return rv;
}

static void test_a_log_of_another_group_is_refused(void **state)
{
	static const char *const abc[] = { "a", "b", "c" };
	static const char *const abd[] = { "a", "b", "d" };
	static const char *const zabc[] = { "0", "a", "b", "c" };
	struct imexd_raftlog_mem *disk = imexd_raftlog_mem_new();
	char logs[2048];

	(void)state;
	assert_non_null(disk);
	/* First start: the group a, b, c is written to the log. */
	assert_int_equal(start_on(disk, abc, 3, logs, sizeof(logs)), 0);
	/* Same group, any order: fine. */
	assert_int_equal(start_on(disk, (const char *const[]){ "c", "a", "b" },
				  3, logs, sizeof(logs)), 0);
	/* c replaced by d: refused, and the line names the stored group. */
	assert_int_equal(start_on(disk, abd, 3, logs, sizeof(logs)), -ESTALE);
	assert_non_null(strstr(logs, "formed by nodes a, b, c"));
	assert_non_null(strstr(logs, "NODES_FILE"));
	/* A node added in front shifts every id: refused too. */
	assert_int_equal(start_on(disk, zabc, 4, logs, sizeof(logs)), -ESTALE);
	imexd_raftlog_mem_free(disk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_log_of_another_group_is_refused),
	};

	return cmocka_run_group_tests_name("agree", tests, NULL, NULL);
}
