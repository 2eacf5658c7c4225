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
 * mod-k8s: answers for a Kubernetes cluster's DNS zones from a record table
 * that a background watcher keeps in sync with the Kubernetes API.
 * This file is the knotd glue only: configuration, load/unload, hooks, stats.
 */

#include <knot/module.h>

#define MOD_TTL		"\x03""ttl"

static const yp_item_t k8s_conf[] = {
	{ MOD_TTL, YP_TINT, YP_VINT = { 0, 3600, 5, YP_STIME } },
	{ NULL }
};

static knotd_in_state_t k8s_answer_hook(knotd_in_state_t state, knot_pkt_t *pkt,
                                        knotd_qdata_t *qdata, knotd_mod_t *mod)
{
	if (state != KNOTD_IN_STATE_MISS) {
		return state;
	}

	// Nothing is synced yet.
	qdata->rcode = KNOT_RCODE_SERVFAIL;
	qdata->rcode_ede = KNOT_EDNS_EDE_NOT_READY;
	return KNOTD_IN_STATE_ERROR;
}

static int k8s_load(knotd_mod_t *mod)
{
	return knotd_mod_in_hook(mod, KNOTD_STAGE_ANSWER, k8s_answer_hook);
}

static void k8s_unload(knotd_mod_t *mod)
{
}

KNOTD_MOD_API(k8s, KNOTD_MOD_FLAG_SCOPE_ZONE | KNOTD_MOD_FLAG_OPT_CONF,
              k8s_load, k8s_unload, k8s_conf, NULL);
