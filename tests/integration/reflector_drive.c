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
 * Runs reflectors against an API server, as the watcher thread does, for
 * tests/integration/api/test_reflector.py:
 *
 *   reflector_drive KUBECONFIG SPEC...
 *
 * Each SPEC is one reflector, its source number being its position (0, 1, ...):
 *   kind=services,path=/api/v1/services[,path=/second/path][,optional][,watchlist]
 *   [,limit=N][,stall=SECONDS][,absent=SECONDS][,max=BYTES][,labels=SELECTOR][,fields=SELECTOR]
 *
 * Every sink call and log line goes to stdout as one line, in order:
 *   list_begin SRC | list_end SRC | upsert SRC NS/NAME DIGEST | remove SRC NS/NAME
 *   too_large SRC NS/NAME [deleted]
 *   log PRIORITY MESSAGE
 * Commands on stdin: "stats" prints one "stats SRC key=value..." line per
 * reflector, then "stats end"; "quit" or end of input frees everything and exits.
 * The loop is the one the watcher runs: tick() when due, curl_multi_poll(),
 * curl_multi_perform(), done() for each finished transfer, then tick() again.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libknot/errcode.h>

#include "api/apiclient.h"
#include "kinds/objects.h"
#include "api/reflector.h"

#define MAX_REFLECTORS 8

static void print_log(void *ctx, int priority, const char *msg)
{
	printf("log %d %s\n", priority, msg);
	fflush(stdout);
}

static void sink_upsert(void *ctx, unsigned source, k8s_object_t *obj)
{
	printf("upsert %u %s/%s %016" PRIx64 "\n", source, obj->ns, obj->name, k8s_object_digest_of(obj));
	fflush(stdout);
	k8s_object_free(obj);
}

static void sink_remove(void *ctx, unsigned source, k8s_object_t *obj)
{
	printf("remove %u %s/%s\n", source, obj->ns, obj->name);
	fflush(stdout);
	k8s_object_free(obj);
}

static void sink_list_begin(void *ctx, unsigned source)
{
	printf("list_begin %u\n", source);
	fflush(stdout);
}

static void sink_list_end(void *ctx, unsigned source)
{
	printf("list_end %u\n", source);
	fflush(stdout);
}

static void sink_too_large(void *ctx, unsigned source, const char *ns, const char *name,
                           bool deleted)
{
	printf("too_large %u %s/%s%s\n", source, ns, name, deleted ? " deleted" : "");
	fflush(stdout);
}

static const k8s_sink_t sink = {
	.upsert = sink_upsert,
	.remove = sink_remove,
	.list_begin = sink_list_begin,
	.list_end = sink_list_end,
	.too_large = sink_too_large,
};

/*! Parses one SPEC (modified in place) into \a conf. */
static int spec_parse(char *spec, unsigned source, k8s_reflector_conf_t *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->source = source;
	conf->kind = K8S_KIND_COUNT;
	unsigned paths = 0;
	for (char *save = NULL, *tok = strtok_r(spec, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		char *value = strchr(tok, '=');
		if (value != NULL) {
			*value++ = '\0';
		}
		if (strcmp(tok, "optional") == 0) {
			conf->optional = true;
		} else if (strcmp(tok, "watchlist") == 0) {
			conf->watch_list = true;
		} else if (value == NULL) {
			return KNOT_EINVAL;
		} else if (strcmp(tok, "kind") == 0) {
			for (int k = 0; k < K8S_KIND_COUNT; k++) {
				if (strcmp(value, k8s_kind_name(k)) == 0) {
					conf->kind = k;
				}
			}
		} else if (strcmp(tok, "path") == 0 && paths < 2) {
			conf->paths[paths++] = value;
		} else if (strcmp(tok, "limit") == 0) {
			conf->page_limit = strtoul(value, NULL, 10);
		} else if (strcmp(tok, "stall") == 0) {
			conf->stall_s = strtoul(value, NULL, 10);
		} else if (strcmp(tok, "absent") == 0) {
			conf->absent_retry_s = strtoul(value, NULL, 10);
		} else if (strcmp(tok, "max") == 0) {
			conf->max_object = strtoul(value, NULL, 10);
		} else if (strcmp(tok, "labels") == 0) {
			conf->label_selector = value;
		} else if (strcmp(tok, "fields") == 0) {
			conf->field_selector = value;
		} else {
			return KNOT_EINVAL;
		}
	}
	return (conf->kind < K8S_KIND_COUNT && paths > 0) ? KNOT_EOK : KNOT_EINVAL;
}

static void stats_print(k8s_reflector_t **refl, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		const k8s_reflector_stats_t *st = k8s_reflector_stats(refl[i]);
		printf("stats %zu events=%" PRIu64 " bookmarks=%" PRIu64 " relists=%" PRIu64
		       " watch_restarts=%" PRIu64 " synced=%d absent=%d connected=%d"
		       " watch_lists_refused=%d",
		       i, st->events, st->bookmarks, st->relists,
		       st->watch_restarts, st->synced, st->absent, st->connected,
		       st->watch_lists_refused);
		for (int e = 0; e < K8S_APIERR_COUNT; e++) {
			printf(" %s=%" PRIu64, k8s_apierr_name(e), st->errors[e]);
		}
		printf("\n");
	}
	printf("stats end\n");
	fflush(stdout);
}

