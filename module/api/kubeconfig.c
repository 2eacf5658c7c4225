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


#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <unistd.h>

#include <curl/curl.h>
#include <libknot/errcode.h>
#include <libknot/error.h>
#include <yaml.h>

#include "api/kubeconfig.h"

/*! The read buffer starts at this size and doubles up to K8S_KUBECONFIG_MAX + 1. */
#define READ_CHUNK (16 * 1024)

/*! One kubeconfig being read. */
typedef struct {
	const char *path;      // As given, for messages.
	char *dir;             // Absolute directory, for relative file references.
	yaml_document_t doc;
	char *err;
	size_t errlen;
} kc_t;

static int kc_fail(kc_t *kc, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*! Writes "kubeconfig PATH: <reason>" to the error buffer and returns \a ret. */
static int kc_fail(kc_t *kc, int ret, const char *fmt, ...)
{
	if (kc->errlen == 0) {
		return ret;
	}
	int n = snprintf(kc->err, kc->errlen, "kubeconfig %s: ", kc->path);
	if (n < 0 || (size_t)n >= kc->errlen) {
		return ret;
	}
	va_list args;
	va_start(args, fmt);
	vsnprintf(kc->err + n, kc->errlen - n, fmt, args);
	va_end(args);
	return ret;
}

/*! A plain ~, null or empty scalar is YAML's null: the key is as good as absent. */
static bool node_is_null(const yaml_node_t *node)
{
	if (node->type != YAML_SCALAR_NODE ||
	    node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
		return false;
	}
	const char *v = (const char *)node->data.scalar.value;
	return v[0] == '\0' || strcmp(v, "~") == 0 || strcasecmp(v, "null") == 0;
}

/*! The value of \a key in mapping \a map, or NULL if absent or null. */
static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	if (map == NULL || map->type != YAML_MAPPING_NODE) {
		return NULL;
	}
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		yaml_node_t *v = yaml_document_get_node(doc, p->value);
		if (k != NULL && v != NULL && k->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)k->data.scalar.value, key) == 0) {
			return node_is_null(v) ? NULL : v;
		}
	}
	return NULL;
}

/*! Reads an optional string; \a out is NULL when the key is absent. */
static int get_str(kc_t *kc, yaml_node_t *map, const char *key, const char *where,
                   const char **out)
{
	*out = NULL;
	yaml_node_t *v = map_get(&kc->doc, map, key);
	if (v == NULL) {
		return KNOT_EOK;
	}
	if (v->type != YAML_SCALAR_NODE) {
		return kc_fail(kc, KNOT_EINVAL, "%s: %s is not a string", where, key);
	}
	*out = (const char *)v->data.scalar.value;
	return KNOT_EOK;
}

/*! Reads an optional boolean (YAML 1.1 spellings, as kubectl accepts them). */
static int get_bool(kc_t *kc, yaml_node_t *map, const char *key, const char *where,
                    bool *out)
{
	const char *v = NULL;
	int ret = get_str(kc, map, key, where, &v);
	if (ret != KNOT_EOK || v == NULL) {
		*out = false;
		return ret;
	}
	static const char *yes[] = { "true", "yes", "on", "y" };
	static const char *no[] = { "false", "no", "off", "n" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*out = true;
			return KNOT_EOK;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*out = false;
			return KNOT_EOK;
		}
	}
	return kc_fail(kc, KNOT_EINVAL, "%s: %s is not a boolean", where, key);
}

/*!
 * The value of 'name: X' list entry \a field (e.g. clusters[name=X].cluster), with
 * \a where set to "FIELD 'X'" for the messages about it; NULL, failed in \a kc
 * (KNOT_ENOENT), if there is none.
 */
