// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libimexctl's CDI rules: name validation (checked against a plain
 * restatement of the rules), the pure spec builder (its JSON must parse and
 * say what was asked) and the cdiVersion chooser on arbitrary JSON.
 *
 * Input: byte 0 picks the mode; the rest is its data.
 *   0: byte 1 the kind of name, then the name (to the first NUL)
 *   1: "vendor\0class\0all\0" then 16-byte channels {id, uid, gid, mode}
 *   2: a JSON text for imexctl_cdi_required_version()
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/* The rule as documented: first, inner and last character classes. */
static bool rule(const char *s, bool letter_first, const char *inner)
{
	size_t i, n = strlen(s);

	if (!n || n > 63 || !alnum(s[0]) || !alnum(s[n - 1]))
		return false;
	if (letter_first && s[0] >= '0' && s[0] <= '9')
		return false;
	for (i = 1; i + 1 < n; i++)
		if (!alnum(s[i]) && !strchr(inner, s[i]))
			return false;
	return true;
}

static void names(const uint8_t *data, size_t size)
{
	char name[256];
	const char *why = NULL;
	bool ok, want;
	int kind, r;

	if (size < 1)
		return;
	kind = data[0] % 6;
	size--;
	if (size >= sizeof(name))
		size = sizeof(name) - 1;
	memcpy(name, data + 1, size);
	name[size] = '\0';

	r = imexctl_cdi_name_check((enum imexctl_cdi_name)kind, name, &why);
	ok = r == 0;
	if (!ok && (r != -EINVAL || !why))
		abort();
	switch (kind) {
	case IMEXCTL_CDI_NAME_VENDOR:
	case IMEXCTL_CDI_NAME_CLASS:
		want = rule(name, true, "_.-");
		break;
	case IMEXCTL_CDI_NAME_DEVICE:
	case IMEXCTL_CDI_NAME_SPEC_ID:
		want = rule(name, false, "_.:-");
		break;
	default:
		want = false;
	}
	if (ok != want)
		abort();
	/* NULL means "no reason wanted", never a crash. */
	(void)imexctl_cdi_name_check((enum imexctl_cdi_name)kind, name, NULL);
}

static const char *take(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *nul = memchr(*p, '\0', (size_t)(end - *p));
	const char *s = (const char *)*p;

	if (!nul)
		return NULL;
	*p = nul + 1;
	return s;
}

static void spec(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct imexctl_cdi_channel ch[64];
	struct imexctl_cdi_opts o = { 0 };
	struct json_object *j, *v, *devs;
	struct imexctl ctx;
	char *json = NULL, kind[130];
	size_t n = 0, ndev;
	int r;

	o.vendor = take(&p, end);
	o.class_name = take(&p, end);
	o.all_name = take(&p, end);
	if (o.vendor && !o.vendor[0])
		o.vendor = NULL;
	if (o.class_name && !o.class_name[0])
		o.class_name = NULL;
	while (n < 64 && end - p >= 16) {
		memcpy(&ch[n], p, 16);
		p += 16;
		/* Mostly small ids and modes, so that most specs are valid. */
		ch[n].id %= IMEX_CHANNELS_MAX + 2;
		ch[n].minor = ch[n].id ^ ch[n].uid;
		ch[n].minor %= IMEX_MINORS + 2;
		if (!(ch[n].mode & 0x80000000u))
			ch[n].mode &= 0777;
		n++;
	}

	memset(&ctx, 0, sizeof(ctx));
	r = imexctl_cdi_spec_build(&ctx, &o, 511, ch, n, &json);
	if (r) {
		if (r != -EINVAL && r != -ENOMEM)
			abort();
		if (!ctx.errmsg[0] || json)
			abort();
		return;
	}
	j = json_tokener_parse(json);
	if (!j)
		abort();
	snprintf(kind, sizeof(kind), "%s/%s",
		 o.vendor ? o.vendor : IMEXCTL_CDI_VENDOR,
		 o.class_name ? o.class_name : IMEXCTL_CDI_CLASS);
	if (!json_object_object_get_ex(j, "kind", &v) ||
	    strcmp(json_object_get_string(v), kind))
		abort();
	ndev = n + (o.all_name && !o.all_name[0] ? 0 : 1);
	if (!json_object_object_get_ex(j, "devices", &devs) ||
	    json_object_array_length(devs) != ndev)
		abort();
	if (!json_object_object_get_ex(j, "cdiVersion", &v) ||
	    strcmp(json_object_get_string(v), imexctl_cdi_required_version(j)))
		abort();
	json_object_put(j);
	free(json);
}

static void version(const uint8_t *data, size_t size)
{
	struct json_tokener *tok = json_tokener_new_ex(32);
	struct json_object *j;

	if (!tok)
		return;
	j = json_tokener_parse_ex(tok, (const char *)data, (int)size);
	if (j && !imexctl_cdi_required_version(j))
		abort();
	json_object_put(j);
	json_tokener_free(tok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size || size > 4096)
		return 0;
	switch (data[0] % 3) {
	case 0:
		names(data + 1, size - 1);
		break;
	case 1:
		spec(data + 1, size - 1);
		break;
	default:
		version(data + 1, size - 1);
	}
	return 0;
}
