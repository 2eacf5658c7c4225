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
 * Reading where the API server is and how to authenticate (module/api/kubeconfig.c):
 * kubeconfig fields as client-go reads them (k8s_api.md 3.2) and the in-cluster
 * environment (3.1). Every case writes its files into a fresh directory.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <libknot/errcode.h>

#include "api/kubeconfig.h"

static char dir[64];
static char err[512];
static k8s_apiconf_t conf;

/* base64 of "-----PEM CA-----\n" and "-----PEM CERT-----\n" etc. */
#define PEM_CA      "-----PEM CA-----\n"
#define PEM_CA_B64  "LS0tLS1QRU0gQ0EtLS0tLQo="
#define PEM_CRT     "-----PEM CERT-----\n"
#define PEM_CRT_B64 "LS0tLS1QRU0gQ0VSVC0tLS0tCg=="
#define PEM_KEY     "-----PEM KEY-----\n"
#define PEM_KEY_B64 "LS0tLS1QRU0gS0VZLS0tLS0K"
#define TOKEN       "s3cr3t-t0ken-value"

static void write_file(const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *path_of(const char *name)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* Writes a kubeconfig with one cluster, one user and one context "test". */
static int load_with(const char *cluster, const char *user)
{
	char text[4096];
	snprintf(text, sizeof(text),
	         "apiVersion: v1\n"
	         "kind: Config\n"
	         "current-context: test\n"
	         "clusters:\n"
	         "- name: c\n"
	         "  cluster:\n%s"
	         "users:\n"
	         "- name: u\n"
	         "  user:\n%s"
	         "contexts:\n"
	         "- name: test\n"
	         "  context: {cluster: c, user: u, namespace: kube-system}\n",
	         cluster, user);
	write_file("config", text);
	return k8s_kubeconfig_load(path_of("config"), NULL, &conf, err, sizeof(err));
}

#define SERVER "    server: https://127.0.0.1:6443\n"
#define WITH_TOKEN "    token: " TOKEN "\n"

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/test_kubeconfig.XXXXXX");
	assert_non_null(mkdtemp(dir));
	memset(err, 0, sizeof(err));
	return 0;
}

static int teardown(void **state)
{
	k8s_apiconf_free(&conf);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	return 0;
}

/* --- kubeconfig: fields ---------------------------------------------------------- */

static void current_context_selects_cluster_and_user(void **state)
{
	assert_int_equal(load_with(SERVER, WITH_TOKEN), KNOT_EOK);
	assert_string_equal(conf.server, "https://127.0.0.1:6443");
	assert_string_equal(conf.token, TOKEN);
	assert_null(conf.token_file);
	assert_null(conf.ca_file);
	assert_null(conf.ca.data);
	assert_false(conf.insecure);
	assert_null(conf.tls_server_name);
	assert_non_null(strstr(conf.source, "context test"));
	assert_non_null(strstr(conf.source, path_of("config")));
}

static void explicit_context_overrides_current_context(void **state)
{
	write_file("config",
	           "current-context: one\n"
	           "clusters:\n"
	           "- {name: c1, cluster: {server: 'https://one.example:6443'}}\n"
	           "- {name: c2, cluster: {server: 'https://two.example:6443'}}\n"
	           "users:\n"
	           "- {name: u1, user: {token: one}}\n"
	           "- {name: u2, user: {token: two}}\n"
	           "contexts:\n"
	           "- {name: one, context: {cluster: c1, user: u1}}\n"
	           "- {name: two, context: {cluster: c2, user: u2}}\n");
	assert_int_equal(k8s_kubeconfig_load(path_of("config"), "two", &conf, err, sizeof(err)),
	                 KNOT_EOK);
	assert_string_equal(conf.server, "https://two.example:6443");
	assert_string_equal(conf.token, "two");
	assert_non_null(strstr(conf.source, "context two"));
}

