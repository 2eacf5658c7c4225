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
 * The K8S-DNS role's hostile inputs (module/federation/fedstub.c): a programming request's
 * body, the persisted file, and a federation-nameservers value.
 *
 * Input: one selector byte (0: body, 1: file, 2: static value; modulo 3), then
 * the text. What must hold: a success is within the caps, every name a lowercase
 * label, every address IPv4 or IPv6 with a port; a read file writes back to text
 * that reads to the same set; a failure says why (a NUL-terminated reason).
 */

#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "lib/dnsname.h"
#include "federation/fedstub.h"
#include "fz_check.h"

static void check_fed(const k8s_fedstub_t *fed, bool named)
{
	CHECK(fed->count >= 1 && fed->count <= K8S_FEDSTUB_MAX_NS);
	if (named) {
		CHECK(fed->name[0] >= 1 && fed->name[0] <= 63);
		CHECK(k8s_dns_label_valid((const char *)fed->name + 1, fed->name[0], false));
	}
	for (size_t i = 0; i < fed->count; i++) {
		const struct sockaddr_storage *a = &fed->ns[i];
		CHECK(a->ss_family == AF_INET || a->ss_family == AF_INET6);
		in_port_t port = (a->ss_family == AF_INET) ? ((const struct sockaddr_in *)a)->sin_port
		                                           : ((const struct sockaddr_in6 *)a)->sin6_port;
		CHECK(port != 0);
	}
}

static void check_reason(const char *err, size_t len)
{
	CHECK(memchr(err, '\0', len) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1) {
		return 0;
	}
	unsigned which = data[0] % 3;
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	char err[256];
	memset(err, 'x', sizeof(err));

	if (which == 0) {
		k8s_fedstub_t fed = { 0 };
		int ret = k8s_fedstub_body(text, len, &fed, err, sizeof(err));
		if (ret == KNOT_EOK) {
			check_fed(&fed, false);
		} else {
			check_reason(err, sizeof(err));
		}
	} else if (which == 1) {
		k8s_fedstub_set_t *set = NULL;
		int ret = k8s_fedstub_file_parse(text, len, &set, err, sizeof(err));
		if (ret != KNOT_EOK) {
			CHECK(set == NULL);
			check_reason(err, sizeof(err));
			return 0;
		}
		CHECK(set->count <= K8S_FEDSTUB_MAX_FEDS);
		for (size_t i = 0; i < set->count; i++) {
			check_fed(&set->feds[i], true);
			CHECK(k8s_fedstub_find(set, set->feds[i].name) == &set->feds[i]);
		}
		char *written = k8s_fedstub_file_format(set);
		CHECK(written != NULL);
		k8s_fedstub_set_t *again = NULL;
		CHECK(k8s_fedstub_file_parse(written, strlen(written), &again, err, sizeof(err)) == KNOT_EOK);
		CHECK(again->count == set->count);
		for (size_t i = 0; i < set->count; i++) {
			const k8s_fedstub_t *f = k8s_fedstub_find(again, set->feds[i].name);
			CHECK(f != NULL && f->count == set->feds[i].count);
			CHECK(memcmp(f->ns, set->feds[i].ns, f->count * sizeof(f->ns[0])) == 0);
		}
		free(again);
		free(written);
		free(set);
	} else {
		char *copy = strndup(text, len);
		CHECK(copy != NULL);
		k8s_fedstub_t fed;
		if (k8s_fedstub_static(copy, &fed, err, sizeof(err)) == KNOT_EOK) {
			check_fed(&fed, true);
		} else {
			check_reason(err, sizeof(err));
		}
		free(copy);
	}
	return 0;
}
