// SPDX-License-Identifier: GPL-2.0
/*
 * imexd: the per-node IMEX daemon.
 *
 *   imexd [-f] [-c CONFIG] [--check-config] [-h] [--version]
 *
 * Without -f it detaches from the terminal (and logs to syslog) once it is
 * ready; under systemd it runs with -f (Type=notify).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "config.h"
#include "daemon.h"
#include "log.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: imexd [-f] [-c CONFIG] [--check-config] [-h] [--version]\n"
		"The per-node IMEX daemon: manages this node's IMEX domains with the\n"
		"imex kernel module and the daemons of the other member nodes.\n"
		"  -f, --foreground    stay in the foreground, log to stderr (systemd)\n"
		"  -c, --config FILE   configuration file (default %s;\n"
		"                      a missing default file means all defaults)\n"
		"      --check-config  check the configuration, node list and TLS files,\n"
		"                      print the result and exit (0: good)\n"
		"  -h, --help          this help\n"
		"      --version       print the version\n"
		"See imexd(8) and imexd.conf(5).\n", IMEXD_CONFIG_PATH);
}

/*
 * Fork; the parent waits until the child is ready (exit 0) or has failed
 * (its exit status).  Returns in the child with the fd to signal on.
 */
static int daemonize(int *ready_fd)
{
	int fds[2], status, fd;
	pid_t pid;
	char c;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		fprintf(stderr, "imexd: cannot create a pipe: %s\n", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "imexd: cannot fork: %s\n", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid > 0) {
		close(fds[1]);
		if (read(fds[0], &c, 1) == 1)
			_exit(0);
		if (waitpid(pid, &status, 0) == pid && WIFEXITED(status))
			_exit(WEXITSTATUS(status) ? WEXITSTATUS(status) : 1);
		_exit(1);
	}
	close(fds[0]);
	if (setsid() < 0 || chdir("/") < 0)
		_exit(1);
	umask(0077);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	/* stderr stays until ready, so start-up errors reach the terminal;
	 * after that, syslog. */
	*ready_fd = fds[1];
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct imexd_daemon_opts dopts = {
		.config_path = IMEXD_CONFIG_PATH,
		.ready_fd = -1,
	};
	struct imexd_config cfg;
	bool foreground = false, check = false;
	char err[1024] = "";
	int c, r;

	while ((c = getopt_long(argc, argv, "fc:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			foreground = true;
			break;
		case 'c':
			dopts.config_path = optarg;
			dopts.config_explicit = true;
			break;
		case 'C':
			check = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("imexd %s\n", IMEXD_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "imexd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}

	r = imexd_daemon_load_config(&cfg, dopts.config_path,
				     dopts.config_explicit, err, sizeof(err));
	if (r == 0 && check)
		r = imexd_daemon_check_config(&cfg, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "imexd: %s\n", err[0] ? err : strerror(-r));
		if (!check)
			fprintf(stderr, "imexd: not starting: fix the configuration (check it with 'imexd --check-config -c %s')\n",
				dopts.config_path);
		return 1;
	}
	if (check) {
		printf("%s: configuration OK (node %s, port %u, TLS %s)\n",
		       access(dopts.config_path, F_OK) ? "(defaults)" :
		       dopts.config_path, cfg.node_name, cfg.listen_port,
		       cfg.tls ? "on" : "off");
		return 0;
	}
	if (geteuid() != 0)
		fprintf(stderr, "imexd: warning: not running as root; managing the node needs CAP_SYS_ADMIN and CAP_NET_ADMIN\n");
	if (!foreground) {
		if (daemonize(&dopts.ready_fd) < 0)
			return 1;
	}
	return imexd_daemon_run(&cfg, &dopts);
}
