// SPDX-License-Identifier: LGPL-2.1-or-later
/* The context's last-error message: one sentence naming the object and the way out. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

int imexctl_err(struct imexctl *ctx, int err, const char *fmt, ...)
{
	va_list ap;

	ctx->extack = false;
	va_start(ap, fmt);
	vsnprintf(ctx->errmsg, sizeof(ctx->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

void imexctl_err_clear(struct imexctl *ctx)
{
	ctx->errmsg[0] = '\0';
	ctx->extack = false;
}

/*
 * A refusal from the kernel.  Its extended-ack text is the best description
 * there is; without one, say what errno means for this interface.
 */
int imexctl_err_kernel(struct imexctl *ctx, int err, const char *extack,
		       const char *what)
{
	if (extack && extack[0]) {
		imexctl_err(ctx, err, "%s: %s", what, extack);
		ctx->extack = true;
		return err;
	}

	switch (-err) {
	case EPERM:
	case EACCES:
		return imexctl_err(ctx, err,
				   "%s: not permitted: changes need CAP_SYS_ADMIN, run as root",
				   what);
	case ESRCH:
		return imexctl_err(ctx, err,
				   "%s: imexd is not running on this node: start it with 'systemctl start imexd'",
				   what);
	case ENOTCONN:
		return imexctl_err(ctx, err,
				   "%s: imexd detached before answering: check 'journalctl -u imexd' and retry",
				   what);
	case EOPNOTSUPP:
		return imexctl_err(ctx, err,
				   "%s: the loaded imex module does not support this operation: update the module",
				   what);
	default:
		return imexctl_err(ctx, err, "%s: %s", what, strerror(-err));
	}
}

IMEXCTL_API const char *imexctl_errmsg(const struct imexctl *ctx)
{
	return ctx ? ctx->errmsg : "no imexctl context";
}