static yaml_node_t *find_named(kc_t *kc, const char *list_key, const char *field,
                               const char *name, char where[128])
{
	snprintf(where, 128, "%s '%s'", field, name);
	yaml_node_t *root = yaml_document_get_root_node(&kc->doc);
	yaml_node_t *list = map_get(&kc->doc, root, list_key);
	if (list == NULL || list->type != YAML_SEQUENCE_NODE) {
		(void)kc_fail(kc, KNOT_ENOENT, "%s not found", where);
		return NULL;
	}
	for (yaml_node_item_t *i = list->data.sequence.items.start;
	     i < list->data.sequence.items.top; i++) {
		yaml_node_t *entry = yaml_document_get_node(&kc->doc, *i);
		yaml_node_t *n = map_get(&kc->doc, entry, "name");
		if (n != NULL && n->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)n->data.scalar.value, name) == 0) {
			yaml_node_t *v = map_get(&kc->doc, entry, field);
			// An entry without its body is still found: its fields are all unset.
			return (v != NULL) ? v : entry;
		}
	}
	(void)kc_fail(kc, KNOT_ENOENT, "%s not found", where);
	return NULL;
}

/*! Decodes standard base64 (line breaks ignored, as Go's decoder does). */
static int base64_decode(const char *in, k8s_blob_t *out)
{
	size_t inlen = strlen(in);
	uint8_t *data = malloc(inlen / 4 * 3 + 4);
	if (data == NULL) {
		return KNOT_ENOMEM;
	}

	size_t len = 0, quad = 0, pad = 0;
	uint32_t acc = 0;
	for (const char *p = in; *p != '\0'; p++) {
		int c = (unsigned char)*p, v;
		if (c == '\r' || c == '\n') {
			continue;
		} else if (c == '=') {
			pad++;
			v = 0;
		} else if (pad > 0) {
			goto malformed; // Data after padding.
		} else if (c >= 'A' && c <= 'Z') {
			v = c - 'A';
		} else if (c >= 'a' && c <= 'z') {
			v = c - 'a' + 26;
		} else if (c >= '0' && c <= '9') {
			v = c - '0' + 52;
		} else if (c == '+') {
			v = 62;
		} else if (c == '/') {
			v = 63;
		} else {
			goto malformed;
		}
		acc = (acc << 6) | (uint32_t)v;
		if (++quad == 4) {
			if (pad > 2) {
				goto malformed;
			}
			data[len++] = acc >> 16;
			if (pad < 2) {
				data[len++] = (acc >> 8) & 0xff;
			}
			if (pad < 1) {
				data[len++] = acc & 0xff;
			}
			quad = 0;
			acc = 0;
		}
	}
	if (quad != 0 || len == 0) {
		goto malformed;
	}
	out->data = data;
	out->len = len;
	return KNOT_EOK;
malformed:
	free(data);
	return KNOT_EINVAL;
}

/*! A file reference made absolute against the kubeconfig's directory. */
static char *resolve_path(const char *dir, const char *ref)
{
	if (ref[0] == '/') {
		return strdup(ref);
	}
	char *out = NULL;
	if (asprintf(&out, "%s/%s", dir, ref) < 0) {
		return NULL;
	}
	return out;
}

/*!
 * Reads a file-or-inline pair such as certificate-authority / certificate-authority-data.
 * The inline data overrides the file, as in client-go.
 */
static int get_file_or_data(kc_t *kc, yaml_node_t *map, const char *key,
                            const char *where, char **file, k8s_blob_t *blob)
{
	char data_key[64];
	snprintf(data_key, sizeof(data_key), "%s-data", key);

	const char *data = NULL, *ref = NULL;
	int ret = get_str(kc, map, data_key, where, &data);
	if (ret != KNOT_EOK) {
		return ret;
	}
	if (data != NULL) {
		ret = base64_decode(data, blob);
		if (ret == KNOT_EINVAL) {
			return kc_fail(kc, ret, "%s: %s is not valid base64", where, data_key);
		}
		return ret;
	}

	ret = get_str(kc, map, key, where, &ref);
	if (ret != KNOT_EOK || ref == NULL) {
		return ret;
	}
	*file = resolve_path(kc->dir, ref);
	if (*file == NULL) {
		return KNOT_ENOMEM;
	}
	if (access(*file, R_OK) != 0) {
		return kc_fail(kc, KNOT_ENOENT, "%s: %s file %s is not readable (%s)",
		               where, key, *file, knot_strerror(knot_map_errno()));
	}
	return KNOT_EOK;
}

