// SPDX-License-Identifier: GPL-2.0
/*
 * imexd.conf's reader (config.h): open and read the file, then hand it to
 * the parser (config.c).  Daemon side: the parser is the core's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config_internal.h"

#define CONFIG_FILE_MAX		(1 << 20)	/* a config is a few hundred bytes */

static int read_file(const struct pos *p, int fd, char **buf, size_t *len)
{
	struct stat st;
	size_t got = 0;
	ssize_t r = 0;
	int e;

	if (fstat(fd, &st) < 0) {
		e = errno;
		imexd_config_fail(p, "cannot stat: %s", strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode))
		return imexd_config_fail(p, "not a regular file");
	if (st.st_size > CONFIG_FILE_MAX) {
		imexd_config_fail(p, "larger than %d bytes", CONFIG_FILE_MAX);
		return -EFBIG;
	}
	*buf = malloc((size_t)st.st_size + 1);
	if (!*buf) {
		imexd_config_fail(p, "out of memory");
		return -ENOMEM;
	}
	/* At most what fstat promised: a growing file is cut, not followed. */
	while (got < (size_t)st.st_size) {
		r = read(fd, *buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (r < 0) {
		e = errno;
		free(*buf);
		*buf = NULL;
		imexd_config_fail(p, "cannot read: %s", strerror(e));
		return -e;
	}
	*len = got;
	return 0;
}

int imexd_config_load(struct imexd_config *cfg, const char *path, char *err,
		      size_t errlen)
{
	struct pos p = { path, 0, err, errlen };
	char *buf = NULL;
	size_t len = 0;
	int fd, ret;

	if (!path)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		imexd_config_fail(&p, "cannot open: %s", strerror(-ret));
		return ret;
	}
	ret = read_file(&p, fd, &buf, &len);
	close(fd);
	if (ret)
		return ret;
	ret = imexd_config_parse(cfg, path, buf, len, err, errlen);
	free(buf);
	return ret;
}
