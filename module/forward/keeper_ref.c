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
 * The kept names' handles (keeper.h): a forwarder of their own (`upstream ADDR`), or
 * the live forwarder of the instance's `forward` settings, reached under RCU.
 */

#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-memb.h>

#include "forward/keeper_priv.h"

/*! \brief The own forwarder's settings besides its server and deadline. */
/* Two entries (A, AAAA) for each of the 4096 names kept, in twice the slots: a
 * two-way table full to the brim would evict on most of its puts. */
#define OWN_CACHE_SIZE   16384
#define OWN_CACHE_TTL    3600
#define OWN_PENDING      256

struct k8s_keeper {
	k8s_fwd_t *own;           /*!< A forwarder of its own, or NULL. */
	k8s_keeper_live_t live;   /*!< Else the live one. */
	void *ctx;
};

k8s_keeper_t *k8s_keeper_new(const struct sockaddr_storage *servers, size_t count,
                             uint16_t opt_code, unsigned timeout_ms, const char *owner,
                             const k8s_log_t *log)
{
	if (count == 0 || count > K8S_FWD_SERVERS_MAX) {
		return NULL;
	}
	k8s_keeper_t *k = calloc(1, sizeof(*k));
	if (k == NULL) {
		return NULL;
	}
	struct sockaddr_storage addrs[K8S_FWD_SERVERS_MAX];
	memcpy(addrs, servers, count * sizeof(*servers));
	k8s_fwd_group_t group = { .zone = NULL, .servers = addrs, .count = count };
	k8s_fwd_conf_t conf = {
		.groups = &group,
		.group_count = 1,
		.timeout_ms = (timeout_ms > 0) ? timeout_ms : 1,
		.cache_max_ttl = OWN_CACHE_TTL,
		.cache_size = OWN_CACHE_SIZE,
		.max_pending = OWN_PENDING,
		.opt_code = opt_code,
	};
	k8s_log_t none = { 0 };
	k->own = k8s_fwd_new(&conf, owner, (log != NULL) ? log : &none, NULL, NULL,
	                     &k8s_keeper_layer);
	if (k->own == NULL) {
		free(k);
		return NULL;
	}
	return k;
}

k8s_keeper_t *k8s_keeper_new_live(k8s_keeper_live_t live, void *ctx)
{
	k8s_keeper_t *k = calloc(1, sizeof(*k));
	if (k != NULL) {
		k->live = live;
		k->ctx = ctx;
	}
	return k;
}

void k8s_keeper_free(k8s_keeper_t *k)
{
	if (k == NULL) {
		return;
	}
	k8s_fwd_free(k->own);
	free(k);
}

/*! \brief The forwarder's kept names (inside an RCU read-side section), or NULL. */
static keeper_t *keeper_of(const k8s_keeper_t *k)
{
	k8s_fwd_t *f = (k->own != NULL) ? k->own : k->live(k->ctx);
	return (f != NULL) ? k8s_fwd_layer_state(f) : NULL;
}

bool k8s_keeper_ask_source(const k8s_keeper_t *k, const knot_dname_t *name,
                           const uint8_t *source, k8s_tenant_t tenant)
{
	urcu_memb_read_lock();
	keeper_t *kp = keeper_of(k);
	bool ok = (kp != NULL) && keeper_ask(kp, name, source, tenant);
	urcu_memb_read_unlock();
	return ok;
}

bool k8s_keeper_ask(const k8s_keeper_t *k, const knot_dname_t *name, k8s_tenant_t tenant)
{
	return k8s_keeper_ask_source(k, name, NULL, tenant);
}

k8s_upstream_status_t k8s_keeper_lookup_source(const k8s_keeper_t *k, const knot_dname_t *name,
                                               uint16_t qtype, const uint8_t *source,
                                               const k8s_fwd_entry_t **ans)
{
	keeper_t *kp = keeper_of(k);
	return (kp != NULL) ? keeper_lookup(kp, name, qtype, source, ans) : K8S_UPSTREAM_PENDING;
}

k8s_upstream_status_t k8s_keeper_lookup(const k8s_keeper_t *k, const knot_dname_t *name,
                                        uint16_t qtype, const k8s_fwd_entry_t **ans)
{
	return k8s_keeper_lookup_source(k, name, qtype, NULL, ans);
}

void k8s_keeper_set_max_asked(k8s_keeper_t *k, size_t max)
{
	urcu_memb_read_lock();
	keeper_t *kp = keeper_of(k);
	if (kp != NULL) {
		keeper_set_max_asked(kp, max);
	}
	urcu_memb_read_unlock();
}
