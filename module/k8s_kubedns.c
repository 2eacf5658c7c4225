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
 * kube-dns's ConfigMap read through the API (k8s_kubedns.h): the ConfigMap board's copy
 * of kube-system/kube-dns, which a watcher with kube-dns-config keeps, parsed by the
 * parser of the mounted files.
 */

#include <stdlib.h>
#include <string.h>

#include "k8s_kubedns.h"
#include "store/configmaps.h"
#include "store/resources.h"

int k8s_kubedns_api(k8s_kubedns_t *cm, uint64_t *gen, char *msg, size_t msglen)
{
	static const char *const keys[K8S_KUBEDNS_FILES] = {
		[K8S_KUBEDNS_UPSTREAMS] = "upstreamNameservers", [K8S_KUBEDNS_STUBS] = "stubDomains"
	};
	char *values[K8S_KUBEDNS_FILES];
	size_t lens[K8S_KUBEDNS_FILES];
	k8s_cmstate_t st;
	*gen = 0;
	int ret = k8s_configmaps_read(K8S_KUBEDNS_CM_NAMESPACE, K8S_KUBEDNS_CM_NAME, keys,
	                              K8S_KUBEDNS_FILES, &st, values, lens);
	if (ret != KNOT_EOK) {
		return ret;
	}
	if (st.gen == 0 || !st.present) {
		for (size_t i = 0; i < K8S_KUBEDNS_FILES; i++) {
			free(values[i]);
		}
		return KNOT_EOK;
	}
	*gen = st.gen;
	memset(cm, 0, sizeof(*cm));
	for (size_t i = 0; i < K8S_KUBEDNS_FILES; i++) {
		if (values[i] != NULL && ret == KNOT_EOK) {
			ret = k8s_kubedns_parse(cm, (k8s_kubedns_file_t)i, values[i], lens[i], msg, msglen);
		}
		free(values[i]);
	}
	if (ret != KNOT_EOK) {
		k8s_kubedns_deinit(cm);
	}
	return ret;
}

bool k8s_kubedns_changed(const char *dir, uint64_t api_gen, const k8s_kubedns_stamp_t *stamp)
{
	k8s_cmstate_t st = k8s_configmaps_state(K8S_KUBEDNS_CM_NAMESPACE, K8S_KUBEDNS_CM_NAME);
	if (st.gen != 0 && st.present) {
		return st.gen != api_gen;
	}
	if (st.gen == 0 && api_gen != 0) {
		return false;
	}
	k8s_kubedns_stamp_t now;
	k8s_kubedns_stamp(dir, &now);
	return api_gen != 0 || !k8s_kubedns_stamp_equal(&now, stamp);
}