/*! Tells whether \a host (as in a URL, IPv6 bracketed) is this machine. */
static bool host_is_loopback(const char *host)
{
	if (strcasecmp(host, "localhost") == 0) {
		return true;
	}
	struct in_addr a4;
	if (inet_pton(AF_INET, host, &a4) == 1) {
		return (ntohl(a4.s_addr) >> 24) == 127;
	}
	char bare[INET6_ADDRSTRLEN];
	size_t len = strlen(host);
	if (len < 3 || len - 2 >= sizeof(bare) || host[0] != '[' || host[len - 1] != ']') {
		return false;
	}
	memcpy(bare, host + 1, len - 2);
	bare[len - 2] = '\0';
	struct in6_addr a6;
	return inet_pton(AF_INET6, bare, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/*! Checks that \a url is https (or http to a loopback address) with a valid host. */
static int server_check(const char *url, char *why, size_t whylen)
{
	bool https = strncasecmp(url, "https://", 8) == 0;
	if (!https && strncasecmp(url, "http://", 7) != 0) {
		snprintf(why, whylen, "not an https:// url");
		return KNOT_EINVAL;
	}

	CURLU *u = curl_url();
	if (u == NULL) {
		return KNOT_ENOMEM;
	}
	char *host = NULL, *user = NULL;
	int ret = KNOT_EOK;
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || host[0] == '\0') {
		snprintf(why, whylen, "not a valid url (an IPv6 host needs brackets)");
		ret = KNOT_EINVAL;
	} else if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK) {
		// libcurl would send it as Basic credentials; the URL is not logged, it holds a password.
		snprintf(why, whylen, "a url with user information (not allowed, use a token or a client certificate)");
		ret = KNOT_EINVAL;
	} else if (!https && !host_is_loopback(host)) {
		// kubectl proxy and local test servers speak plain HTTP; a token must not leave the machine that way.
		snprintf(why, whylen, "plain http:// is allowed only to a loopback address");
		ret = KNOT_EINVAL;
	}
	if (user != NULL) {
		explicit_bzero(user, strlen(user));
	}
	curl_free(user);
	curl_free(host);
	curl_url_cleanup(u);
	return ret;
}

char *k8s_url_dup(const char *url)
{
	size_t len = strlen(url);
	while (len > 0 && url[len - 1] == '/') {
		len--;
	}
	return strndup(url, len);
}

static int load_cluster(kc_t *kc, const char *name, k8s_apiconf_t *out)
{
	char where[128];
	yaml_node_t *cluster = find_named(kc, "clusters", "cluster", name, where);
	if (cluster == NULL) {
		return KNOT_ENOENT;
	}

	const char *server = NULL, *tls_name = NULL, *proxy = NULL;
	int ret = get_str(kc, cluster, "server", where, &server);
	if (ret == KNOT_EOK) {
		ret = get_str(kc, cluster, "tls-server-name", where, &tls_name);
	}
	if (ret == KNOT_EOK) {
		ret = get_str(kc, cluster, "proxy-url", where, &proxy);
	}
	if (ret == KNOT_EOK) {
		ret = get_bool(kc, cluster, "insecure-skip-tls-verify", where, &out->insecure);
	}
	if (ret != KNOT_EOK) {
		return ret;
	}
	if (server == NULL) {
		return kc_fail(kc, KNOT_ENOENT, "%s: server is missing", where);
	}
	char why[96];
	ret = server_check(server, why, sizeof(why));
	if (ret != KNOT_EOK) {
		return kc_fail(kc, ret, "%s: server is %s", where, why);
	}
	if (proxy != NULL) {
		return kc_fail(kc, KNOT_EINVAL, "%s: proxy-url is not supported "
		               "(set https_proxy in knotd's environment instead)", where);
	}

	out->server = k8s_url_dup(server);
	out->tls_server_name = (tls_name != NULL) ? strdup(tls_name) : NULL;
	if (out->server == NULL || (tls_name != NULL && out->tls_server_name == NULL)) {
		return KNOT_ENOMEM;
	}

	ret = get_file_or_data(kc, cluster, "certificate-authority", where,
	                       &out->ca_file, &out->ca);
	if (ret != KNOT_EOK) {
		return ret;
	}
	if (out->insecure && (out->ca_file != NULL || out->ca.data != NULL)) {
		return kc_fail(kc, KNOT_EINVAL, "%s: insecure-skip-tls-verify and a "
		               "certificate-authority exclude each other", where);
	}
	return KNOT_EOK;
}

