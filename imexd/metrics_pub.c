// SPDX-License-Identifier: GPL-2.0
/* The daemon's metrics publisher: collect, format, write (metrics_pub.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "log.h"
#include "metrics.h"
#include "metrics_collect.h"
#include "metrics_file.h"
#include "metrics_pub.h"

struct imexd_metrics_pub {
	char node[IMEX_NAME_MAX];
	const char *version;
	struct imexd_metrics_state st;
	struct imexd_metrics_file *file;
	bool read_failing;
};

static bool is_dir(const char *path)
{
	struct stat sb;

	return !stat(path, &sb) && S_ISDIR(sb.st_mode);
}

int imexd_metrics_pub_new(const struct imexd_config *cfg, const char *version,
			  struct imexd_metrics_pub **out)
{
	const char *dir = cfg->metrics_textfile_dir;
	struct imexd_metrics_pub *p;
	int r;

	*out = NULL;
	if (!dir[0]) {
		log_info("metrics: off (METRICS_TEXTFILE_DIR is empty)");
		return 0;
	}
	if (!cfg->metrics_textfile_set && !is_dir(dir)) {
		log_info("metrics: off (%s does not exist: no node exporter; set METRICS_TEXTFILE_DIR to write them elsewhere)",
			 dir);
		return 0;
	}
	if (!is_dir(dir))
		log_warn("metrics: METRICS_TEXTFILE_DIR %s is not a directory: create it (imexd keeps trying)",
			 dir);
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	snprintf(p->node, sizeof(p->node), "%s", cfg->node_name);
	p->version = version;
	r = imexd_metrics_state_init(&p->st);
	if (!r)
		r = imexd_metrics_file_new(dir, &p->file);
	if (r) {
		imexd_metrics_state_free(&p->st);
		free(p);
		return r;
	}
	log_info("metrics: writing %s", imexd_metrics_file_path(p->file));
	*out = p;
	return 0;
}

void imexd_metrics_pub_tick(struct imexd_metrics_pub *p, uint64_t now,
			    struct imexd_kernel *k,
			    const struct imexd_node *core, bool attached)
{
	struct imexd_metrics m;
	char msg[512] = "", *text = NULL;
	size_t len = 0;
	int r;

	if (!p)
		return;
	memset(&m, 0, sizeof(m));
	m.version = p->version;
	m.node = p->node;
	r = imexd_metrics_collect(k, core, attached, &p->st, &m, msg,
				  sizeof(msg));
	if (r) {
		/* Keep the last file: its mtime shows it is getting old. */
		if (!p->read_failing)
			log_warn("metrics: cannot read the kernel's state: %s",
				 msg[0] ? msg : strerror(-r));
		p->read_failing = true;
		return;
	}
	p->read_failing = false;
	if (imexd_metrics_format(&m, &text, &len)) {
		log_err("metrics: out of memory");
		return;
	}
	imexd_metrics_file_put(p->file, now, text, len);
	free(text);
}

void imexd_metrics_pub_free(struct imexd_metrics_pub *p, bool clean)
{
	if (!p)
		return;
	imexd_metrics_file_free(p->file, clean);
	imexd_metrics_state_free(&p->st);
	free(p);
}
