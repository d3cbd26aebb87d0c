// SPDX-License-Identifier: GPL-2.0
/*
 * imexd's configuration as the daemon uses it: the default file that may be
 * missing, the checks of --check-config, and what SIGHUP applies and logs.
 * The file format itself is config.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemon.h"
#include "log.h"
#include "nodelist.h"
#include "tls.h"

int imexd_daemon_load_config(struct imexd_config *cfg, const char *path,
			     bool explicit, char *err, size_t errlen)
{
	struct imexd_config tmp;
	int r;

	imexd_config_defaults(&tmp);
	if (!explicit && access(path, F_OK) < 0 && errno == ENOENT) {
		*cfg = tmp;
		return 0;
	}
	r = imexd_config_load(&tmp, path, err, errlen);
	if (r < 0)
		return r;
	*cfg = tmp;
	return 0;
}

int imexd_daemon_load_nodes(const char *path, struct imexd_member **out,
			    size_t *count, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	*out = NULL;
	*count = 0;
	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		snprintf(err, errlen, "NODES_FILE %s: %s", path, strerror(errno));
		return r;
	}
	buf = calloc(1, 1 << 20);
	if (!buf) {
		fclose(f);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	len = fread(buf, 1, (1 << 20) - 1, f);
	r = ferror(f) ? -EIO : 0;
	if (!r && !feof(f)) {
		snprintf(err, errlen, "NODES_FILE %s: larger than 1 MiB", path);
		r = -EFBIG;
	}
	fclose(f);
	if (r == -EIO)
		snprintf(err, errlen, "NODES_FILE %s: cannot read it", path);
	if (!r)
		r = imexd_nodelist_parse(path, buf, len, out, count, err,
					 errlen);
	free(buf);
	return r;
}

static int check_nodes_file(const char *path, size_t *count, char *err,
			    size_t errlen)
{
	struct imexd_member *members = NULL;
	int r = imexd_daemon_load_nodes(path, &members, count, err, errlen);

	free(members);
	return r;
}

int imexd_daemon_check_config(const struct imexd_config *cfg, char *err,
			      size_t errlen)
{
	size_t n;
	int r;

	if (cfg->nodes_file[0]) {
		r = check_nodes_file(cfg->nodes_file, &n, err, errlen);
		if (r < 0)
			return r;
	}
	if (cfg->tls) {
		struct imexd_tls *tls = NULL;

		r = imexd_tls_new(&tls, cfg->node_name, cfg->tls_ca_file,
				  cfg->tls_cert_file, cfg->tls_key_file, err,
				  errlen);
		imexd_tls_free(tls);
		if (r < 0)
			return r;
	}
	return 0;
}

#define CHANGED(key, fmt, field) do {						\
		if (old->field != new->field)					\
			log_info("SIGHUP: " key " " fmt " -> " fmt "%s",	\
				 old->field, new->field, timing_note);		\
	} while (0)

static void log_reload(const struct imexd_config *old,
		       const struct imexd_config *new)
{
	/* Timers already running keep their deadlines (imexd_node_set_timing). */
	const char *timing_note = " (from the next heartbeat on)";

	CHANGED("HEARTBEAT_INTERVAL_MS", "%u", heartbeat_interval_ms);
	CHANGED("HEARTBEAT_MISS_COUNT", "%u", heartbeat_miss_count);
	CHANGED("DISCONNECTED_GRACE_SECONDS", "%" PRId64, disconnected_grace_s);
	if (old->log_level != new->log_level)
		log_info("SIGHUP: LOG_LEVEL %s -> %s",
			 imexd_log_level_name(old->log_level),
			 imexd_log_level_name(new->log_level));
}

static void warn_restart_keys(const struct imexd_config *cur,
			      const struct imexd_config *file)
{
	const char *fix = "restart imexd to apply it ('systemctl restart imexd')";

	if (strcmp(cur->node_name, file->node_name))
		log_warn("SIGHUP: NODE_NAME changed to '%s': %s", file->node_name, fix);
	if (strcmp(cur->listen_address, file->listen_address))
		log_warn("SIGHUP: LISTEN_ADDRESS changed to '%s': %s",
			 file->listen_address, fix);
	if (cur->listen_port != file->listen_port)
		log_warn("SIGHUP: LISTEN_PORT changed to %u: %s", file->listen_port, fix);
	if (strcmp(cur->state_directory, file->state_directory))
		log_warn("SIGHUP: STATE_DIRECTORY changed to '%s': %s",
			 file->state_directory, fix);
	if (cur->election_timeout_ms != file->election_timeout_ms)
		log_warn("SIGHUP: ELECTION_TIMEOUT_MS changed to %u: %s",
			 file->election_timeout_ms, fix);
	if (strcmp(cur->nodes_file, file->nodes_file))
		log_warn("SIGHUP: NODES_FILE changed to '%s': %s",
			 file->nodes_file, fix);
	if (strcmp(cur->metrics_textfile_dir, file->metrics_textfile_dir) ||
	    cur->metrics_textfile_set != file->metrics_textfile_set)
		log_warn("SIGHUP: METRICS_TEXTFILE_DIR changed to '%s': %s",
			 file->metrics_textfile_dir, fix);
	if (cur->tls != file->tls)
		log_warn("SIGHUP: TLS changed to %s: %s", file->tls ? "yes" : "no", fix);
	if (strcmp(cur->tls_ca_file, file->tls_ca_file) ||
	    strcmp(cur->tls_cert_file, file->tls_cert_file) ||
	    strcmp(cur->tls_key_file, file->tls_key_file))
		log_info("SIGHUP: TLS file names changed: send SIGUSR1 to load them");
}

int imexd_daemon_reread_config(struct imexd_config *cur, const char *path,
			       bool explicit, char *err, size_t errlen)
{
	struct imexd_config file, next;
	size_t n;
	int r;

	r = imexd_daemon_load_config(&file, path, explicit, err, errlen);
	if (r == 0 && file.nodes_file[0]) {
		r = check_nodes_file(file.nodes_file, &n, err, errlen);
		if (!r)
			log_info("SIGHUP: NODES_FILE %s lists %zu nodes",
				 file.nodes_file, n);
	}
	if (r < 0)
		return r;
	warn_restart_keys(cur, &file);
	next = *cur;
	imexd_config_apply_reloadable(&next, &file);
	log_reload(cur, &next);
	*cur = next;
	imexd_log_set_level(cur->log_level);
	return 0;
}