static int load_user(kc_t *kc, const char *name, k8s_apiconf_t *out)
{
	char where[128];
	yaml_node_t *user = find_named(kc, "users", "user", name, where);
	if (user == NULL) {
		return KNOT_ENOENT;
	}

	// What a C module cannot do is refused, so it never silently runs as someone else or with no credentials.
	static const struct {
		const char *key;
		const char *why;
	} unsupported[] = {
		{ "exec", "exec credential plugins are not supported" },
		{ "auth-provider", "auth-provider plugins are not supported" },
		{ "username", "username/password authentication is not supported" },
		{ "password", "username/password authentication is not supported" },
		{ "as", "impersonation (as) is not supported" },
		{ "as-uid", "impersonation (as-uid) is not supported" },
		{ "as-groups", "impersonation (as-groups) is not supported" },
	};
	for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
		if (map_get(&kc->doc, user, unsupported[i].key) != NULL) {
			return kc_fail(kc, KNOT_EINVAL, "%s: %s (use token, tokenFile or "
			               "client-certificate and client-key)", where, unsupported[i].why);
		}
	}

	const char *token = NULL, *token_file = NULL;
	int ret = get_str(kc, user, "token", where, &token);
	if (ret == KNOT_EOK) {
		ret = get_str(kc, user, "tokenFile", where, &token_file);
	}
	if (ret != KNOT_EOK) {
		return ret;
	}
	// libcurl sends a CR LF inside a header value as is: the rest would be headers of ours.
	if (token != NULL && !k8s_token_valid(token, strlen(token))) {
		return kc_fail(kc, KNOT_EINVAL, "%s: token contains control characters", where);
	}
	if (token != NULL && (out->token = strdup(token)) == NULL) {
		return KNOT_ENOMEM;
	}
	if (token_file != NULL && (out->token_file = resolve_path(kc->dir, token_file)) == NULL) {
		return KNOT_ENOMEM;
	}

	ret = get_file_or_data(kc, user, "client-certificate", where, &out->cert_file, &out->cert);
	if (ret == KNOT_EOK) {
		ret = get_file_or_data(kc, user, "client-key", where, &out->key_file, &out->key);
	}
	if (ret != KNOT_EOK) {
		return ret;
	}
	bool has_cert = out->cert_file != NULL || out->cert.data != NULL;
	bool has_key = out->key_file != NULL || out->key.data != NULL;
	if (has_cert != has_key) {
		return kc_fail(kc, KNOT_EINVAL, "%s: client-certificate and client-key "
		               "must be given together", where);
	}
	return KNOT_EOK;
}

/*!
 * Reads at most \a max + 1 bytes of \a fd into \a out: the limit holds for a FIFO or a
 * /proc file too, whose st_size says nothing. Buffers are wiped: the text may hold keys.
 */
static int read_bounded(int fd, size_t max, char **out, size_t *out_len)
{
	size_t cap = READ_CHUNK, len = 0;
	char *buf = malloc(cap);
	if (buf == NULL) {
		return KNOT_ENOMEM;
	}
	while (len <= max) {
		if (len == cap) {
			size_t cap_new = (cap <= max / 2) ? cap * 2 : max + 1;
			char *buf_new = malloc(cap_new);
			if (buf_new == NULL) {
				k8s_secret_free(buf, cap);
				return KNOT_ENOMEM;
			}
			memcpy(buf_new, buf, len);
			k8s_secret_free(buf, cap);
			buf = buf_new;
			cap = cap_new;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0) {
			int ret = knot_map_errno();
			k8s_secret_free(buf, cap);
			return ret;
		} else if (n == 0) {
			break;
		}
		len += (size_t)n;
	}
	if (len > max) {
		k8s_secret_free(buf, cap);
		return KNOT_ESPACE;
	}
	*out = buf;
	*out_len = len;
	return KNOT_EOK;
}

