// SPDX-License-Identifier: GPL-2.0
/*
 * The state directory (store.h): node.json on disk.
 *
 * node.json is replaced atomically: the new content goes to a temp file in
 * the same directory (".tmp.*", never a name the loader reads), which is
 * fsync'ed and renamed over the old one, then the directory is fsync'ed so
 * the rename itself is durable.  A crash at any point leaves the old or the
 * new file; temp files a crash leaves behind are removed at the next open.
 * The domains themselves live in the raft log (raftlog.h, STATE_DIRECTORY/raft).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "store.h"
#include "store_file.h"

#define NODE_FILE_MAX	4096

struct imexd_store {
	char *dir;
	int dirfd;
	bool have_uuid;
	uint8_t uuid[16];
};

int imexd_store_open(struct imexd_store **store, const char *dir, char *err,
		     size_t errlen)
{
	struct imexd_store *s;

	if (!store || !dir || !*dir)
		return imexd_errf(err, errlen, -EINVAL, "no state directory");
	s = calloc(1, sizeof(*s));
	if (!s)
		return imexd_errf(err, errlen, -ENOMEM, "out of memory");
	s->dir = strdup(dir);
	s->dirfd = -1;
	if (!s->dir) {
		imexd_store_close(s);
		return imexd_errf(err, errlen, -ENOMEM, "out of memory");
	}
	s->dirfd = imexd_file_open_dir(AT_FDCWD, dir, 0, err, errlen);
	if (s->dirfd < 0) {
		int ret = s->dirfd;

		imexd_store_close(s);
		return ret;
	}
	imexd_file_remove_stale(s->dirfd);
	*store = s;
	return 0;
}

void imexd_store_close(struct imexd_store *s)
{
	if (!s)
		return;
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->dir);
	free(s);
}

static int node_uuid_read(struct imexd_store *s, uint8_t uuid[16], char *err,
			  size_t errlen)
{
	char *buf = NULL;
	size_t len;
	int ret;

	ret = imexd_file_read_at(s->dirfd, IMEXD_STORE_NODE_FILE, NODE_FILE_MAX,
				 &buf, &len);
	if (ret)
		return ret;
	ret = imexd_store_node_parse(buf, len, uuid, err, errlen);
	free(buf);
	return ret;
}

static int node_uuid_create(struct imexd_store *s, uint8_t uuid[16])
{
	char *text;
	size_t got = 0;
	int ret;

	while (got < 16) {
		ssize_t r = getrandom(uuid + got, 16 - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		got += (size_t)r;
	}
	uuid[6] = (uuid[6] & 0x0f) | 0x40;	/* version 4: random */
	uuid[8] = (uuid[8] & 0x3f) | 0x80;	/* RFC 4122 variant */
	text = imexd_store_node_text(uuid);
	ret = text ? imexd_file_replace(s->dirfd, s->dir, IMEXD_STORE_NODE_FILE,
					text, strlen(text)) : -ENOMEM;
	free(text);
	return ret;
}

int imexd_store_node_uuid(struct imexd_store *s, uint8_t uuid[16], char *err,
			  size_t errlen)
{
	if (errlen)
		err[0] = '\0';
	if (!s || !uuid)
		return -EINVAL;
	if (!s->have_uuid) {
		uint8_t u[16];
		int ret;

		/* A damaged node.json is an error, never a new identity. */
		ret = node_uuid_read(s, u, err, errlen);
		if (ret == -ENOENT)
			ret = node_uuid_create(s, u);
		if (ret)
			return ret;
		memcpy(s->uuid, u, sizeof(u));
		s->have_uuid = true;
	}
	memcpy(uuid, s->uuid, sizeof(s->uuid));
	return 0;
}
