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
 * The API client's credentials and request set-up (module/api/apiclient.c):
 * token file re-reading (k8s_api.md 3.1: at most every 60 s, at once after
 * a 401), tls-server-name handling, headers and query escaping. TLS itself is
 * exercised against a real server by tests/integration/api/test_apiclient.py.
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

#include "api/apiclient.h"

static char dir[64];
static char token_path[128];
static char logged[2048];
static k8s_api_t api;

static void capture(void *ctx, int priority, const char *msg)
{
	strncat(logged, msg, sizeof(logged) - strlen(logged) - 2);
	strcat(logged, "\n");
}

static const k8s_log_t test_log = { .fn = capture };

static void write_token(const char *text)
{
	FILE *f = fopen(token_path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* An API client for https://127.0.0.1:6443 with the given token, token file and TLS name. */
static void api_with(const char *token, bool token_file, const char *tls_name)
{
	k8s_apiconf_t conf = { 0 };
	conf.server = strdup("https://127.0.0.1:6443");
	conf.token = token ? strdup(token) : NULL;
	conf.token_file = token_file ? strdup(token_path) : NULL;
	conf.tls_server_name = tls_name ? strdup(tls_name) : NULL;
	assert_int_equal(k8s_api_init(&api, &conf, &test_log), KNOT_EOK);
	assert_null(conf.server); // Taken over.
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/test_apiclient.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(token_path, sizeof(token_path), "%s/token", dir);
	logged[0] = '\0';
	return 0;
}

static int teardown(void **state)
{
	k8s_api_deinit(&api);
	unlink(token_path);
	rmdir(dir);
	return 0;
}

/* --- tokens -------------------------------------------------------------------------- */

static void static_token_is_used(void **state)
{
	api_with("static-token", false, NULL);
	assert_string_equal(api.token, "static-token");
}

static void token_file_is_read_at_init_and_trimmed(void **state)
{
	write_token("  file-token\n\n");
	api_with(NULL, true, NULL);
	assert_string_equal(api.token, "file-token");
}

static void token_file_wins_over_static_token(void **state)
{
	write_token("file-token\n");
	api_with("static-token", true, NULL);
	assert_string_equal(api.token, "file-token");
}

static void token_file_is_not_reread_within_60_s(void **state)
{
	write_token("one\n");
	api_with(NULL, true, NULL);
	uint64_t t0 = 5 * K8S_TOKEN_REREAD_MS;
	k8s_api_refresh_token(&api, false, t0);
	assert_int_equal(api.token_read_ms, t0);
	write_token("two\n");
	k8s_api_refresh_token(&api, false, t0 + K8S_TOKEN_REREAD_MS - 1);
	assert_string_equal(api.token, "one");
	k8s_api_refresh_token(&api, false, t0 + K8S_TOKEN_REREAD_MS);
	assert_string_equal(api.token, "two");
}

static void forced_refresh_rereads_at_once(void **state)
{
	write_token("one\n");
	api_with(NULL, true, NULL);
	assert_false(k8s_api_refresh_token(&api, true, api.token_read_ms + 1)); // Unchanged.
	write_token("rotated\n");
	assert_true(k8s_api_refresh_token(&api, true, api.token_read_ms + 1));
	assert_string_equal(api.token, "rotated");
}

static void missing_token_file_is_logged_and_retried(void **state)
{
	api_with(NULL, true, NULL);
	assert_null(api.token);
	assert_non_null(strstr(logged, token_path));
	assert_non_null(strstr(logged, "sending no token"));

	write_token("late\n");
	k8s_api_refresh_token(&api, true, api.token_read_ms + 1);
	assert_string_equal(api.token, "late");
}

static void unreadable_or_empty_token_file_keeps_the_previous_token(void **state)
{
	write_token("good\n");
	api_with(NULL, true, NULL);
	write_token(" \n");
	assert_false(k8s_api_refresh_token(&api, true, api.token_read_ms + 1));
	assert_string_equal(api.token, "good");
	assert_non_null(strstr(logged, "keeping the previous token (empty)"));

	unlink(token_path);
	k8s_api_refresh_token(&api, true, api.token_read_ms + 1);
	assert_string_equal(api.token, "good");
	assert_null(strstr(logged, "good")); // The token never reaches a log line.
}

static void token_generation_counts_changes_only(void **state)
{
	write_token("one\n");
	api_with(NULL, true, NULL);
	uint64_t gen = api.token_gen;
	assert_false(k8s_api_refresh_token(&api, true, 1000));
	assert_int_equal(api.token_gen, gen);
	write_token("two\n");
	assert_true(k8s_api_refresh_token(&api, true, 2000));
	assert_int_equal(api.token_gen, gen + 1);
	unlink(token_path); // Kept, so unchanged.
	assert_false(k8s_api_refresh_token(&api, true, 3000));
	assert_int_equal(api.token_gen, gen + 1);
}

static size_t count_lines(const char *text, const char *what)
{
	size_t n = 0;
	for (const char *p = strstr(text, what); p != NULL; p = strstr(p + 1, what)) {
		n++;
	}
	return n;
}

static void unreadable_token_file_read_every_second_is_logged_once_a_minute(void **state)
{
	write_token("good\n");
	api_with(NULL, true, NULL);
	unlink(token_path);
	uint64_t now = 1000;
	for (int i = 0; i < 60; i++, now += 1000) { // 1 s to 60 s.
		k8s_api_refresh_token(&api, true, now);
	}
	assert_int_equal(count_lines(logged, "cannot be read"), 1);
	k8s_api_refresh_token(&api, true, now); // 61 s: a minute after the first.
	assert_int_equal(count_lines(logged, "cannot be read"), 2);

	// Another reason, and unreadable again after a good read: logged at once.
	write_token(" \n");
	k8s_api_refresh_token(&api, true, now += 1000);
	assert_int_equal(count_lines(logged, "cannot be read"), 3);
	assert_non_null(strstr(logged, "(empty)"));
	write_token("good\n");
	k8s_api_refresh_token(&api, true, now += 1000);
	write_token(" \n");
	k8s_api_refresh_token(&api, true, now += 1000);
	assert_int_equal(count_lines(logged, "cannot be read"), 4);
	assert_null(strstr(logged, "good"));
}

static void refresh_without_token_file_keeps_static_token(void **state)
{
	api_with("static-token", false, NULL);
	k8s_api_refresh_token(&api, true, 1);
	assert_string_equal(api.token, "static-token");
	assert_string_equal(logged, "");
}

static void token_file_with_control_characters_is_refused_without_logging_it(void **state)
{
	write_token("evil\r\nX-Injected: 1\n");
	api_with(NULL, true, NULL);
	assert_null(api.token);
	assert_non_null(strstr(logged, "sending no token (contains control characters)"));

	write_token("good\n");
	assert_true(k8s_api_refresh_token(&api, true, api.token_read_ms + 1));
	write_token("good\tX\n");
	assert_false(k8s_api_refresh_token(&api, true, api.token_read_ms + 1));
	assert_string_equal(api.token, "good");
	assert_non_null(strstr(logged, "keeping the previous token (contains control characters)"));
	assert_null(strstr(logged, "evil"));
	assert_null(strstr(logged, "X-Injected"));
	assert_null(strstr(logged, "good"));
}

static void static_token_with_control_characters_is_refused(void **state)
{
	k8s_apiconf_t conf = { 0 };
	conf.server = strdup("https://127.0.0.1:6443");
	conf.token = strdup("evil\r\nX-Injected: 1");
	assert_int_equal(k8s_api_init(&api, &conf, &test_log), KNOT_EINVAL);
	assert_null(api.token);
	assert_non_null(strstr(logged, "static token refused (contains control characters)"));
	assert_null(strstr(logged, "evil"));
}

static void token_file_from_a_fifo_is_cut_at_its_size_limit(void **state)
{
	// A FIFO has no size: the limit holds while reading.
	assert_int_equal(mkfifo(token_path, 0600), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		FILE *f = fopen(token_path, "w");
		for (size_t i = 0; f != NULL && i < 2 * 64 * 1024; i++) {
			fputc('t', f);
		}
		_exit(0);
	}
	api_with(NULL, true, NULL);
	assert_null(api.token);
	assert_non_null(strstr(logged, "sending no token (too large)"));
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

static void insecure_skip_verify_is_warned_once(void **state)
{
	k8s_apiconf_t conf = { 0 };
	conf.server = strdup("https://127.0.0.1:6443");
	conf.insecure = true;
	assert_int_equal(k8s_api_init(&api, &conf, &test_log), KNOT_EOK);
	for (int i = 0; i < 3; i++) {
		CURL *easy = curl_easy_init();
		struct curl_slist *headers = NULL;
		assert_int_equal(k8s_api_prepare(&api, easy, "/api/v1/pods", &headers, 90, 0), KNOT_EOK);
		k8s_api_headers_free(headers);
		curl_easy_cleanup(easy);
	}
	const char *first = strstr(logged, "(insecure-skip-tls-verify)");
	assert_non_null(first);
	assert_null(strstr(first + 1, "(insecure-skip-tls-verify)"));
}

static void verified_tls_gives_no_insecure_warning(void **state)
{
	api_with(NULL, false, NULL);
	assert_null(strstr(logged, "insecure"));
}

/* --- request set-up ------------------------------------------------------------------- */

static bool has_header(const struct curl_slist *h, const char *line)
{
	for (; h != NULL; h = h->next) {
		if (strcmp(h->data, line) == 0) {
			return true;
		}
	}
	return false;
}

static bool has_header_prefix(const struct curl_slist *h, const char *prefix)
{
	for (; h != NULL; h = h->next) {
		if (strncmp(h->data, prefix, strlen(prefix)) == 0) {
			return true;
		}
	}
	return false;
}

static void prepare_sets_accept_and_bearer_headers(void **state)
{
	api_with("tok", false, NULL);
	CURL *easy = curl_easy_init();
	struct curl_slist *headers = NULL;
	assert_int_equal(k8s_api_prepare(&api, easy, "/api/v1/services?limit=500", &headers, 90, 0),
	                 KNOT_EOK);
	assert_true(has_header(headers, "Accept: application/json"));
	assert_true(has_header(headers, "Authorization: Bearer tok"));
	assert_false(has_header_prefix(headers, "Host:"));
	assert_string_equal(api.url_base, "https://127.0.0.1:6443");
	assert_null(api.connect_to);
	k8s_api_headers_free(headers);
	curl_easy_cleanup(easy);
}

static void prepare_without_token_sends_no_authorization(void **state)
{
	api_with(NULL, false, NULL);
	CURL *easy = curl_easy_init();
	struct curl_slist *headers = NULL;
	assert_int_equal(k8s_api_prepare(&api, easy, "/api/v1/services", &headers, 90, 0), KNOT_EOK);
	assert_false(has_header_prefix(headers, "Authorization:"));
	k8s_api_headers_free(headers);
	curl_easy_cleanup(easy);
}

static void tls_server_name_is_put_in_the_url_and_connected_to_the_server(void **state)
{
	api_with(NULL, false, "kubernetes.default.svc");
	assert_string_equal(api.url_base, "https://kubernetes.default.svc:6443");
	assert_non_null(api.connect_to);
	assert_string_equal(api.connect_to->data, "kubernetes.default.svc:6443:127.0.0.1:6443");

	CURL *easy = curl_easy_init();
	struct curl_slist *headers = NULL;
	assert_int_equal(k8s_api_prepare(&api, easy, "/api/v1/pods", &headers, 90, 0), KNOT_EOK);
	assert_true(has_header(headers, "Host: 127.0.0.1:6443"));
	k8s_api_headers_free(headers);
	curl_easy_cleanup(easy);
}

static void tls_server_name_keeps_path_prefix_and_default_port(void **state)
{
	k8s_apiconf_t conf = { 0 };
	conf.server = strdup("https://[fd00::1]/k8s/clusters/c-1");
	conf.tls_server_name = strdup("fd00::99");
	assert_int_equal(k8s_api_init(&api, &conf, &test_log), KNOT_EOK);
	assert_string_equal(api.url_base, "https://[fd00::99]/k8s/clusters/c-1");
	assert_string_equal(api.connect_to->data, "[fd00::99]:443:[fd00::1]:443");
	assert_string_equal(api.host_header, "Host: [fd00::1]");
}

/* --- escaping --------------------------------------------------------------------------- */

static void escape_keeps_unreserved_and_encodes_the_rest(void **state)
{
	char *out = k8s_api_escape("multicluster.kubernetes.io/service-name in (a,b)");
	assert_string_equal(out, "multicluster.kubernetes.io%2Fservice-name%20in%20%28a%2Cb%29");
	free(out);
	out = k8s_api_escape("status.phase!=Succeeded,x=~_");
	assert_string_equal(out, "status.phase%21%3DSucceeded%2Cx%3D~_");
	free(out);
	out = k8s_api_escape("");
	assert_string_equal(out, "");
	free(out);
	out = k8s_api_escape("\xc3\xa9+&");
	assert_string_equal(out, "%C3%A9%2B%26");
	free(out);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	const struct CMUnitTest tests[] = {
		T(static_token_is_used),
		T(token_file_is_read_at_init_and_trimmed),
		T(token_file_wins_over_static_token),
		T(token_file_is_not_reread_within_60_s),
		T(forced_refresh_rereads_at_once),
		T(missing_token_file_is_logged_and_retried),
		T(unreadable_or_empty_token_file_keeps_the_previous_token),
		T(token_generation_counts_changes_only),
		T(unreadable_token_file_read_every_second_is_logged_once_a_minute),
		T(refresh_without_token_file_keeps_static_token),
		T(token_file_with_control_characters_is_refused_without_logging_it),
		T(static_token_with_control_characters_is_refused),
		T(token_file_from_a_fifo_is_cut_at_its_size_limit),
		T(insecure_skip_verify_is_warned_once),
		T(verified_tls_gives_no_insecure_warning),
		T(prepare_sets_accept_and_bearer_headers),
		T(prepare_without_token_sends_no_authorization),
		T(tls_server_name_is_put_in_the_url_and_connected_to_the_server),
		T(tls_server_name_keeps_path_prefix_and_default_port),
		T(escape_keeps_unreserved_and_encodes_the_rest),
	};
	int ret = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return ret;
}
