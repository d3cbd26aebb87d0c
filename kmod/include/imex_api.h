/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-kernel API of imex.ko for other drivers (a GPU driver, say) that must
 * enforce the same IMEX channel boundary as the module: resolve a file
 * descriptor that user space claims is an IMEX channel to the channel it
 * really is, with a reference.
 *
 *	struct imex_channel *ch = imex_channel_get_fd(fd);
 *	struct imex_channel_ident id;
 *
 *	if (IS_ERR(ch))
 *		return PTR_ERR(ch);	// -EBADF, -EINVAL (not a channel)
 *	err = imex_channel_ident(ch, &id);	// -ENODEV once revoked
 *	...
 *	imex_channel_put(ch);
 *
 * The reference keeps the channel object (not the grant) alive: a channel
 * may be revoked while referenced, after which imex_channel_ident() fails.
 *
 * Export and import on a channel file the caller holds (a struct file it
 * got with fget(), say), with the rules and errors of IMEX_IOC_EXPORT,
 * IMEX_IOC_UNEXPORT and IMEX_IOC_IMPORT in <linux/imex.h>:
 *
 *	imex_export(file, desc, len, &h)	// len 1..IMEX_DESC_MAX
 *	imex_unexport(file, &h)
 *	imex_import(file, &h, desc, &len, timeout_ms)
 *
 * imex_import() takes the room of @desc in *@len and returns the length
 * there; -EMSGSIZE (with the length needed) when it does not fit.  It may
 * sleep up to @timeout_ms (0: IMEX_IMPORT_TIMEOUT_MS) for a remote handle,
 * and returns -EINTR on a signal.  Exports and imports belong to the file:
 * they end at its last close, as for a process.  Any of them returns
 * -EINVAL when @file is not an IMEX channel.
 */
#ifndef _IMEX_API_H
#define _IMEX_API_H

#include <linux/types.h>
#include <linux/uuid.h>
#include <linux/imex.h>

struct imex_channel;

struct imex_channel_ident {
	uuid_t	domain_uuid;
	uuid_t	fabric_uuid;
	u32	fabric_partition;
	u32	channel_id;
};

struct imex_channel *imex_channel_get_fd(int fd);
struct imex_channel *imex_channel_get_file(struct file *file);
void imex_channel_put(struct imex_channel *ch);
int imex_channel_ident(struct imex_channel *ch, struct imex_channel_ident *id);

struct file;
int imex_export(struct file *file, const void *desc, u32 len,
		struct imex_handle *h);
int imex_unexport(struct file *file, const struct imex_handle *h);
int imex_import(struct file *file, const struct imex_handle *h, void *desc,
		u32 *len, unsigned int timeout_ms);

#endif /* _IMEX_API_H */
