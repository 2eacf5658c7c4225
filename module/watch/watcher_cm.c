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
 * The ConfigMaps a watcher reads aside (kube-dns's, the hosts table's key): which one a
 * source names, and their publication on the board (store/configmaps.h) for the glue.
 */

#include <stdio.h>
#include <string.h>

#include "store/configmaps.h"
#include "store/resources.h"
#include "watch/watcher_priv.h"

/*!
 * \brief The namespace and name of an aside source's ConfigMap (the settings checked
 * them: k8s_hosts_check_configmap()); false if the settings name none.
 */
bool watcher_configmap_of(const k8s_watcher_t *w, int src, char ns[64], char name[254])
{
	if (src == K8S_SRC_KUBEDNS_CM) {
		snprintf(ns, 64, "%s", K8S_KUBEDNS_CM_NAMESPACE);
		snprintf(name, 254, "%s", K8S_KUBEDNS_CM_NAME);
		return true;
	}
	// "<namespace>/<name>/<key>"
	const char *value = w->conf.hosts_configmap;
	const char *slash = (value != NULL) ? strchr(value, '/') : NULL;
	const char *key = (slash != NULL) ? strchr(slash + 1, '/') : NULL;
	if (src != K8S_SRC_HOSTS_CM || key == NULL || slash - value >= 64 || key - slash - 1 >= 254) {
		return false;
	}
	snprintf(ns, 64, "%.*s", (int)(slash - value), value);
	snprintf(name, 254, "%.*s", (int)(key - slash - 1), slash + 1);
	return true;
}

/*!
 * \brief Puts the ConfigMaps read aside on the board: after their LIST, then when their
 * content changes (a digest compared per round: a handful of objects). Only this
 * watcher's changes: two watchers of two API servers holding one name do not take
 * turns each round.
 */
void watcher_configmaps_publish(k8s_watcher_t *w)
{
	for (int src = 0; src < K8S_SRC_COUNT; src++) {
		char ns[64], name[254];
		if (!w->cm_held[src] || !watcher_synced(w, src) || !watcher_configmap_of(w, src, ns, name)) {
			continue;
		}
		const k8s_configmap_t *cm =
			(const k8s_configmap_t *)k8s_store_get(w->store, src, ns, name);
		uint64_t digest = k8s_configmaps_digest(cm);
		if (w->cm_published[src] && digest == w->cm_digest[src]) {
			continue;
		}
		w->cm_published[src] = true;
		w->cm_digest[src] = digest;
		if (k8s_configmaps_publish(ns, name, cm)) {
			k8s_logf(&w->log, LOG_INFO, "configmap %s/%s %s", ns, name,
			         (cm != NULL) ? "read" : "absent");
		}
	}
}

void watcher_configmaps_release(k8s_watcher_t *w)
{
	for (int src = 0; src < K8S_SRC_COUNT; src++) {
		char ns[64], name[254];
		if (w->cm_held[src] && watcher_configmap_of(w, src, ns, name)) {
			k8s_configmaps_release(ns, name);
		}
		w->cm_held[src] = false;
	}
}
