// SPDX-License-Identifier: GPL-2.0
/*
 * kfuzz: random ioctls on channel fds, with handles made up or seen.
 */
#include "kfuzz.h"

/* ---- channel fds ------------------------------------------------------- */

static __thread int fds[FDS] = { -1, -1, -1, -1, -1, -1, -1, -1 };
static __thread uint32_t fd_chan[FDS];
static __thread struct imex_handle handles[HANDLES];
static __thread unsigned int nhandles;

static void random_handle(struct imex_handle *h, bool *local)
{
	*local = nhandles && chance(70);
	if (*local) {
		*h = handles[rnd(nhandles)];
		return;
	}
	uuid_of(h->node_uuid, rnd(UUIDS));
	h->id = chance(50) ? rnd(8) : rnd64();
}

void fuzz_ioctl(void)
{
	uint8_t arg[4096];
	unsigned int slot = rnd(FDS);
	int fd = fds[slot], r;
	struct imex_channel_info info;
	struct imex_export_arg ex;
	struct imex_import_arg im;
	struct imex_revoked_arg rv;
	struct imex_revoked_entry ent[8];
	struct imex_handle h;
	struct pollfd pfd;
	char path[64];
	bool local;
	size_t i;
	unsigned long cmd;

	if (fd < 0 || chance(5)) {
		if (fd >= 0)
			close(fd);
		fd_chan[slot] = rnd(24);
		snprintf(path, sizeof(path), "/dev/" IMEX_DEVDIR "/channel%u",
			 fd_chan[slot]);
		fds[slot] = open(path, (chance(90) ? O_RDWR : O_RDONLY) | O_CLOEXEC);
		return;
	}
	stat_ioctl++;
	switch (rnd(9)) {
	case 0:
		memset(&info, 0xa5, sizeof(info));
		r = ioctl(fd, IMEX_IOC_CHANNEL_INFO, &info);
		if (!r && (info.channel_id != fd_chan[slot] || info.flags ||
			   info.reserved[0] || info.reserved[1] ||
			   info.reserved[2] || info.reserved[3] ||
			   !memchr(info.domain_name, '\0', sizeof(info.domain_name))))
			broken("CHANNEL_INFO on channel %u: id %u, flags %#x, reserved or name not clean",
			       fd_chan[slot], info.channel_id, info.flags);
		break;
	case 1:
		memset(&ex, 0, sizeof(ex));
		ex.desc_len = chance(80) ? 1 + rnd(IMEX_DESC_MAX) : any_u32();
		ex.flags = chance(90) ? 0 : any_u32();
		for (i = 0; i < sizeof(ex.desc); i++)
			ex.desc[i] = (uint8_t)rnd(256);
		r = ioctl(fd, IMEX_IOC_EXPORT, &ex);
		if (!r) {
			if (ex.desc_len < 1 || ex.desc_len > IMEX_DESC_MAX || ex.flags)
				broken("EXPORT accepted desc_len %u flags %#x",
				       ex.desc_len, ex.flags);
			handles[nhandles < HANDLES ? nhandles++ : rnd(HANDLES)] = ex.handle;
		}
		break;
	case 2:
		random_handle(&h, &local);
		r = ioctl(fd, IMEX_IOC_UNEXPORT, &h);
		break;
	case 3:
	case 4:
		memset(&im, 0, sizeof(im));
		random_handle(&im.handle, &local);
		/* A remote handle waits for the manager: keep that short. */
		im.timeout_ms = 1 + rnd(5);
		im.flags = chance(95) ? 0 : any_u32();
		im.reserved = chance(95) ? 0 : any_u32();
		r = ioctl(fd, IMEX_IOC_IMPORT, &im);
		if (!r && (im.desc_len < 1 || im.desc_len > IMEX_DESC_MAX))
			broken("IMPORT returned desc_len %u", im.desc_len);
		break;
	case 5:
		random_handle(&h, &local);
		r = ioctl(fd, IMEX_IOC_UNIMPORT, &h);
		break;
	case 6:
		memset(&rv, 0, sizeof(rv));
		rv.count = chance(80) ? rnd(9) : any_u32();
		rv.entries = (uintptr_t)ent;
		if (rv.count > 8)
			rv.entries = chance(50) ? 0 : 1;	/* refused, no write */
		r = ioctl(fd, IMEX_IOC_REVOKED, &rv);
		if (!r && rv.count > 8)
			broken("REVOKED wrote %u entries to a bad pointer", rv.count);
		break;
	case 7:
		pfd.fd = fd;
		pfd.events = POLLIN | POLLPRI | POLLOUT;
		r = poll(&pfd, 1, 0);
		break;
	default:
		/* Any command number and size, arguments random or unmapped. */
		/* Other types stay near ours: generic VFS ioctls could
		 * change the device node itself (FS_IOC_SETFLAGS). */
		cmd = _IOC(rnd(4), chance(85) ? IMEX_IOC_MAGIC : IMEX_IOC_MAGIC + 1, rnd(12),
			   chance(50) ? rnd(600) : rnd(1 << 14));
		for (i = 0; i < sizeof(arg); i++)
			arg[i] = (uint8_t)rnd(256);
		if (cmd == IMEX_IOC_IMPORT)
			((struct imex_import_arg *)arg)->timeout_ms = 1 + rnd(5);
		if (cmd == IMEX_IOC_REVOKED)
			((struct imex_revoked_arg *)arg)->entries = 0;
		r = ioctl(fd, cmd, chance(90) ? (void *)arg : (void *)8);
	}
	if (r == 0)
		stat_ioctl_ok++;
}

void close_fds(void)
{
	for (unsigned int i = 0; i < FDS; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
	nhandles = 0;
}
