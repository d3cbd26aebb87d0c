// SPDX-License-Identifier: GPL-2.0
/*
 * The imexd.conf parser: a refused file leaves the configuration untouched
 * and says why; an accepted one leaves every value in its documented range.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_path(const char *p)
{
	size_t n = strnlen(p, PATH_MAX);

	if (n == PATH_MAX || (n && p[0] != '/'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct imexd_config cfg, before;
	char err[512];
	int r;

	imexd_config_defaults(&cfg);
	/* A valid node name: the host's may not be one. */
	strcpy(cfg.node_name, "fuzz");
	memcpy(&before, &cfg, sizeof(cfg));
	memset(err, 0x5a, sizeof(err));

	r = imexd_config_parse(&cfg, "fuzz.conf", (const char *)data, size,
			       err, sizeof(err));
	if (!memchr(err, '\0', sizeof(err)))
		abort();
	if (r) {
		/* Padding too, on purpose: before is a byte copy of cfg. */
		/* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison) */
		if (r != -EINVAL || !err[0] || memcmp(&cfg, &before, sizeof(cfg)))
			abort();
		return 0;
	}
	if (err[0] || !imexd_name_valid(cfg.node_name))
		abort();
	if (!memchr(cfg.listen_address, '\0', sizeof(cfg.listen_address)) ||
	    !cfg.listen_address[0])
		abort();
	if (!cfg.listen_port)
		abort();
	if (cfg.heartbeat_interval_ms < 50 || cfg.heartbeat_interval_ms > 60000 ||
	    cfg.heartbeat_miss_count < 1 || cfg.heartbeat_miss_count > 100 ||
	    cfg.disconnected_grace_s < -1 || cfg.disconnected_grace_s > 86400 ||
	    cfg.election_timeout_ms < 100 || cfg.election_timeout_ms > 60000)
		abort();
	if (cfg.log_level != 3 && cfg.log_level != 4 && cfg.log_level != 6 &&
	    cfg.log_level != 7)
		abort();
	check_path(cfg.state_directory);
	if (!cfg.state_directory[0])
		abort();
	check_path(cfg.tls_ca_file);
	check_path(cfg.tls_cert_file);
	check_path(cfg.tls_key_file);
	check_path(cfg.nodes_file);
	if (cfg.tls && (!cfg.tls_ca_file[0] || !cfg.tls_cert_file[0] ||
			!cfg.tls_key_file[0]))
		abort();

	/* Reloading what was accepted changes nothing. */
	memcpy(&before, &cfg, sizeof(cfg));
	imexd_config_apply_reloadable(&cfg, &before);
	/* Padding too, on purpose: before is a byte copy of cfg. */
	/* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison) */
	if (memcmp(&cfg, &before, sizeof(cfg)))
		abort();
	return 0;
}