/*! Reads what stdin has; returns false on "quit" or end of input. */
static bool commands_read(k8s_reflector_t **refl, size_t count)
{
	static char line[256];
	static size_t len;
	ssize_t n = read(STDIN_FILENO, line + len, sizeof(line) - 1 - len);
	if (n <= 0) {
		return n < 0 && errno == EINTR;
	}
	len += n;
	char *nl;
	while ((nl = memchr(line, '\n', len)) != NULL) {
		*nl = '\0';
		if (strcmp(line, "stats") == 0) {
			stats_print(refl, count);
		} else if (strcmp(line, "quit") == 0) {
			return false;
		}
		len -= nl + 1 - line;
		memmove(line, nl + 1, len);
	}
	if (len == sizeof(line) - 1) {
		len = 0; // A line too long for any command.
	}
	return true;
}

/*! The watcher's loop; returns when stdin says so. */
static void run(CURLM *multi, k8s_reflector_t **refl, size_t count)
{
	uint64_t due[MAX_REFLECTORS] = { 0 };
	while (true) {
		uint64_t now = k8s_now_ms();
		long timeout = 1000;
		for (size_t i = 0; i < count; i++) {
			if (due[i] <= now) {
				long delay = k8s_reflector_tick(refl[i], now);
				due[i] = (delay < 0) ? UINT64_MAX : now + delay;
			}
			if (due[i] != UINT64_MAX && (long)(due[i] - now) < timeout) {
				timeout = (long)(due[i] - now);
			}
		}

		struct curl_waitfd input = { .fd = STDIN_FILENO, .events = CURL_WAIT_POLLIN };
		int ready = 0;
		if (curl_multi_poll(multi, &input, 1, (int)timeout, &ready) != CURLM_OK) {
			return;
		}
		if ((input.revents & CURL_WAIT_POLLIN) && !commands_read(refl, count)) {
			return;
		}

		int running = 0;
		curl_multi_perform(multi, &running);
		CURLMsg *msg;
		int left = 0;
		while ((msg = curl_multi_info_read(multi, &left)) != NULL) {
			if (msg->msg != CURLMSG_DONE) {
				continue;
			}
			// The message dies with the handle's removal in done(): copy it first.
			CURL *easy = msg->easy_handle;
			CURLcode result = msg->data.result;
			k8s_reflector_t *r = NULL;
			curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&r);
			k8s_reflector_done(r, result, k8s_now_ms());
			for (size_t i = 0; i < count; i++) {
				if (refl[i] == r) {
					due[i] = 0;
				}
			}
		}
	}
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc - 2 > MAX_REFLECTORS) {
		fprintf(stderr, "usage: %s KUBECONFIG SPEC...\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	const k8s_log_t log = { .fn = print_log };

	char err[512];
	k8s_apiconf_t conf;
	if (k8s_kubeconfig_load(argv[1], NULL, &conf, err, sizeof(err)) != KNOT_EOK) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	k8s_api_t api;
	CURLM *multi = curl_multi_init();
	if (k8s_api_init(&api, &conf, &log) != KNOT_EOK || multi == NULL) {
		fprintf(stderr, "cannot set up the API client\n");
		return 2;
	}

	k8s_reflector_t *refl[MAX_REFLECTORS] = { NULL };
	size_t count = argc - 2;
	int ret = 0;
	for (size_t i = 0; i < count; i++) {
		k8s_reflector_conf_t rconf;
		if (spec_parse(argv[2 + i], i, &rconf) != KNOT_EOK) {
			fprintf(stderr, "invalid reflector spec %zu\n", i);
			ret = 2;
			break;
		}
		refl[i] = k8s_reflector_new(&rconf, &api, multi, &sink, NULL, &log);
		if (refl[i] == NULL) {
			ret = 2;
			break;
		}
	}
	if (ret == 0) {
		run(multi, refl, count);
	}

	for (size_t i = 0; i < count; i++) {
		k8s_reflector_free(refl[i]);
	}
	curl_multi_cleanup(multi);
	k8s_api_deinit(&api);
	curl_global_cleanup();
	return ret;
}