static void json_kubeconfig_is_read(void **state)
{
	write_file("config.json",
	           "{\"apiVersion\":\"v1\",\"kind\":\"Config\",\"current-context\":\"j\",\n"
	           " \"clusters\":[{\"name\":\"c\",\"cluster\":{\"server\":\"https://10.0.0.1\","
	           "\"certificate-authority-data\":\"" PEM_CA_B64 "\"}}],\n"
	           " \"users\":[{\"name\":\"u\",\"user\":{\"tokenFile\":\"/run/token\"}}],\n"
	           " \"contexts\":[{\"name\":\"j\",\"context\":{\"cluster\":\"c\",\"user\":\"u\"}}]}\n");
	assert_int_equal(k8s_kubeconfig_load(path_of("config.json"), NULL, &conf, err, sizeof(err)),
	                 KNOT_EOK);
	assert_string_equal(conf.server, "https://10.0.0.1");
	assert_string_equal(conf.token_file, "/run/token");
	assert_int_equal(conf.ca.len, strlen(PEM_CA));
	assert_memory_equal(conf.ca.data, PEM_CA, strlen(PEM_CA));
}

static void server_trailing_slash_dropped_and_path_prefix_kept(void **state)
{
	assert_int_equal(load_with("    server: https://rancher.example/k8s/clusters/c-1/\n", ""),
	                 KNOT_EOK);
	assert_string_equal(conf.server, "https://rancher.example/k8s/clusters/c-1");
}

static void certificate_authority_file_is_relative_to_kubeconfig(void **state)
{
	write_file("ca.crt", PEM_CA);
	assert_int_equal(load_with(SERVER "    certificate-authority: ca.crt\n", ""), KNOT_EOK);
	assert_string_equal(conf.ca_file, path_of("ca.crt"));
	assert_null(conf.ca.data);
}

static void relative_kubeconfig_path_gives_absolute_references(void **state)
{
	write_file("ca.crt", PEM_CA);
	assert_int_equal(load_with(SERVER "    certificate-authority: ca.crt\n",
	                           "    tokenFile: sub/token\n"), KNOT_EOK);
	k8s_apiconf_free(&conf);

	char cwd[512];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	char rel[128];
	snprintf(rel, sizeof(rel), "%s/config", dir + strlen("/tmp/"));
	assert_int_equal(chdir("/tmp"), 0);
	int ret = k8s_kubeconfig_load(rel, NULL, &conf, err, sizeof(err));
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(ret, KNOT_EOK);
	assert_string_equal(conf.ca_file, path_of("ca.crt"));
	assert_string_equal(conf.token_file, path_of("sub/token"));
}

static void absolute_references_stay_as_given(void **state)
{
	write_file("ca.crt", PEM_CA);
	char cluster[512];
	snprintf(cluster, sizeof(cluster), SERVER "    certificate-authority: %s\n", path_of("ca.crt"));
	assert_int_equal(load_with(cluster, "    tokenFile: /var/run/token\n"), KNOT_EOK);
	assert_string_equal(conf.ca_file, path_of("ca.crt"));
	assert_string_equal(conf.token_file, "/var/run/token");
}

static void certificate_authority_data_is_base64_decoded(void **state)
{
	assert_int_equal(load_with(SERVER "    certificate-authority-data: " PEM_CA_B64 "\n", ""),
	                 KNOT_EOK);
	assert_int_equal(conf.ca.len, strlen(PEM_CA));
	assert_memory_equal(conf.ca.data, PEM_CA, strlen(PEM_CA));
	assert_null(conf.ca_file);
}

static void base64_with_line_breaks_is_decoded(void **state)
{
	assert_int_equal(load_with(SERVER "    certificate-authority-data: |\n"
	                           "      LS0tLS1QRU0g\n      Q0EtLS0tLQo=\n", ""), KNOT_EOK);
	assert_int_equal(conf.ca.len, strlen(PEM_CA));
	assert_memory_equal(conf.ca.data, PEM_CA, strlen(PEM_CA));
}

static void data_field_overrides_file_field(void **state)
{
	assert_int_equal(load_with(SERVER "    certificate-authority: missing.crt\n"
	                           "    certificate-authority-data: " PEM_CA_B64 "\n", ""), KNOT_EOK);
	assert_null(conf.ca_file);
	assert_int_equal(conf.ca.len, strlen(PEM_CA));
}

