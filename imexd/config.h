/* SPDX-License-Identifier: GPL-2.0 */
/*
 * imexd.conf: KEY=VALUE lines, '#' comments, blank lines ignored, no
 * quoting.  Every key, its default and whether SIGHUP reloads it:
 *
 *   NODE_NAME=<name>                 host name          no
 *   LISTEN_ADDRESS=<ipv4|ipv6|*>     *                  no
 *   LISTEN_PORT=<1..65535>           50100              no
 *   STATE_DIRECTORY=<abs path>       /var/lib/imexd     no
 *   HEARTBEAT_INTERVAL_MS=<50..60000> 1000              yes
 *   HEARTBEAT_MISS_COUNT=<1..100>    3                  yes
 *   DISCONNECTED_GRACE_SECONDS=<-1|0..86400> 30         yes
 *   ELECTION_TIMEOUT_MS=<100..60000> 1000               no
 *   TLS=<yes|no>                     no                 no
 *   TLS_CA_FILE=<abs path>           (none)             SIGUSR1
 *   TLS_CERT_FILE=<abs path>         (none)             SIGUSR1
 *   TLS_KEY_FILE=<abs path>          (none)             SIGUSR1
 *   NODES_FILE=<abs path>            (none)             no
 *   LOG_LEVEL=<err|warn|info|debug>  info               yes
 *   METRICS_TEXTFILE_DIR=<abs path|> (see below)        no
 *
 * METRICS_TEXTFILE_DIR: where imexd writes imexd.prom for the node
 * exporter's textfile collector.  Left out: IMEXD_METRICS_TEXTFILE_DIR if
 * that directory exists at start (the node exporter is installed), else
 * off; empty: off; a path: that directory, which must exist.
 *
 * An unknown key, a repeated key, a bad value or a malformed line is an
 * error naming file:line and the key; nothing of a bad file is applied.
 * The two-phase protocol's CHANGE_STEP_TIMEOUT_MS and CHANGE_LEASE_MS are
 * refused with a message saying they are gone.
 */
#ifndef IMEXD_CONFIG_H
#define IMEXD_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/imex.h>

#define IMEXD_CONFIG_PATH "/etc/imex/imexd.conf"
#define IMEXD_METRICS_TEXTFILE_DIR "/var/lib/prometheus/node-exporter"

struct imexd_config {
	char node_name[IMEX_NAME_MAX];
	char listen_address[64];	/* "*" for any */
	uint16_t listen_port;
	char state_directory[PATH_MAX];
	uint32_t heartbeat_interval_ms;
	uint32_t heartbeat_miss_count;
	int64_t disconnected_grace_s;
	uint32_t election_timeout_ms;
	bool tls;
	char tls_ca_file[PATH_MAX];
	char tls_cert_file[PATH_MAX];
	char tls_key_file[PATH_MAX];
	char nodes_file[PATH_MAX];
	int log_level;			/* syslog levels: 3, 4, 6, 7 */
	char metrics_textfile_dir[PATH_MAX];	/* "": off */
	bool metrics_textfile_set;	/* given in the file (else a default) */
};

/* Fill in every default (node name from gethostname()). */
void imexd_config_defaults(struct imexd_config *cfg);

/*
 * Parse @len bytes of @text as the file @path on top of @cfg.  Returns 0,
 * or -EINVAL with "@path:LINE: KEY: what is wrong" in @err, leaving @cfg
 * unchanged.  Also checks cross-key rules (TLS=yes needs all three files).
 */
int imexd_config_parse(struct imexd_config *cfg, const char *path,
		       const char *text, size_t len, char *err, size_t errlen);

/* Read @path and parse it; a missing file is an error with its errno. */
int imexd_config_load(struct imexd_config *cfg, const char *path, char *err,
		      size_t errlen);

/* Copy the keys SIGHUP may change from @src into @dst. */
void imexd_config_apply_reloadable(struct imexd_config *dst,
				   const struct imexd_config *src);

#endif /* IMEXD_CONFIG_H */
