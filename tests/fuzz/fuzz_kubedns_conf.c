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
 * kube-dns's ConfigMap files as module/forward/kubedns_conf.c reads them: whatever an operator
 * (or anyone who may edit the ConfigMap) writes into `upstreamNameservers` or
 * `stubDomains`, then merged into forward settings as the watch thread merges them.
 *
 * Input: one byte (bit 0: stubDomains, else upstreamNameservers), then the file's text.
 * What must hold: a parse either fails with a reason or gives at most 3 upstreams and
 * at most 16 stub domains, each with a lowercase non-root zone and 1 to 16 addresses of
 * a family with a port; a merge either fails or stays within the forwarder's caps.
 */

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/libknot.h>

#include "forward/kubedns_conf.h"
#include "forward/servers.h"
#include "fz_check.h"

static void check_group(const k8s_fwd_group_t *g, size_t max)
{
	CHECK(g->count <= max);
	for (size_t i = 0; i < g->count; i++) {
		const struct sockaddr_storage *ss = &g->servers[i];
		CHECK(ss->ss_family == AF_INET || ss->ss_family == AF_INET6);
		uint16_t port = (ss->ss_family == AF_INET) ? ((const struct sockaddr_in *)ss)->sin_port
		                                           : ((const struct sockaddr_in6 *)ss)->sin6_port;
		CHECK(port != 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1) {
		return 0;
	}
	bool stubs = data[0] & 1;
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	char msg[384] = "";
	k8s_kubedns_t cm = { 0 };
	int ret = k8s_kubedns_parse(&cm, stubs ? K8S_KUBEDNS_STUBS : K8S_KUBEDNS_UPSTREAMS, text, len,
	                            msg, sizeof(msg));
	if (ret != KNOT_EOK) {
		CHECK(msg[0] != '\0');
		k8s_kubedns_deinit(&cm);
		return 0;
	}
	if (cm.has_upstreams) {
		CHECK(cm.upstreams.count > 0);
		check_group(&cm.upstreams, K8S_KUBEDNS_UPSTREAMS_MAX);
	}
	CHECK(cm.stub_count <= K8S_FWD_GROUPS_MAX);
	for (size_t i = 0; i < cm.stub_count; i++) {
		const k8s_fwd_group_t *g = &cm.stubs[i];
		CHECK(g->zone != NULL && g->zone[0] != 0 && g->count > 0);
		knot_dname_storage_t lower;
		knot_dname_copy_lower(lower, g->zone);
		CHECK(knot_dname_is_equal(lower, g->zone));
		check_group(g, K8S_FWD_SERVERS_MAX);
	}

	// Merged into options with one default server and one stub domain.
	struct sockaddr_storage def, stub;
	CHECK(k8s_fwd_addr_parse("192.0.2.53", &def) == KNOT_EOK);
	CHECK(k8s_fwd_addr_parse("192.0.2.54@5300", &stub) == KNOT_EOK);
	k8s_fwd_group_t groups[2] = {
		{ .servers = &def, .count = 1 },
		{ .zone = (knot_dname_t *)"\x04""corp", .servers = &stub, .count = 1 },
	};
	k8s_fwd_conf_t base = { .groups = groups, .group_count = 2, .max_pending = 1 };
	k8s_fwd_conf_t out;
	if (k8s_kubedns_merge(&base, &cm, &out, msg, sizeof(msg)) == KNOT_EOK) {
		CHECK(out.group_count >= 1 && out.group_count <= 1 + K8S_FWD_GROUPS_MAX);
		CHECK(out.groups[0].zone == NULL && out.groups[0].count > 0);
		size_t total = 0;
		for (size_t i = 0; i < out.group_count; i++) {
			CHECK(i == 0 || out.groups[i].zone != NULL);
			total += out.groups[i].count;
		}
		CHECK(total <= K8S_FWD_SERVERS_MAX);
		k8s_fwd_conf_deinit(&out);
	} else {
		CHECK(out.groups == NULL);
	}
	k8s_kubedns_deinit(&cm);
	return 0;
}