/*! Reads the whole file and parses its first YAML document into kc->doc. */
static int parse_file(kc_t *kc)
{
	int fd = open(kc->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		// knot_strerror(), not strerror(): glibc's locale lock has deadlocked knotc at exit.
		return kc_fail(kc, KNOT_ENOENT, "cannot open (%s)",
		               knot_strerror(knot_map_errno()));
	}
	char *text = NULL;
	size_t len = 0;
	int ret = read_bounded(fd, K8S_KUBECONFIG_MAX, &text, &len);
	close(fd);
	if (ret == KNOT_ESPACE) {
		return kc_fail(kc, KNOT_EMALF, "larger than %d bytes", K8S_KUBECONFIG_MAX);
	} else if (ret != KNOT_EOK) {
		return kc_fail(kc, ret, "cannot read (%s)", knot_strerror(ret));
	}

	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser)) {
		k8s_secret_free(text, len);
		return KNOT_ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &kc->doc)) {
		ret = kc_fail(kc, KNOT_EMALF, "not valid YAML or JSON (line %zu: %s)",
		              parser.problem_mark.line + 1,
		              parser.problem != NULL ? parser.problem : "unknown error");
	} else {
		yaml_node_t *root = yaml_document_get_root_node(&kc->doc);
		if (root == NULL || root->type != YAML_MAPPING_NODE) {
			ret = kc_fail(kc, KNOT_EMALF, "not a YAML mapping");
			yaml_document_delete(&kc->doc);
		}
	}
	yaml_parser_delete(&parser);
	k8s_secret_free(text, len);
	return ret;
}

