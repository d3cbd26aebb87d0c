// SPDX-License-Identifier: GPL-2.0
/* File helpers of the state directory (store_file.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_file.h"

int imexd_file_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int imexd_file_replace(int dfd, const char *dpath, const char *name,
		       const void *data, size_t len)
{
	char *tmp = NULL;
	int fd, ret;

	if (asprintf(&tmp, "%s/" IMEXD_FILE_TMP_PREFIX "%s.XXXXXX", dpath,
		     name) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);	/* mode 0600 */
	if (fd < 0) {
		ret = -errno;
		free(tmp);
		return ret;
	}
	ret = imexd_file_write_all(fd, data, len);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && renameat(AT_FDCWD, tmp, dfd, name) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	else if (fsync(dfd) < 0)
		ret = -errno;
	free(tmp);
	return ret;
}

int imexd_file_read_at(int dfd, const char *name, size_t max, char **buf,
		       size_t *len)
{
	struct stat st;
	size_t got = 0;
	char *p;
	int fd, ret;

	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = -EINVAL;
	else if ((uint64_t)st.st_size > max)
		ret = -EFBIG;
	else
		ret = 0;
	p = ret ? NULL : malloc((size_t)st.st_size + 1);
	if (!ret && !p)
		ret = -ENOMEM;
	/* At most what fstat said: a file growing meanwhile is cut. */
	while (!ret && got < (size_t)st.st_size) {
		ssize_t r = read(fd, p + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			ret = -errno;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (ret) {
		free(p);
		return ret;
	}
	p[got] = '\0';
	*buf = p;
	*len = got;
	return 0;
}

int imexd_file_open_dir(int atfd, const char *path, int flags, char *err,
			size_t errlen)
{
	struct stat st;
	int fd, e;

	if (mkdirat(atfd, path, 0700) < 0 && errno != EEXIST) {
		e = errno;
		return imexd_errf(err, errlen, -e, "%s: cannot create: %s", path,
			    strerror(e));
	}
	fd = openat(atfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags);
	if (fd < 0) {
		e = errno;
		return imexd_errf(err, errlen, -e, "%s: cannot open: %s", path,
			    strerror(e));
	}
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
		close(fd);
		return imexd_errf(err, errlen, -EPERM,
			    "%s: not owned by this user: fix its owner", path);
	}
	/* Definitions decide who gets which channel: nobody else may write. */
	if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) < 0) {
		e = errno;
		close(fd);
		return imexd_errf(err, errlen, -e, "%s: cannot chmod 0700: %s", path,
			    strerror(e));
	}
	return fd;
}

void imexd_file_remove_stale(int dfd)
{
	struct dirent *de;
	DIR *d;
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, IMEXD_FILE_TMP_PREFIX,
			     strlen(IMEXD_FILE_TMP_PREFIX)))
			unlinkat(dfd, de->d_name, 0);
	closedir(d);
}