static void client_certificate_and_key_files(void **state)
{
	write_file("tls.crt", PEM_CRT);
	write_file("tls.key", PEM_KEY);
	assert_int_equal(load_with(SERVER, "    client-certificate: tls.crt\n"
	                                   "    client-key: tls.key\n"), KNOT_EOK);
	assert_string_equal(conf.cert_file, path_of("tls.crt"));
	assert_string_equal(conf.key_file, path_of("tls.key"));
	assert_null(conf.token);
}

static void client_certificate_and_key_data(void **state)
{
	assert_int_equal(load_with(SERVER, "    client-certificate-data: " PEM_CRT_B64 "\n"
	                                   "    client-key-data: " PEM_KEY_B64 "\n"), KNOT_EOK);
	assert_int_equal(conf.cert.len, strlen(PEM_CRT));
	assert_memory_equal(conf.cert.data, PEM_CRT, strlen(PEM_CRT));
	assert_int_equal(conf.key.len, strlen(PEM_KEY));
	assert_memory_equal(conf.key.data, PEM_KEY, strlen(PEM_KEY));
}

static void client_certificate_without_key_is_rejected(void **state)
{
	assert_int_equal(load_with(SERVER, "    client-certificate-data: " PEM_CRT_B64 "\n"),
	                 KNOT_EINVAL);
	assert_non_null(strstr(err, "user 'u'"));
	assert_non_null(strstr(err, "client-key"));
	assert_null(conf.server); // Nothing half-filled is left.
}

static void token_and_token_file_are_both_kept(void **state)
{
	assert_int_equal(load_with(SERVER, WITH_TOKEN "    tokenFile: token\n"), KNOT_EOK);
	assert_string_equal(conf.token, TOKEN);
	assert_string_equal(conf.token_file, path_of("token"));
}

static void tls_server_name_and_insecure_skip_verify(void **state)
{
	assert_int_equal(load_with(SERVER "    tls-server-name: kubernetes.default.svc\n", ""),
	                 KNOT_EOK);
	assert_string_equal(conf.tls_server_name, "kubernetes.default.svc");
	assert_false(conf.insecure);
	k8s_apiconf_free(&conf);

	assert_int_equal(load_with(SERVER "    insecure-skip-tls-verify: true\n", ""), KNOT_EOK);
	assert_true(conf.insecure);
}

static void insecure_accepts_yaml_boolean_spellings(void **state)
{
	assert_int_equal(load_with(SERVER "    insecure-skip-tls-verify: yes\n", ""), KNOT_EOK);
	assert_true(conf.insecure);
	k8s_apiconf_free(&conf);
	assert_int_equal(load_with(SERVER "    insecure-skip-tls-verify: False\n", ""), KNOT_EOK);
	assert_false(conf.insecure);
}

static void insecure_that_is_no_boolean_is_rejected(void **state)
{
	assert_int_equal(load_with(SERVER "    insecure-skip-tls-verify: maybe\n", ""), KNOT_EINVAL);
	assert_non_null(strstr(err, "insecure-skip-tls-verify is not a boolean"));
}

static void insecure_with_certificate_authority_is_rejected(void **state)
{
	assert_int_equal(load_with(SERVER "    insecure-skip-tls-verify: true\n"
	                           "    certificate-authority-data: " PEM_CA_B64 "\n", ""),
	                 KNOT_EINVAL);
	assert_non_null(strstr(err, "cluster 'c'"));
}

static void null_values_count_as_absent(void **state)
{
	assert_int_equal(load_with(SERVER "    tls-server-name: ~\n",
	                           "    token: null\n    tokenFile:\n"), KNOT_EOK);
	assert_null(conf.tls_server_name);
	assert_null(conf.token);
	assert_null(conf.token_file);
}

static void context_without_user_has_no_credentials(void **state)
{
	write_file("config",
	           "current-context: p\n"
	           "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:8001'}}]\n"
	           "contexts: [{name: p, context: {cluster: c}}]\n");
	assert_int_equal(k8s_kubeconfig_load(path_of("config"), NULL, &conf, err, sizeof(err)),
	                 KNOT_EOK);
	assert_string_equal(conf.server, "http://127.0.0.1:8001");
	assert_null(conf.token);
	assert_null(conf.cert_file);
}