/*! The absolute directory of \a path. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = NULL;
	if (slash == path) {
		return strdup("/");
	} else if (slash != NULL && path[0] == '/') {
		return strndup(path, slash - path);
	}

	char *cwd = getcwd(NULL, 0);
	if (cwd == NULL) {
		return NULL;
	}
	int ret = (slash != NULL) ? asprintf(&dir, "%s/%.*s", cwd, (int)(slash - path), path)
	                          : asprintf(&dir, "%s", cwd);
	free(cwd);
	return (ret < 0) ? NULL : dir;
}

int k8s_kubeconfig_load(const char *path, const char *context, k8s_apiconf_t *out,
                        char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	kc_t kc = { .path = path, .err = err, .errlen = errlen };
	if (errlen > 0) {
		err[0] = '\0';
	}

	kc.dir = dir_of(path);
	if (kc.dir == NULL) {
		return KNOT_ENOMEM;
	}
	int ret = parse_file(&kc);
	if (ret != KNOT_EOK) {
		free(kc.dir);
		return ret;
	}

	yaml_node_t *root = yaml_document_get_root_node(&kc.doc);
	if (context == NULL || context[0] == '\0') {
		ret = get_str(&kc, root, "current-context", "top level", &context);
		if (ret == KNOT_EOK && context == NULL) {
			ret = kc_fail(&kc, KNOT_ENOENT, "no current-context and no context given");
		}
	}

	const char *cluster = NULL, *user = NULL;
	if (ret == KNOT_EOK) {
		char where[128];
		yaml_node_t *ctx = find_named(&kc, "contexts", "context", context, where);
		if (ctx == NULL) {
			ret = KNOT_ENOENT;
		} else {
			ret = get_str(&kc, ctx, "cluster", where, &cluster);
			if (ret == KNOT_EOK) {
				ret = get_str(&kc, ctx, "user", where, &user);
			}
			if (ret == KNOT_EOK && cluster == NULL) {
				ret = kc_fail(&kc, KNOT_ENOENT, "%s: cluster is missing", where);
			}
		}
	}
	if (ret == KNOT_EOK) {
		ret = load_cluster(&kc, cluster, out);
	}
	// A context without a user is legal: no credentials (e.g. kubectl proxy).
	if (ret == KNOT_EOK && user != NULL) {
		ret = load_user(&kc, user, out);
	}
	if (ret == KNOT_EOK && asprintf(&out->source, "kubeconfig %s, context %s",
	                                path, context) < 0) {
		out->source = NULL;
		ret = KNOT_ENOMEM;
	}

	if (ret != KNOT_EOK) {
		if (ret == KNOT_ENOMEM) {
			kc_fail(&kc, ret, "out of memory");
		}
		k8s_apiconf_free(out);
	}
	yaml_document_delete(&kc.doc);
	free(kc.dir);
	return ret;
}

int k8s_incluster_load(const char *sa_dir, k8s_apiconf_t *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (sa_dir == NULL) {
		sa_dir = K8S_SA_DIR_DEFAULT;
	}

	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	if (host == NULL || host[0] == '\0' || port == NULL || port[0] == '\0') {
		snprintf(err, errlen, "in-cluster: not running in a cluster "
		         "(KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT is unset)");
		return KNOT_ENOENT;
	}
	char *end = NULL;
	errno = 0;
	long port_num = strtol(port, &end, 10);
	if (errno != 0 || *end != '\0' || port_num < 1 || port_num > 65535) {
		snprintf(err, errlen, "in-cluster: KUBERNETES_SERVICE_PORT is not a port number");
		return KNOT_EINVAL;
	}

	// An IPv6 literal needs brackets in a URL (client-go uses net.JoinHostPort).
	bool ipv6 = strchr(host, ':') != NULL;
	int ret = KNOT_EOK;
	if (asprintf(&out->server, ipv6 ? "https://[%s]:%ld" : "https://%s:%ld",
	             host, port_num) < 0) {
		out->server = NULL;
		ret = KNOT_ENOMEM;
	}
	char why[96];
	if (ret == KNOT_EOK && server_check(out->server, why, sizeof(why)) != KNOT_EOK) {
		snprintf(err, errlen, "in-cluster: KUBERNETES_SERVICE_HOST gives a server that is %s", why);
		ret = KNOT_EINVAL;
	}
	if (ret == KNOT_EOK &&
	    (asprintf(&out->token_file, "%s/token", sa_dir) < 0 ||
	     asprintf(&out->ca_file, "%s/ca.crt", sa_dir) < 0 ||
	     (out->source = strdup("in-cluster")) == NULL)) {
		ret = KNOT_ENOMEM;
	}
	const char *files[] = { out->token_file, out->ca_file };
	for (size_t i = 0; ret == KNOT_EOK && i < 2; i++) {
		if (access(files[i], R_OK) != 0) {
			snprintf(err, errlen, "in-cluster: %s is not readable (%s)",
			         files[i], knot_strerror(knot_map_errno()));
			ret = KNOT_ENOENT;
		}
	}

	if (ret != KNOT_EOK) {
		if (ret == KNOT_ENOMEM) {
			snprintf(err, errlen, "in-cluster: out of memory");
		}
		k8s_apiconf_free(out);
	}
	return ret;
}

bool k8s_token_valid(const char *token, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uint8_t c = (uint8_t)token[i];
		if (c < 0x20 || c == 0x7f) {
			return false;
		}
	}
	return true;
}

void k8s_secret_free(void *data, size_t len)
{
	if (data != NULL) {
		explicit_bzero(data, len);
		free(data);
	}
}

void k8s_apiconf_free(k8s_apiconf_t *conf)
{
	if (conf == NULL) {
		return;
	}
	free(conf->server);
	free(conf->tls_server_name);
	free(conf->ca_file);
	k8s_secret_free(conf->ca.data, conf->ca.len);
	free(conf->cert_file);
	k8s_secret_free(conf->cert.data, conf->cert.len);
	free(conf->key_file);
	k8s_secret_free(conf->key.data, conf->key.len);
	k8s_secret_free(conf->token, conf->token != NULL ? strlen(conf->token) : 0);
	free(conf->token_file);
	free(conf->source);
	memset(conf, 0, sizeof(*conf));
}
