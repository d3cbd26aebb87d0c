// SPDX-License-Identifier: GPL-2.0
/* STATE_DIRECTORY/members.json (store_members.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <raft.h>

#include "store_file.h"
#include "store_members.h"

static const char *role_name(int role)
{
	switch (role) {
	case RAFT_VOTER:
		return "voter";
	case RAFT_STANDBY:
		return "standby";
	case RAFT_SPARE:
		return "spare";
	default:
		return "unknown";
	}
}

/* Add @v (NULL is JSON null) under @k; false on failure. */
static bool put(json_object *o, const char *k, json_object *v, bool null_ok)
{
	if (!v && !null_ok)
		return false;
	if (json_object_object_add(o, k, v)) {
		json_object_put(v);
		return false;
	}
	return true;
}

static json_object *member_json(const struct imexd_node_member *m)
{
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	if (!put(o, "name", json_object_new_string(m->name), false) ||
	    !put(o, "addr", json_object_new_string(m->addr), false) ||
	    !put(o, "role", json_object_new_string(role_name(m->role)), false) ||
	    !put(o, "leader", json_object_new_boolean(m->leader), false) ||
	    !put(o, "self", json_object_new_boolean(m->self), false) ||
	    !put(o, "connected", m->self ? NULL :
		 json_object_new_boolean(m->connected), m->self)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

char *imexd_members_json(const char *self, long pid,
			 const struct imexd_node_group *g,
			 const struct imexd_node_member *m, size_t n)
{
	json_object *o = json_object_new_object(), *arr, *e;
	const char *s;
	char *text = NULL;
	size_t i;

	if (!o)
		return NULL;
	arr = json_object_new_array();
	if (!put(o, "version", json_object_new_int(IMEXD_MEMBERS_VERSION), false) ||
	    !put(o, "node", json_object_new_string(self), false) ||
	    !put(o, "pid", json_object_new_int64(pid), false) ||
	    !put(o, "member", json_object_new_boolean(g->member), false) ||
	    !put(o, "term", json_object_new_uint64(g->term), false) ||
	    !put(o, "leader", g->leader[0] ?
		 json_object_new_string(g->leader) : NULL, !g->leader[0]) ||
	    !put(o, "commit", json_object_new_uint64(g->commit), false) ||
	    !put(o, "applied", json_object_new_uint64(g->applied), false) ||
	    !put(o, "config_index", json_object_new_uint64(g->config_index), false)) {
		json_object_put(arr);
		goto out;
	}
	if (!put(o, "members", arr, false))
		goto out;
	for (i = 0; i < n; i++) {
		e = member_json(&m[i]);
		if (!e || json_object_array_add(arr, e)) {
			json_object_put(e);
			goto out;
		}
	}
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if (s)
		text = strdup(s);
out:
	json_object_put(o);
	return text;
}

int imexd_members_write(const char *dir, const char *text)
{
	int dfd, r = 0;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (text)
		r = imexd_file_replace(dfd, dir, IMEXD_MEMBERS_FILE, text,
				       strlen(text));
	else if (unlinkat(dfd, IMEXD_MEMBERS_FILE, 0) < 0 && errno != ENOENT)
		r = -errno;
	close(dfd);
	return r;
}