/* --- kubeconfig: servers ---------------------------------------------------------- */

static void ipv6_server_in_brackets_is_accepted(void **state)
{
	assert_int_equal(load_with("    server: https://[fd00:10:96::1]:6443\n", ""), KNOT_EOK);
	assert_string_equal(conf.server, "https://[fd00:10:96::1]:6443");
}

static void ipv6_server_without_brackets_is_rejected(void **state)
{
	assert_int_equal(load_with("    server: https://fd00:10:96::1:6443\n", ""), KNOT_EINVAL);
	assert_non_null(strstr(err, "cluster 'c': server"));
	assert_non_null(strstr(err, "brackets"));
}

static void plain_http_to_remote_host_is_rejected(void **state)
{
	assert_int_equal(load_with("    server: http://api.example:8080\n", ""), KNOT_EINVAL);
	assert_non_null(strstr(err, "loopback"));
}

static void plain_http_to_loopback_is_accepted(void **state)
{
	static const char *servers[] = {
		"    server: http://127.0.0.1:8001\n",
		"    server: http://localhost:8001\n",
		"    server: http://[::1]:8001\n",
	};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(load_with(servers[i], ""), KNOT_EOK);
		k8s_apiconf_free(&conf);
	}
}

static void other_schemes_are_rejected(void **state)
{
	assert_int_equal(load_with("    server: ftp://127.0.0.1\n", ""), KNOT_EINVAL);
	assert_non_null(strstr(err, "https"));
}

static void server_missing_is_reported(void **state)
{
	assert_int_equal(load_with("    tls-server-name: x\n", ""), KNOT_ENOENT);
	assert_non_null(strstr(err, "cluster 'c': server is missing"));
}

static void proxy_url_is_rejected(void **state)
{
	assert_int_equal(load_with(SERVER "    proxy-url: http://proxy:3128\n", ""), KNOT_EINVAL);
	assert_non_null(strstr(err, "proxy-url"));
}

/* --- kubeconfig: what is refused ---------------------------------------------------- */

static void exec_plugin_is_rejected_without_leaking_the_token(void **state)
{
	assert_int_equal(load_with(SERVER, WITH_TOKEN
	                           "    exec:\n"
	                           "      apiVersion: client.authentication.k8s.io/v1\n"
	                           "      command: aws\n"), KNOT_EINVAL);
	assert_non_null(strstr(err, "kubeconfig "));
	assert_non_null(strstr(err, "user 'u'"));
	assert_non_null(strstr(err, "exec"));
	assert_null(strstr(err, TOKEN));
}

static void auth_provider_is_rejected(void **state)
{
	assert_int_equal(load_with(SERVER, "    auth-provider: {name: gcp}\n"), KNOT_EINVAL);
	assert_non_null(strstr(err, "auth-provider"));
}

static void username_and_password_are_rejected(void **state)
{
	assert_int_equal(load_with(SERVER, "    username: admin\n    password: hunter2\n"),
	                 KNOT_EINVAL);
	assert_non_null(strstr(err, "username/password"));
	assert_null(strstr(err, "hunter2"));
}

static void impersonation_is_rejected(void **state)
{
	assert_int_equal(load_with(SERVER, WITH_TOKEN "    as: system:admin\n"), KNOT_EINVAL);
	assert_non_null(strstr(err, "impersonation"));
}

static void token_with_control_characters_is_refused_without_naming_it(void **state)
{
	// A CR LF in the token would be sent by libcurl as a header of its own.
	assert_int_equal(load_with(SERVER, "    token: \"t0ken\\r\\nX-Injected: 1\"\n"),
	                 KNOT_EINVAL);
	assert_non_null(strstr(err, "user 'u': token contains control characters"));
	assert_null(strstr(err, "t0ken"));
	assert_null(strstr(err, "X-Injected"));
	assert_null(conf.token);
	k8s_apiconf_free(&conf);

	assert_int_equal(load_with(SERVER, "    token: \"t0ken\\u007f\"\n"), KNOT_EINVAL);
	assert_null(strstr(err, "t0ken"));
}

