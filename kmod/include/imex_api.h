/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-kernel API of imex.ko for other drivers (a GPU driver, say) that must
 * enforce the same IMEX channel boundary as the module: resolve a file
 * descriptor that user space claims is an IMEX channel to the channel it
 * really is, with a reference, and learn when mappings made for it must go.
 *
 *	struct imex_channel *ch = imex_channel_get_fd(fd);
 *	struct imex_channel_ident id;
 *
 *	if (IS_ERR(ch))
 *		return PTR_ERR(ch);	// -EBADF, -EINVAL (not a channel)
 *	err = imex_channel_notify_register(ch, &obj->revoke, obj_revoked);
 *	if (!err)
 *		err = imex_channel_ident(ch, &id);
 *	...				// map for (id.domain_uuid, id.channel_id)
 *
 *	// obj_revoked(): container_of(cb, struct obj, revoke), unmap
 *	// teardown: imex_channel_notify_unregister(&obj->revoke); then unmap
 *	//	if not done yet, imex_channel_put(ch)
 *
 * A check that ends within the call (is this fd the channel the request
 * names?) needs no channel reference: the file's pins the channel.
 *
 *	struct file *file;
 *	struct imex_channel *ch = imex_channel_fget(fd, &file);
 *
 *	if (IS_ERR(ch))
 *		return PTR_ERR(ch);
 *	err = imex_channel_ident(ch, &id);
 *	fput(file);			// ch is not to be used after this
 *
 * The reference keeps the channel object (not the grant) alive.  The grant
 * can end (revocation, domain deleted) or stop being usable (the domain is
 * DOWN: no manager keeps it) at any time; imex_channel_ident() fails from
 * then on, and a registered callback is called once.  A mapping made for a
 * channel must end when its callback runs.
 *
 * Each function is documented below, where a driver's author reads it.
 * The symbols are EXPORT_SYMBOL_GPL.  This header includes what it needs.
 */
#ifndef _IMEX_API_H
#define _IMEX_API_H

#include <linux/list.h>
#include <linux/types.h>
#include <linux/uuid.h>
#include <linux/imex.h>

struct file;
struct imex_channel;

/**
 * struct imex_channel_ident - what a channel is, fixed at grant time
 * @domain_uuid: the domain the channel is granted to
 * @fabric_uuid: the fabric the domain (and this node) is on
 * @fabric_partition: the fabric partition
 * @channel_id: the channel's number on this node
 *
 * Compare @domain_uuid and @channel_id of exporter and importer to decide
 * whether an import crosses the channel boundary.
 */
struct imex_channel_ident {
	uuid_t	domain_uuid;
	uuid_t	fabric_uuid;
	u32	fabric_partition;
	u32	channel_id;
};

/**
 * struct imex_revoke_cb - a revocation callback on one channel
 * @fn: the function imex_channel_notify_register() was given
 * @node: private to imex.ko
 * @state: private to imex.ko
 *
 * Embed one in the object that owns what was set up for the channel and
 * find that object from @fn with container_of().  Zero it (kzalloc(), or
 * ``= {}``) before its first registration; after that, imex.ko keeps it
 * consistent, and it may be registered again once its callback has been
 * called or it has been unregistered.  It must not be freed while
 * registered.
 */
struct imex_revoke_cb {
	void			(*fn)(struct imex_revoke_cb *cb);
	struct list_head	node;
	unsigned int		state;
};

/**
 * imex_channel_get_fd() - resolve a file descriptor to the channel it is
 * @fd: a file descriptor of the calling process
 *
 * Context: process context (looks up the caller's file table).
 * Return: a channel reference, to be dropped with imex_channel_put();
 * ERR_PTR(-EBADF) when @fd is not open, ERR_PTR(-EINVAL) when it is not an
 * IMEX channel.  A revoked channel still resolves: imex_channel_ident()
 * tells.
 */
struct imex_channel *imex_channel_get_fd(int fd);

/**
 * imex_channel_fget() - resolve a file descriptor for the length of a call
 * @fd: a file descriptor of the calling process
 * @file: set to the file of @fd on success, to NULL on failure
 *
 * What imex_channel_get_fd() does, at the cost of fget() and fput(): the
 * channel comes with no reference of its own, the reference to *@file
 * keeps it.  For a check made and finished within one call; to hold the
 * channel longer (a revocation callback), take imex_channel_get_file().
 *
 * Context: process context (looks up the caller's file table).
 * Return: the channel, valid until the caller's fput(*@file);
 * ERR_PTR(-EBADF) when @fd is not open, ERR_PTR(-EINVAL) when it is not an
 * IMEX channel (nothing to put then).  A revoked channel still resolves:
 * imex_channel_ident() tells.
 */
struct imex_channel *imex_channel_fget(int fd, struct file **file);

/**
 * imex_channel_get_file() - the channel a file is
 * @file: a file the caller holds a reference to, or NULL
 *
 * Context: any context.
 * Return: a channel reference, to be dropped with imex_channel_put();
 * ERR_PTR(-EINVAL) when @file is NULL or not an IMEX channel.
 */
struct imex_channel *imex_channel_get_file(struct file *file);

