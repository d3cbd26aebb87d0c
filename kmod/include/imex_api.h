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
 */
#ifndef _IMEX_API_H
#define _IMEX_API_H

#include <linux/types.h>
#include <linux/uuid.h>

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

#endif /* _IMEX_API_H */