static void server_with_user_information_is_refused_and_not_repeated(void **state)
{
	static const char *servers[] = {
		"    server: https://admin:hunter2@127.0.0.1:6443\n",
		"    server: https://admin@127.0.0.1:6443\n",
		"    server: http://admin:hunter2@127.0.0.1:8001\n",
	};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(load_with(servers[i], WITH_TOKEN), KNOT_EINVAL);
		assert_non_null(strstr(err, "cluster 'c': server is a url with user information"));
		assert_null(strstr(err, "hunter2"));
		assert_null(strstr(err, "admin"));
		assert_null(conf.server);
	}
}

/* A child writing \a pad bytes of YAML comments, then a valid kubeconfig, into a FIFO. */
static pid_t fifo_writer(const char *path, size_t pad)
{
	assert_int_equal(mkfifo(path, 0600), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid > 0) {
		return pid;
	}
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		_exit(1);
	}
	char line[128];
	memset(line, 'x', sizeof(line));
	line[0] = '#';
	line[sizeof(line) - 1] = '\n';
	for (size_t done = 0; done < pad; done += sizeof(line)) {
		fwrite(line, 1, sizeof(line), f);
	}
	fputs("current-context: t\n"
	      "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}]\n"
	      "contexts: [{name: t, context: {cluster: c}}]\n", f);
	fclose(f);
	_exit(0);
}