/**
 * imex_channel_put() - drop a channel reference
 * @ch: a reference from imex_channel_get_fd() or imex_channel_get_file()
 *
 * A callback still registered with the reference must be unregistered
 * first (imex_channel_notify_unregister()), or have been called.
 *
 * Context: any context; takes no lock.  It may be called from the
 * channel's own revocation callback.
 */
void imex_channel_put(struct imex_channel *ch);

/**
 * imex_channel_ident() - the identity of a usable channel
 * @ch: a channel reference, or imex_channel_fget()'s channel, its file held
 * @id: filled in on success
 *
 * The answer holds at the instant of the call only: to learn of a later
 * revocation or DOWN domain, register a callback (and, as that fails on a
 * channel that is not usable, register before calling this).
 *
 * Context: any context; takes no lock.
 * Return: 0; -ENODEV once the grant has ended (the channel was revoked or
 * its domain deleted); -ENOLINK while its domain is not usable (DOWN: no
 * manager keeps it), as open() of the channel refuses.  @id is left
 * untouched on failure.
 */
int imex_channel_ident(struct imex_channel *ch, struct imex_channel_ident *id);

/**
 * imex_channel_notify_register() - be told once when a channel's grant ends
 * @ch: a channel reference, held at least until the callback has been
 *	called or unregistered
 * @cb: the caller's callback structure (see &struct imex_revoke_cb)
 * @fn: the function to call with @cb
 *
 * @fn(@cb) is called exactly once, unless unregistered first, when the
 * grant ends (the channel is revoked or its domain deleted) or its domain
 * stops being usable (DOWN).  By then imex_channel_ident()
 * already fails on the channel.  A domain that is usable again does not
 * re-arm the callback: register again.
 *
 * @fn runs in process context from a work item, with no lock of imex.ko
 * held, one callback at a time: it may sleep and may call this API
 * (imex_channel_put() included, and registering or unregistering
 * callbacks, this one too), but should not block for long, as the next
 * callbacks wait for it.  So it must not wait for another callback to be
 * called, nor for a thread that is unregistering it.
 *
 * Context: process context; may sleep (takes imex.ko's lock).
 * Return: 0 once registered; -ENODEV when the grant has already ended and
 * -ENOLINK when the domain is not usable (@fn is not called: the caller
 * knows at once); -EBUSY when @cb is registered and not yet called;
 * -EINVAL when @fn is NULL.
 */
int imex_channel_notify_register(struct imex_channel *ch,
				 struct imex_revoke_cb *cb,
				 void (*fn)(struct imex_revoke_cb *cb));

/**
 * imex_channel_notify_unregister() - cancel a callback and wait for it
 * @cb: a callback structure, registered or not
 *
 * After this returns, @fn is not running and will not run for this
 * registration, so the object holding @cb may be freed, and the module
 * holding @fn unloaded: call it from the owner's teardown and module exit.
 * Called from @fn itself, it returns at once (the callback is then ending).
 * The caller must not hold a lock that @fn takes, as it may wait for @fn
 * (lockdep checks this).
 *
 * Context: process context; may sleep.
 * Return: true when the callback was pending and will now not be called;
 * false when it has already been called (or was never registered).
 */
bool imex_channel_notify_unregister(struct imex_revoke_cb *cb);

/**
 * imex_export() - export a descriptor on a channel file
 * @file: an IMEX channel file the caller holds a reference to
 * @desc: the descriptor
 * @len: its length, 1..%IMEX_DESC_MAX
 * @h: the handle, on success
 *
 * As IMEX_IOC_EXPORT: the export belongs to @file and ends at its last
 * close or when the channel is revoked.
 *
 * Context: process context; may sleep.
 * Return: 0, or the errors of IMEX_IOC_EXPORT; -EINVAL when @file is not an
 * IMEX channel.
 */
int imex_export(struct file *file, const void *desc, u32 len,
		struct imex_handle *h);

/**
 * imex_unexport() - end an export of a channel file
 * @file: the file that exported @h
 * @h: the handle imex_export() returned
 *
 * Context: process context; may sleep.
 * Return: 0, or the errors of IMEX_IOC_UNEXPORT; -EINVAL when @file is not
 * an IMEX channel.
 */
int imex_unexport(struct file *file, const struct imex_handle *h);

/**
 * imex_import() - import a handle on a channel file
 * @file: an IMEX channel file the caller holds a reference to
 * @h: the handle to import
 * @desc: where the descriptor goes
 * @len: in: the room at @desc; out: the descriptor's length
 * @timeout_ms: how long to wait for a remote handle (0:
 *	%IMEX_IMPORT_TIMEOUT_MS)
 *
 * As IMEX_IOC_IMPORT: the import belongs to @file and ends at its last
 * close.
 *
 * Context: process context; may sleep up to @timeout_ms.
 * Return: 0; -EMSGSIZE (and the length needed in *@len) when the descriptor
 * does not fit; -EINTR on a signal; the other errors of IMEX_IOC_IMPORT;
 * -EINVAL when @file is not an IMEX channel or @len is NULL.
 */
int imex_import(struct file *file, const struct imex_handle *h, void *desc,
		u32 *len, unsigned int timeout_ms);

#endif /* _IMEX_API_H */
