/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.

    This program is distributed in the hope that it will be useful,
    but WITHOUT ANY WARRANTY; without even the implied warranty of
    MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
    GNU General Public License for more details.

    You should have received a copy of the GNU General Public License
    along with this program.  If not, see <https://www.gnu.org/licenses/>.
 */


/*
 * kube-dns's ConfigMap (kubedns_conf.h): its two JSON files read with caps,
 * checked as kube-dns checks them, and merged into the forward options.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forward/servers.h"
#include "lib/jsonstrict.h"
#include "forward/kubedns_conf.h"

void k8s_kubedns_deinit(k8s_kubedns_t *cm)
{
	free(cm->upstreams.servers);
	for (size_t i = 0; i < cm->stub_count; i++) {
		free(cm->stubs[i].zone);
		free(cm->stubs[i].servers);
	}
	free(cm->stubs);
	memset(cm, 0, sizeof(*cm));
}

/*! \brief kube-dns's nameserver: `IP`, `IPv4:port` or `[IPv6]:port`. */
static int addr_parse(const char *text, struct sockaddr_storage *addr)
{
	char buf[INET6_ADDRSTRLEN + 8];
	size_t len = strlen(text);
	if (len == 0 || len >= sizeof(buf)) {
		return KNOT_EINVAL;
	}
	const char *colon = strchr(text, ':');
	if (colon == NULL || (strchr(colon + 1, ':') != NULL && text[0] != '[')) {
		// No port: an IPv4 or a bare IPv6 address.
		return (strchr(text, '@') == NULL) ? k8s_fwd_addr_parse(text, addr) : KNOT_EINVAL;
	}
	const char *host = text;
	size_t host_len = colon - text;
	const char *port = colon + 1;
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (close == NULL || close[1] != ':') {
			return KNOT_EINVAL;
		}
		host = text + 1;
		host_len = close - host;
		port = close + 2;
	}
	if (host_len == 0 || port[0] == '\0' || strspn(port, "0123456789") != strlen(port) ||
	    strlen(port) > 5) {
		return KNOT_EINVAL;
	}
	// Our own form, IP@port, which k8s_fwd_addr_parse() checks (port 1 to 65535).
	int n = snprintf(buf, sizeof(buf), "%.*s@%s", (int)host_len, host, port);
	if (n < 0 || (size_t)n >= sizeof(buf) || memchr(host, '@', host_len) != NULL) {
		return KNOT_EINVAL;
	}
	return k8s_fwd_addr_parse(buf, addr);
}

/*! \brief A JSON list of nameservers into \a group (at most \a max). */
static int servers_parse(json_object *list, size_t max, k8s_fwd_group_t *group,
                         const char *what, char *msg, size_t msglen)
{
	if (!json_object_is_type(list, json_type_array)) {
		snprintf(msg, msglen, "%s: not a list of addresses", what);
		return KNOT_EINVAL;
	}
	size_t count = json_object_array_length(list);
	if (count > max) {
		snprintf(msg, msglen, "%s: more than %zu addresses", what, max);
		return KNOT_EINVAL;
	}
	group->servers = calloc(count + 1, sizeof(*group->servers));
	if (group->servers == NULL) {
		snprintf(msg, msglen, "out of memory");
		return KNOT_ENOMEM;
	}
	for (size_t i = 0; i < count; i++) {
		json_object *item = json_object_array_get_idx(list, i);
		const char *text = json_object_get_string(item);
		// A NUL inside ("\u0000") would cut the address short: refused.
		if (!json_object_is_type(item, json_type_string) ||
		    strlen(text) != (size_t)json_object_get_string_len(item) ||
		    addr_parse(text, &group->servers[group->count]) != KNOT_EOK) {
			snprintf(msg, msglen, "%s: '%.64s' is no IP address or IP:port", what,
			         json_object_is_type(item, json_type_string) ? text : "(not a string)");
			return KNOT_EINVAL;
		}
		group->count++;
	}
	return KNOT_EOK;
}

static json_object *json_parse(const char *text, size_t len, const char *what,
                               char *msg, size_t msglen)
{
	if (len > K8S_KUBEDNS_FILE_MAX) {
		snprintf(msg, msglen, "%s: larger than %d bytes", what, K8S_KUBEDNS_FILE_MAX);
		return NULL;
	}
	struct json_tokener *tok = json_tokener_new_ex(16);  // Depth: the files nest 2 deep.
	if (tok == NULL) {
		snprintf(msg, msglen, "out of memory");
		return NULL;
	}
	json_object *root = k8s_json_tokener_parse(tok, text, (int)len);
	if (root == NULL || json_tokener_get_parse_end(tok) != len) {
		enum json_tokener_error err = json_tokener_get_error(tok);
		snprintf(msg, msglen, "%s: bad JSON (%s)", what,
		         (root == NULL && err != json_tokener_success) ?
		         json_tokener_error_desc(err) : "text after the value");
		json_object_put(root);
		root = NULL;
	}
	json_tokener_free(tok);
	return root;
}

