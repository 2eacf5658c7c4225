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
 * One GET through the API client, for tests/integration/api/test_apiclient.py:
 *
 *   api_get KUBECONFIG CONTEXT PATH
 *
 * Prints "status CODE" and the body on success (exit 0 for 200, 1 for another
 * status), "transfer failed (REASON)" on a transport error (exit 2) and the
 * kubeconfig error (exit 3). CONTEXT "-" means current-context.
 */

#include <stdio.h>
#include <string.h>

#include <libknot/errcode.h>

#include "api/apiclient.h"

static void to_stderr(void *ctx, int priority, const char *msg)
{
	fprintf(stderr, "%s\n", msg);
}

static size_t to_stdout(char *data, size_t size, size_t nmemb, void *ctx)
{
	return fwrite(data, size, nmemb, stdout) * size;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s KUBECONFIG CONTEXT PATH\n", argv[0]);
		return 3;
	}
	const k8s_log_t log = { .fn = to_stderr };
	char err[512];
	k8s_apiconf_t conf;
	const char *context = strcmp(argv[2], "-") == 0 ? NULL : argv[2];
	if (k8s_kubeconfig_load(argv[1], context, &conf, err, sizeof(err)) != KNOT_EOK) {
		printf("%s\n", err);
		return 3;
	}

	curl_global_init(CURL_GLOBAL_DEFAULT);
	k8s_api_t api;
	CURL *easy = curl_easy_init();
	struct curl_slist *headers = NULL;
	char curl_err[CURL_ERROR_SIZE] = "";
	int ret = 2;
	if (k8s_api_init(&api, &conf, &log) == KNOT_EOK &&
	    k8s_api_prepare(&api, easy, argv[3], &headers, 10, 20) == KNOT_EOK) {
		curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, to_stdout);
		curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, curl_err);
		CURLcode rc = curl_easy_perform(easy);
		long code = 0;
		curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
		if (rc == CURLE_OK) {
			printf("\nstatus %ld\n", code);
			ret = (code == 200) ? 0 : 1;
		} else {
			printf("transfer failed (%s)\n", curl_err[0] ? curl_err : curl_easy_strerror(rc));
		}
		k8s_api_headers_free(headers);
		k8s_api_deinit(&api);
	}
	curl_easy_cleanup(easy);
	curl_global_cleanup();
	return ret;
}
