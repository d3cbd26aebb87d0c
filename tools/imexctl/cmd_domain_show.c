// SPDX-License-Identifier: GPL-2.0-only
/* How a domain is shown: summary, members, the From\To matrix, and JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli.h"

static const char legend[] =
	"Legend: C connected, R recovering, D disconnected, N never connected,\n"
	"        V version mismatch, X refused, - self, ? unknown (not reported,\n"
	"        or stale: this node does not reach that member)\n";

/* How member @from sees member @to, as one matrix letter. */
static char cell(const struct imexctl_domain *d, size_t from, size_t to)
{
	const struct imexctl_member *m = &d->members[from];

	if (from == to)
		return '-';
	/* A member this node does not reach: its last report may be stale. */
	if (from != d->member_self &&
	    (m->state == IMEXCTL_MEMBER_DISCONNECTED ||
	     m->state == IMEXCTL_MEMBER_NEVER_CONNECTED))
		return '?';
	if (m->view && to < m->n_view)
		return imexctl_member_state_letter(m->view[to]);
	/* This node's own row: its view is the members' states. */
	if (from == d->member_self)
		return imexctl_member_state_letter(d->members[to].state);
	return '?';
}

static void print_matrix(const struct imexctl_domain *d)
{
	size_t n = d->n_members, i, j;
	const char **row = calloc(n + 1, sizeof(*row));
	char *labels = calloc(n + 1, 24), *cells = calloc(n * n + 1, 2);
	struct table *t;

	if (!row || !labels || !cells)
		goto out;
	row[0] = "From\\To";
	for (j = 0; j < n; j++) {
		snprintf(labels + j * 24, 24, "%zu", j);
		row[j + 1] = labels + j * 24;
	}
	t = table_new_v(n + 1, row);
	for (i = 0; i < n; i++) {
		char from[IMEXCTL_NAME_MAX + 24];

		snprintf(from, sizeof(from), "%zu %s", i, d->members[i].name);
		row[0] = from;
		for (j = 0; j < n; j++) {
			char *c = cells + (i * n + j) * 2;

			c[0] = cell(d, i, j);
			c[1] = '\0';
			row[j + 1] = c;
		}
		table_add_v(t, row);
	}
	table_print(t);
	table_free(t);
	fputs(legend, stdout);
out:
	free(row);
	free(labels);
	free(cells);
}

void domain_print(const struct imexctl_domain *d)
{
	char uuid[IMEXCTL_UUID_STR_LEN], num[24], *ids;
	struct table *t;
	size_t i;

	imexctl_uuid_format(d->uuid, uuid);
	printf("domain:      %s\n", d->name);
	printf("uuid:        %s\n", uuid);
	if (d->has_fabric) {
		imexctl_uuid_format(d->fabric_uuid, uuid);
		printf("fabric:      %s partition %u\n", uuid, d->fabric_partition);
	} else {
		printf("fabric:      (none)\n");
	}
	printf("state:       %s\n", imexctl_domain_state_name(d->state));
	if (imexctl_domain_reason(d)) {
		char *why = text_escape(imexctl_domain_reason(d));

		printf("reason:      %s\n", why ? why : "(no memory)");
		free(why);
	}
	printf("generation:  %u\n", d->generation);
	ids = format_ids(d->channel_ids, d->n_channel_ids);
	printf("channels:    %s (%zu)\n", ids && ids[0] ? ids : "none", d->n_channel_ids);
	free(ids);

	if (!d->n_members)
		return;
	printf("\n");
	t = table_new(6, "#", "MEMBER", "ADDRESS", "STATE", "SINCE", "REASON");
	for (i = 0; i < d->n_members; i++) {
		const struct imexctl_member *m = &d->members[i];
		const char *reason = imexctl_member_reason(d, i);
		char *why = reason ? text_escape(reason) : NULL;
		char since[32];

		snprintf(num, sizeof(num), "%zu", i);
		format_iso8601(imexctl_member_since(d, i), false, since, sizeof(since));
		table_add(t, num, m->name, m->addr,
			  i == d->member_self ? "self" : imexctl_member_state_name(m->state),
			  since[0] ? since : "-", why ? why : "-");
		free(why);
	}
	table_print(t);
	table_free(t);
	printf("\n");
	print_matrix(d);
}

static struct json_object *json_string_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static struct json_object *member_json(const struct imexctl_domain *d, size_t at)
{
	const struct imexctl_member *m = &d->members[at];
	struct json_object *o = json_object_new_object(), *v = NULL;
	char since[32];
	size_t i;

	json_object_object_add(o, "name", json_object_new_string(m->name));
	json_object_object_add(o, "addr", json_object_new_string(m->addr));
	json_object_object_add(o, "state",
			       json_object_new_string(imexctl_member_state_name(m->state)));
	if (m->view) {
		v = json_object_new_array();
		for (i = 0; i < m->n_view; i++)
			json_object_array_add(v, json_object_new_string(
						      imexctl_member_state_name(m->view[i])));
	}
	json_object_object_add(o, "view", v);
	json_object_object_add(o, "reason", json_string_or_null(imexctl_member_reason(d, at)));
	format_iso8601(imexctl_member_since(d, at), false, since, sizeof(since));
	json_object_object_add(o, "since", json_string_or_null(since[0] ? since : NULL));
	return o;
}

/* Stable keys, documented in imexctl(8); @full adds members and channels. */
struct json_object *domain_json(const struct imexctl_domain *d, bool full)
{
	struct json_object *o = json_object_new_object(), *members;
	size_t i;

	json_object_object_add(o, "name", json_object_new_string(d->name));
	json_object_object_add(o, "uuid", json_uuid(d->uuid));
	json_object_object_add(o, "fabric", json_fabric(d->has_fabric, d->fabric_uuid,
							d->fabric_partition));
	json_object_object_add(o, "state",
			       json_object_new_string(imexctl_domain_state_name(d->state)));
	json_object_object_add(o, "member_count", json_object_new_int64(d->member_count));
	json_object_object_add(o, "channel_count", json_object_new_int64(d->channel_count));
	json_object_object_add(o, "member_self", d->member_self == UINT32_MAX ? NULL :
			       json_object_new_int64(d->member_self));
	json_object_object_add(o, "generation", json_object_new_int64(d->generation));
	if (!full)
		return o;
	members = json_object_new_array();
	for (i = 0; i < d->n_members; i++)
		json_object_array_add(members, member_json(d, i));
	json_object_object_add(o, "reason", json_string_or_null(imexctl_domain_reason(d)));
	json_object_object_add(o, "members", members);
	json_object_object_add(o, "channels", json_ids(d->channel_ids, d->n_channel_ids));
	return o;
}