static int upstreams_read(k8s_kubedns_t *cm, json_object *root, const char *file,
                          char *msg, size_t msglen)
{
	free(cm->upstreams.servers);
	memset(&cm->upstreams, 0, sizeof(cm->upstreams));
	int ret = servers_parse(root, K8S_KUBEDNS_UPSTREAMS_MAX, &cm->upstreams, file,
	                        msg, msglen);
	// An empty list keeps resolv.conf's servers, as in kube-dns.
	cm->has_upstreams = (ret == KNOT_EOK && cm->upstreams.count > 0);
	return ret;
}

static int stubs_read(k8s_kubedns_t *cm, json_object *root, const char *file,
                      char *msg, size_t msglen)
{
	if (!json_object_is_type(root, json_type_object)) {
		snprintf(msg, msglen, "%s: not an object of domains", file);
		return KNOT_EINVAL;
	}
	size_t count = json_object_object_length(root);
	if (count > K8S_FWD_GROUPS_MAX) {
		snprintf(msg, msglen, "%s: more than %d domains", file, K8S_FWD_GROUPS_MAX);
		return KNOT_EINVAL;
	}
	cm->stubs = calloc(count + 1, sizeof(*cm->stubs));
	if (cm->stubs == NULL) {
		snprintf(msg, msglen, "out of memory");
		return KNOT_ENOMEM;
	}
	json_object_object_foreach(root, key, val) {
		char what[KNOT_DNAME_TXT_MAXLEN + 32];
		snprintf(what, sizeof(what), "%s: %.255s", file, key);
		size_t key_len = strlen(key);
		char zone[KNOT_DNAME_TXT_MAXLEN + 2];
		if (key_len == 0 || key_len > KNOT_DNAME_TXT_MAXLEN || strchr(key, '\\') != NULL) {
			snprintf(msg, msglen, "%s: no domain name", what);
			return KNOT_EINVAL;
		}
		memcpy(zone, key, key_len + 1);
		if (zone[key_len - 1] != '.') {
			zone[key_len] = '.';
			zone[key_len + 1] = '\0';
		}
		k8s_fwd_group_t *g = &cm->stubs[cm->stub_count++];
		g->zone = knot_dname_from_str_alloc(zone);
		if (g->zone == NULL || g->zone[0] == 0) {
			snprintf(msg, msglen, "%s: no domain name", what);
			return KNOT_EINVAL;
		}
		knot_dname_to_lower(g->zone);
		for (size_t i = 0; i + 1 < cm->stub_count; i++) {
			if (knot_dname_is_equal(cm->stubs[i].zone, g->zone)) {
				snprintf(msg, msglen, "%s: given twice", what);
				return KNOT_EINVAL;
			}
		}
		int ret = servers_parse(val, K8S_FWD_SERVERS_MAX, g, what, msg, msglen);
		if (ret != KNOT_EOK) {
			return ret;
		}
		if (g->count == 0) {
			snprintf(msg, msglen, "%s: no address", what);
			return KNOT_EINVAL;
		}
	}
	return KNOT_EOK;
}

/*! \brief The ConfigMap's files, by k8s_kubedns_file_t: the name and the reader of each. */
static const struct {
	const char *name;
	int (*read)(k8s_kubedns_t *cm, json_object *root, const char *file, char *msg,
	            size_t msglen);
} files[K8S_KUBEDNS_FILES] = {
	[K8S_KUBEDNS_UPSTREAMS] = { "upstreamNameservers", upstreams_read },
	[K8S_KUBEDNS_STUBS] = { "stubDomains", stubs_read },
};

int k8s_kubedns_parse(k8s_kubedns_t *cm, k8s_kubedns_file_t file, const char *text, size_t len,
                      char *msg, size_t msglen)
{
	json_object *root = json_parse(text, len, files[file].name, msg, msglen);
	if (root == NULL) {
		return KNOT_EINVAL;
	}
	int ret = files[file].read(cm, root, files[file].name, msg, msglen);
	json_object_put(root);
	return ret;
}

/* The files. */

void k8s_kubedns_stamp(const char *dir, k8s_kubedns_stamp_t *stamp)
{
	memset(stamp, 0, sizeof(*stamp));
	for (int i = 0; i < K8S_KUBEDNS_FILES; i++) {
		char path[4096];
		struct stat st;
		int n = snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		if (n < 0 || (size_t)n >= sizeof(path) || stat(path, &st) != 0) {
			continue;
		}
		stamp->file[i].present = true;
		stamp->file[i].dev = st.st_dev;
		stamp->file[i].ino = st.st_ino;
		stamp->file[i].size = st.st_size;
		stamp->file[i].mtime = st.st_mtim;
	}
}