static void kubeconfig_from_a_fifo_is_cut_at_the_size_limit(void **state)
{
	// A FIFO has no size: the limit must hold while reading.
	pid_t pid = fifo_writer(path_of("fifo"), K8S_KUBECONFIG_MAX + 65536);
	assert_int_equal(k8s_kubeconfig_load(path_of("fifo"), NULL, &conf, err, sizeof(err)),
	                 KNOT_EMALF);
	assert_non_null(strstr(err, "larger than 4194304 bytes"));
	assert_null(conf.server);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

static void kubeconfig_from_a_fifo_under_the_limit_is_read(void **state)
{
	pid_t pid = fifo_writer(path_of("fifo"), K8S_KUBECONFIG_MAX - 4096);
	assert_int_equal(k8s_kubeconfig_load(path_of("fifo"), NULL, &conf, err, sizeof(err)),
	                 KNOT_EOK);
	assert_string_equal(conf.server, "https://127.0.0.1:6443");
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void regular_file_over_the_size_limit_is_refused(void **state)
{
	char path[256];
	snprintf(path, sizeof(path), "%s", path_of("big"));
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fseek(f, K8S_KUBECONFIG_MAX, SEEK_SET), 0);
	fputc('\n', f);
	fclose(f);
	assert_int_equal(k8s_kubeconfig_load(path, NULL, &conf, err, sizeof(err)), KNOT_EMALF);
	assert_non_null(strstr(err, "larger than"));
}

/* --- kubeconfig: missing and broken pieces ------------------------------------------- */

static void missing_file_names_the_file(void **state)
{
	assert_int_equal(k8s_kubeconfig_load(path_of("nope"), NULL, &conf, err, sizeof(err)),
	                 KNOT_ENOENT);
	assert_non_null(strstr(err, path_of("nope")));
}

static void malformed_yaml_gives_the_line(void **state)
{
	write_file("config", "clusters:\n- name: c\n  cluster: {server: [\n");
	assert_int_equal(k8s_kubeconfig_load(path_of("config"), NULL, &conf, err, sizeof(err)),
	                 KNOT_EMALF);
	assert_non_null(strstr(err, "not valid YAML"));
	assert_non_null(strstr(err, "line "));
}

static void top_level_that_is_no_mapping_is_malformed(void **state)
{
	write_file("config", "- just\n- a list\n");
	assert_int_equal(k8s_kubeconfig_load(path_of("config"), NULL, &conf, err, sizeof(err)),
	                 KNOT_EMALF);
	write_file("config", "");
	assert_int_equal(k8s_kubeconfig_load(path_of("config"), NULL, &conf, err, sizeof(err)),
	                 KNOT_EMALF);
}

static void no_current_context_and_none_given(void **state)
{
	write_file("config", "clusters: []\n");
	assert_int_equal(k8s_kubeconfig_load(path_of("config"), NULL, &conf, err, sizeof(err)),
	                 KNOT_ENOENT);
	assert_non_null(strstr(err, "current-context"));
}

static void unknown_context_cluster_or_user_is_named(void **state)
{
	assert_int_equal(load_with(SERVER, ""), KNOT_EOK);
	k8s_apiconf_free(&conf);
	assert_int_equal(k8s_kubeconfig_load(path_of("config"), "other", &conf, err, sizeof(err)),
	                 KNOT_ENOENT);
	assert_non_null(strstr(err, "context 'other' not found"));

	write_file("config", "current-context: x\n"
	                     "contexts: [{name: x, context: {cluster: gone, user: u}}]\n");
	assert_int_equal(k8s_kubeconfig_load(path_of("config"), NULL, &conf, err, sizeof(err)),
	                 KNOT_ENOENT);
	assert_non_null(strstr(err, "cluster 'gone' not found"));

	write_file("config", "current-context: x\n"
	                     "clusters: [{name: c, cluster: {server: 'https://a'}}]\n"
	                     "contexts: [{name: x, context: {cluster: c, user: nobody}}]\n");
	assert_int_equal(k8s_kubeconfig_load(path_of("config"), NULL, &conf, err, sizeof(err)),
	                 KNOT_ENOENT);
	assert_non_null(strstr(err, "user 'nobody' not found"));
}

static void bad_base64_names_the_key_not_the_value(void **state)
{
	assert_int_equal(load_with(SERVER "    certificate-authority-data: 'not*base64!'\n", ""),
	                 KNOT_EINVAL);
	assert_non_null(strstr(err, "certificate-authority-data is not valid base64"));
	assert_null(strstr(err, "not*base64"));
	k8s_apiconf_free(&conf);

	// Unpadded, and data after padding.
	assert_int_equal(load_with(SERVER, "    client-key-data: LS0tLS1QRU0gS0VZLS0tLS0\n"
	                                   "    client-certificate-data: " PEM_CRT_B64 "\n"),
	                 KNOT_EINVAL);
	assert_non_null(strstr(err, "client-key-data"));
	k8s_apiconf_free(&conf);
	assert_int_equal(load_with(SERVER "    certificate-authority-data: 'QQ==QQ=='\n", ""),
	                 KNOT_EINVAL);
}

static void referenced_file_missing_is_reported(void **state)
{
	assert_int_equal(load_with(SERVER "    certificate-authority: missing.crt\n", ""),
	                 KNOT_ENOENT);
	assert_non_null(strstr(err, "certificate-authority"));
	assert_non_null(strstr(err, path_of("missing.crt")));
}

static void field_of_wrong_type_is_rejected(void **state)
{
	assert_int_equal(load_with("    server: [https://a]\n", ""), KNOT_EINVAL);
	assert_non_null(strstr(err, "cluster 'c': server is not a string"));
}

static void free_zeroes_the_settings(void **state)
{
	assert_int_equal(load_with(SERVER, WITH_TOKEN), KNOT_EOK);
	k8s_apiconf_free(&conf);
	k8s_apiconf_t zero = { 0 };
	assert_memory_equal(&conf, &zero, sizeof(conf));
	k8s_apiconf_free(&conf); // Twice is harmless.
}

/* --- in-cluster -------------------------------------------------------------------- */

static void write_sa_files(void)
{
	write_file("token", TOKEN "\n");
	write_file("ca.crt", PEM_CA);
}

static void incluster_without_environment_is_not_in_a_cluster(void **state)
{
	write_sa_files();
	assert_int_equal(k8s_incluster_load(dir, &conf, err, sizeof(err)), KNOT_ENOENT);
	assert_non_null(strstr(err, "KUBERNETES_SERVICE_HOST"));

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "", 1);
	assert_int_equal(k8s_incluster_load(dir, &conf, err, sizeof(err)), KNOT_ENOENT);
}

