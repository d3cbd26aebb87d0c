// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * CDI naming rules, as the reference implementation checks them, and the
 * defaults of struct imexctl_cdi_opts.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* Leaves room for "<vendor>-<class>_<id>.json" and a temp suffix in NAME_MAX. */
#define CDI_PART_MAX 63

static bool is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_alnum(char c)
{
	return is_letter(c) || (c >= '0' && c <= '9');
}

/* Vendor and class: a letter first, [A-Za-z0-9_.-] inside, alphanumeric last. */
static int check_qualifier(const char *name, const char **why)
{
	size_t i, len = name ? strlen(name) : 0;

	if (!len) {
		*why = "it is empty";
		return -EINVAL;
	}
	if (len > CDI_PART_MAX) {
		*why = "it is longer than 63 characters";
		return -EINVAL;
	}
	if (!is_letter(name[0])) {
		*why = "it must start with a letter";
		return -EINVAL;
	}
	for (i = 1; i + 1 < len; i++) {
		if (!is_alnum(name[i]) && !strchr("_.-", name[i])) {
			*why = "it may contain only letters, digits, '_', '.' and '-'";
			return -EINVAL;
		}
	}
	if (!is_alnum(name[len - 1])) {
		*why = "it must end with a letter or a digit";
		return -EINVAL;
	}
	return 0;
}

int imexctl_cdi_check_vendor(const char *name, const char **why)
{
	return check_qualifier(name, why);
}

int imexctl_cdi_check_class(const char *name, const char **why)
{
	return check_qualifier(name, why);
}

/* Device names: alphanumeric first and last, [A-Za-z0-9_.:-] inside. */
int imexctl_cdi_check_device(const char *name, const char **why)
{
	size_t i, len = name ? strlen(name) : 0;

	if (!len) {
		*why = "it is empty";
		return -EINVAL;
	}
	if (len > CDI_PART_MAX) {
		*why = "it is longer than 63 characters";
		return -EINVAL;
	}
	if (!is_alnum(name[0])) {
		*why = "it must start with a letter or a digit";
		return -EINVAL;
	}
	for (i = 1; i + 1 < len; i++) {
		if (!is_alnum(name[i]) && !strchr("_.:-", name[i])) {
			*why = "it may contain only letters, digits, '_', '.', ':' and '-'";
			return -EINVAL;
		}
	}
	if (!is_alnum(name[len - 1])) {
		*why = "it must end with a letter or a digit";
		return -EINVAL;
	}
	return 0;
}

/*
 * Transient spec ids follow the device-name rule; that also keeps '/' and
 * ".." out of the file name.
 */
int imexctl_cdi_check_id(const char *id, const char **why)
{
	if (id && strchr(id, '/')) {
		*why = "it must not contain '/'";
		return -EINVAL;
	}
	return imexctl_cdi_check_device(id, why);
}

const char *imexctl_cdi_vendor(const struct imexctl_cdi_opts *o)
{
	return o && o->vendor ? o->vendor : IMEXCTL_CDI_VENDOR;
}

const char *imexctl_cdi_class(const struct imexctl_cdi_opts *o)
{
	return o && o->class_name ? o->class_name : IMEXCTL_CDI_CLASS;
}

const char *imexctl_cdi_dir(const struct imexctl_cdi_opts *o)
{
	return o && o->dir ? o->dir : IMEXCTL_CDI_DIR;
}

const char *imexctl_cdi_all_name(const struct imexctl_cdi_opts *o)
{
	return o && o->all_name ? o->all_name : IMEXCTL_CDI_ALL;
}

int imexctl_cdi_opts_check(struct imexctl *ctx, const struct imexctl_cdi_opts *o)
{
	const char *why = NULL;
	const char *all = imexctl_cdi_all_name(o);

	if (imexctl_cdi_check_vendor(imexctl_cdi_vendor(o), &why) < 0)
		return imexctl_err(ctx, -EINVAL,
				   "invalid CDI vendor '%s': %s (e.g. 'example.com')",
				   imexctl_cdi_vendor(o), why);
	if (imexctl_cdi_check_class(imexctl_cdi_class(o), &why) < 0)
		return imexctl_err(ctx, -EINVAL, "invalid CDI class '%s': %s (e.g. 'channel')",
				   imexctl_cdi_class(o), why);
	if (all[0] && imexctl_cdi_check_device(all, &why) < 0)
		return imexctl_err(ctx, -EINVAL, "invalid CDI device name '%s': %s", all, why);
	if (!imexctl_cdi_dir(o)[0])
		return imexctl_err(ctx, -EINVAL, "empty CDI spec directory");
	return 0;
}

IMEXCTL_API int imexctl_cdi_name_check(enum imexctl_cdi_name kind,
				       const char *name, const char **why)
{
	const char *dummy;

	if (!why)
		why = &dummy;
	switch (kind) {
	case IMEXCTL_CDI_NAME_VENDOR:
		return imexctl_cdi_check_vendor(name, why);
	case IMEXCTL_CDI_NAME_CLASS:
		return imexctl_cdi_check_class(name, why);
	case IMEXCTL_CDI_NAME_DEVICE:
		return imexctl_cdi_check_device(name, why);
	case IMEXCTL_CDI_NAME_SPEC_ID:
		return imexctl_cdi_check_id(name, why);
	}
	*why = "unknown kind of name";
	return -EINVAL;
}
