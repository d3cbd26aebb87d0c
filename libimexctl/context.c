// SPDX-License-Identifier: LGPL-2.1-or-later
/* The library context: a lazily opened netlink socket and the last error. */
#include <errno.h>
#include <stdlib.h>

#include <netlink/socket.h>

#include "internal.h"

IMEXCTL_API int imexctl_new(struct imexctl **ctxp)
{
	struct imexctl *ctx;

	if (!ctxp)
		return -EINVAL;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	*ctxp = ctx;
	return 0;
}

IMEXCTL_API void imexctl_free(struct imexctl *ctx)
{
	if (!ctx)
		return;
	if (ctx->sk)
		nl_socket_free(ctx->sk);
	free(ctx);
}
