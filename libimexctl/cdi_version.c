// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The lowest cdiVersion a spec needs, decided from the features it uses,
 * so that older runtimes still load it.  The gates mirror the reference
 * implementation's; they look at the JSON itself, so they hold for any spec
 * however it was built.
 */
#include <string.h>

#include <json-c/json.h>

#include "internal.h"

#define CDI_VERSION_OLDEST "0.3.0"

typedef bool (*edits_fn)(struct json_object *edits);

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object))
		return NULL;
	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static size_t array_len(struct json_object *a)
{
	return a && json_object_is_type(a, json_type_array) ?
	       json_object_array_length(a) : 0;
}

static bool nonempty(struct json_object *v)
{
	if (!v || json_object_is_type(v, json_type_null))
		return false;
	if (json_object_is_type(v, json_type_array))
		return json_object_array_length(v) > 0;
	if (json_object_is_type(v, json_type_object))
		return json_object_object_length(v) > 0;
	if (json_object_is_type(v, json_type_string))
		return json_object_get_string_len(v) > 0;
	if (json_object_is_type(v, json_type_boolean))
		return json_object_get_boolean(v);
	return true;
}

/* Apply @fn to the spec's containerEdits and to every device's. */
static bool any_edits(struct json_object *spec, edits_fn fn)
{
	struct json_object *devs = get(spec, "devices");
	size_t i;

	if (fn(get(spec, "containerEdits")))
		return true;
	for (i = 0; i < array_len(devs); i++)
		if (fn(get(json_object_array_get_idx(devs, i), "containerEdits")))
			return true;
	return false;
}

static bool any_item(struct json_object *edits, const char *list, const char *key)
{
	struct json_object *a = get(edits, list);
	size_t i;

	for (i = 0; i < array_len(a); i++)
		if (nonempty(get(json_object_array_get_idx(a, i), key)))
			return true;
	return false;
}

/* 1.1.0: netDevices; intelRdt.schemata or enableMonitoring. */
static bool edits_110(struct json_object *e)
{
	struct json_object *rdt = get(e, "intelRdt");

	return nonempty(get(e, "netDevices")) || get(rdt, "schemata") ||
	       nonempty(get(rdt, "enableMonitoring"));
}

static bool needs_110(struct json_object *spec)
{
	return any_edits(spec, edits_110);
}

/* 0.7.0: intelRdt at all; additionalGids. */
static bool edits_070(struct json_object *e)
{
	struct json_object *rdt = get(e, "intelRdt");

	return (rdt && !json_object_is_type(rdt, json_type_null)) ||
	       nonempty(get(e, "additionalGids"));
}

static bool needs_070(struct json_object *spec)
{
	return any_edits(spec, edits_070);
}

/* 0.6.0: annotations on the spec or a device; a '.' in the class. */
static bool needs_060(struct json_object *spec)
{
	struct json_object *devs = get(spec, "devices");
	struct json_object *kind = get(spec, "kind");
	const char *k, *slash;
	size_t i;

	if (nonempty(get(spec, "annotations")))
		return true;
	for (i = 0; i < array_len(devs); i++)
		if (nonempty(get(json_object_array_get_idx(devs, i), "annotations")))
			return true;
	k = kind ? json_object_get_string(kind) : NULL;
	slash = k ? strchr(k, '/') : NULL;
	return slash && strchr(slash + 1, '.');
}

/* 0.5.0: a device name starting with a digit; deviceNodes[].hostPath. */
static bool edits_050(struct json_object *e)
{
	return any_item(e, "deviceNodes", "hostPath");
}

static bool needs_050(struct json_object *spec)
{
	struct json_object *devs = get(spec, "devices");
	const char *name;
	size_t i;

	for (i = 0; i < array_len(devs); i++) {
		name = json_object_get_string(get(json_object_array_get_idx(devs, i), "name"));
		if (name && name[0] >= '0' && name[0] <= '9')
			return true;
	}
	return any_edits(spec, edits_050);
}

/* 0.4.0: mounts[].type. */
static bool edits_040(struct json_object *e)
{
	return any_item(e, "mounts", "type");
}

static bool needs_040(struct json_object *spec)
{
	return any_edits(spec, edits_040);
}

/* Newest first: the first gate a spec needs is its version. */
static const struct {
	const char *version;
	bool (*needs)(struct json_object *spec);
} gates[] = {
	{ "1.1.0", needs_110 },
	{ "0.7.0", needs_070 },
	{ "0.6.0", needs_060 },
	{ "0.5.0", needs_050 },
	{ "0.4.0", needs_040 },
};

const char *imexctl_cdi_required_version(struct json_object *spec)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(gates); i++)
		if (gates[i].needs(spec))
			return gates[i].version;
	return CDI_VERSION_OLDEST;
}