bool k8s_kubedns_stamp_equal(const k8s_kubedns_stamp_t *a, const k8s_kubedns_stamp_t *b)
{
	for (int i = 0; i < K8S_KUBEDNS_FILES; i++) {
		if (a->file[i].present != b->file[i].present || a->file[i].dev != b->file[i].dev ||
		    a->file[i].ino != b->file[i].ino || a->file[i].size != b->file[i].size ||
		    a->file[i].mtime.tv_sec != b->file[i].mtime.tv_sec ||
		    a->file[i].mtime.tv_nsec != b->file[i].mtime.tv_nsec) {
			return false;
		}
	}
	return true;
}

/*! \brief Reads a file of at most the cap; KNOT_ENOENT when absent. */
static int file_read(const char *path, char **text, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		return (errno == ENOENT) ? KNOT_ENOENT : knot_map_errno();
	}
	char *buf = malloc(K8S_KUBEDNS_FILE_MAX + 1);
	size_t got = 0;
	int ret = (buf != NULL) ? KNOT_EOK : KNOT_ENOMEM;
	while (ret == KNOT_EOK) {
		// One byte past the cap tells a file that is too large.
		ssize_t n = read(fd, buf + got, K8S_KUBEDNS_FILE_MAX + 1 - got);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			ret = knot_map_errno();
		} else if (n == 0 || (got += n) > K8S_KUBEDNS_FILE_MAX) {
			break;
		}
	}
	close(fd);
	if (ret != KNOT_EOK) {
		free(buf);
		return ret;
	}
	*text = buf;
	*len = got;
	return KNOT_EOK;
}

int k8s_kubedns_read(const char *dir, k8s_kubedns_t *cm, char *msg, size_t msglen)
{
	memset(cm, 0, sizeof(*cm));
	for (int i = 0; i < K8S_KUBEDNS_FILES; i++) {
		char path[4096];
		int n = snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		if (n < 0 || (size_t)n >= sizeof(path)) {
			snprintf(msg, msglen, "directory name too long");
			return KNOT_EINVAL;
		}
		char *text = NULL;
		size_t len = 0;
		int ret = file_read(path, &text, &len);
		if (ret == KNOT_ENOENT) {
			continue;
		}
		if (ret != KNOT_EOK) {
			snprintf(msg, msglen, "%s: not readable (%s)", files[i].name, knot_strerror(ret));
		} else {
			ret = k8s_kubedns_parse(cm, i, text, len, msg, msglen);
		}
		free(text);
		if (ret != KNOT_EOK) {
			k8s_kubedns_deinit(cm);
			return ret;
		}
	}
	return KNOT_EOK;
}

/* The merge. */

static bool overridden(const k8s_kubedns_t *cm, const knot_dname_t *zone)
{
	for (size_t i = 0; i < cm->stub_count; i++) {
		if (knot_dname_is_equal(cm->stubs[i].zone, zone)) {
			return true;
		}
	}
	return false;
}

int k8s_kubedns_merge(const k8s_fwd_conf_t *base, const k8s_kubedns_t *cm,
                      k8s_fwd_conf_t *out, char *msg, size_t msglen)
{
	*out = *base;
	out->settings = NULL;  // Copied below, not shared.
	out->settings_count = 0;
	out->groups = calloc(1 + base->group_count + cm->stub_count, sizeof(*out->groups));
	out->group_count = 0;
	// The groups' own settings go by zone: a stub domain of the ConfigMap takes its zone's.
	if (out->groups == NULL || k8s_fwd_settings_copy(out, base) != KNOT_EOK) {
		snprintf(msg, msglen, "out of memory");
		k8s_fwd_conf_deinit(out);
		return KNOT_ENOMEM;
	}
	// [0]: the default servers, replaced by upstreamNameservers.
	const k8s_fwd_group_t empty = { 0 };
	const k8s_fwd_group_t *def = cm->has_upstreams ? &cm->upstreams :
	                             (base->group_count > 0) ? &base->groups[0] : &empty;
	int ret = k8s_fwd_group_copy(&out->groups[out->group_count++], def);
	for (size_t i = 1; ret == KNOT_EOK && i < base->group_count; i++) {
		if (!overridden(cm, base->groups[i].zone)) {
			ret = k8s_fwd_group_copy(&out->groups[out->group_count++], &base->groups[i]);
		}
	}
	for (size_t i = 0; ret == KNOT_EOK && i < cm->stub_count; i++) {
		ret = k8s_fwd_group_copy(&out->groups[out->group_count++], &cm->stubs[i]);
	}
	if (ret != KNOT_EOK) {
		snprintf(msg, msglen, "out of memory");
		k8s_fwd_conf_deinit(out);
		return ret;
	}
	size_t total = 0;
	for (size_t i = 0; i < out->group_count; i++) {
		total += out->groups[i].count;
	}
	if (total > K8S_FWD_SERVERS_MAX || out->group_count > 1 + K8S_FWD_GROUPS_MAX) {
		snprintf(msg, msglen, "with the ConfigMap, more than %d servers or %d stub domains",
		         K8S_FWD_SERVERS_MAX, K8S_FWD_GROUPS_MAX);
		k8s_fwd_conf_deinit(out);
		return KNOT_EINVAL;
	}
	return KNOT_EOK;
}