static void incluster_uses_service_variables_and_account_files(void **state)
{
	write_sa_files();
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(k8s_incluster_load(dir, &conf, err, sizeof(err)), KNOT_EOK);
	assert_string_equal(conf.server, "https://10.96.0.1:443");
	assert_string_equal(conf.token_file, path_of("token"));
	assert_string_equal(conf.ca_file, path_of("ca.crt"));
	assert_null(conf.token); // Read (and re-read) from token_file by the API client.
	assert_string_equal(conf.source, "in-cluster");
}

static void incluster_ipv6_host_is_bracketed(void **state)
{
	write_sa_files();
	setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
	assert_int_equal(k8s_incluster_load(dir, &conf, err, sizeof(err)), KNOT_EOK);
	assert_string_equal(conf.server, "https://[fd00:10:96::1]:6443");
}

static void incluster_missing_token_or_ca_is_reported(void **state)
{
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	write_file("ca.crt", PEM_CA);
	assert_int_equal(k8s_incluster_load(dir, &conf, err, sizeof(err)), KNOT_ENOENT);
	assert_non_null(strstr(err, path_of("token")));

	write_file("token", TOKEN);
	assert_int_equal(unlink(path_of("ca.crt")), 0);
	assert_int_equal(k8s_incluster_load(dir, &conf, err, sizeof(err)), KNOT_ENOENT);
	assert_non_null(strstr(err, path_of("ca.crt")));
	assert_null(conf.server);
}

static void incluster_port_that_is_no_number_is_rejected(void **state)
{
	write_sa_files();
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "https", 1);
	assert_int_equal(k8s_incluster_load(dir, &conf, err, sizeof(err)), KNOT_EINVAL);
	assert_non_null(strstr(err, "KUBERNETES_SERVICE_PORT"));
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(current_context_selects_cluster_and_user),
		T(explicit_context_overrides_current_context),
		T(json_kubeconfig_is_read),
		T(server_trailing_slash_dropped_and_path_prefix_kept),
		T(certificate_authority_file_is_relative_to_kubeconfig),
		T(relative_kubeconfig_path_gives_absolute_references),
		T(absolute_references_stay_as_given),
		T(certificate_authority_data_is_base64_decoded),
		T(base64_with_line_breaks_is_decoded),
		T(data_field_overrides_file_field),
		T(client_certificate_and_key_files),
		T(client_certificate_and_key_data),
		T(client_certificate_without_key_is_rejected),
		T(token_and_token_file_are_both_kept),
		T(tls_server_name_and_insecure_skip_verify),
		T(insecure_accepts_yaml_boolean_spellings),
		T(insecure_that_is_no_boolean_is_rejected),
		T(insecure_with_certificate_authority_is_rejected),
		T(null_values_count_as_absent),
		T(context_without_user_has_no_credentials),
		T(ipv6_server_in_brackets_is_accepted),
		T(ipv6_server_without_brackets_is_rejected),
		T(plain_http_to_remote_host_is_rejected),
		T(plain_http_to_loopback_is_accepted),
		T(other_schemes_are_rejected),
		T(server_missing_is_reported),
		T(proxy_url_is_rejected),
		T(exec_plugin_is_rejected_without_leaking_the_token),
		T(auth_provider_is_rejected),
		T(username_and_password_are_rejected),
		T(impersonation_is_rejected),
		T(token_with_control_characters_is_refused_without_naming_it),
		T(server_with_user_information_is_refused_and_not_repeated),
		T(kubeconfig_from_a_fifo_is_cut_at_the_size_limit),
		T(kubeconfig_from_a_fifo_under_the_limit_is_read),
		T(regular_file_over_the_size_limit_is_refused),
		T(missing_file_names_the_file),
		T(malformed_yaml_gives_the_line),
		T(top_level_that_is_no_mapping_is_malformed),
		T(no_current_context_and_none_given),
		T(unknown_context_cluster_or_user_is_named),
		T(bad_base64_names_the_key_not_the_value),
		T(referenced_file_missing_is_reported),
		T(field_of_wrong_type_is_rejected),
		T(free_zeroes_the_settings),
		T(incluster_without_environment_is_not_in_a_cluster),
		T(incluster_uses_service_variables_and_account_files),
		T(incluster_ipv6_host_is_bracketed),
		T(incluster_missing_token_or_ca_is_reported),
		T(incluster_port_that_is_no_number_is_rejected),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
