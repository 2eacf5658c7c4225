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
 * The knotd glue of the kept names (keeper.h): which resolver a zone's ExternalName
 * targets, autopath's outside names and federation names ride on. With `upstream ADDR`,
 * a forwarder of their own whose server is ADDR; else the live forwarder of the
 * instance's `forward` settings (k8s_forward_kept()), its flights, health and metrics
 * shared with the names it forwards. Zones of equal settings share one handle (one
 * forwarder, one cache), whose lines go through the newest cluster zone that holds it,
 * else the newest zone, as the watcher's do.
 */

#include <pthread.h>
#include <stdlib.h>

#include <knot/module.h>

#include "k8s_glue.h"
#include "lib/sockaddr.h"

/*! \brief Kept names and the zones that hold them. */
struct k8s_kept {
	struct k8s_kept *next;
	k8s_keeper_t *keeper;
	bool own;                        /*!< `upstream`: a forwarder of their own, to \a addr. */
	struct sockaddr_storage addr;
	unsigned timeout_ms;             /*!< Its names' deadline (forward-timeout). */
	k8s_fwd_holder_t *holder;        /*!< Else the instance's forwarder (a reference). */
	k8s_kept_client_t *clients;      /*!< The zones holding it, the newest first. */
	size_t refs;
};

/*! \brief Guards the registry and the zones' lists, which the own forwarder logs through. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static k8s_kept_t *registry;

static void kept_log(void *ctx, int priority, const char *msg)
{
	k8s_kept_t *k = ctx;
	pthread_mutex_lock(&registry_lock);
	// The newest zone that asks to be named (the cluster zone), else the newest: during a
	// reload the old zones are the ones going away.
	k8s_kept_client_t *sink = k->clients;
	for (k8s_kept_client_t *c = k->clients; c != NULL; c = c->next) {
		if (c->log_zone) {
			sink = c;
			break;
		}
	}
	if (sink != NULL) {
		knotd_mod_log(sink->mod, priority, "%s", msg);
	}
	pthread_mutex_unlock(&registry_lock);
}

static bool kept_equal(const k8s_kept_t *k, const struct sockaddr_storage *addr,
                       unsigned timeout_ms, const k8s_fwd_holder_t *holder)
{
	return (addr != NULL) ? k->own && k8s_sockaddr_equal(&k->addr, addr) &&
	                        k->timeout_ms == timeout_ms
	                      : !k->own && k->holder == holder;
}

/*! \brief New kept names (the registry's lock held: their forwarder's first line waits for it). */
static k8s_kept_t *kept_new(const struct sockaddr_storage *addr, unsigned timeout_ms,
                            k8s_fwd_holder_t *holder, k8s_kept_client_t *client)
{
	k8s_kept_t *k = calloc(1, sizeof(*k));
	if (k == NULL) {
		return NULL;
	}
	k->clients = client;
	if (addr != NULL) {
		k->own = true;
		k->addr = *addr;
		k->timeout_ms = timeout_ms;
		k8s_log_t log = { .fn = kept_log, .ctx = k };
		k->keeper = k8s_keeper_new(addr, 1, 0, timeout_ms, "upstream", &log);
	} else {
		k->holder = holder;
		k->keeper = k8s_keeper_new_live(k8s_forward_live, holder);
	}
	if (k->keeper == NULL) {
		free(k);
		return NULL;
	}
	if (holder != NULL) {
		k8s_forward_hold(holder);
	}
	return k;
}

int k8s_kept_acquire(check_ctx_t *check, k8s_ctx_t *ctx)
{
	if (check->mod == NULL) {
		return KNOT_EOK;
	}
	knotd_conf_t upstream = k8s_glue_option(check, K8S_OPT(UPSTREAM));
	const struct sockaddr_storage *addr = (upstream.count > 0) ? &upstream.single.addr : NULL;
	// A name's wait for its upstream, as the forwarder's (the own one's too).
	unsigned timeout_ms = k8s_glue_option(check, K8S_OPT(FORWARD_TIMEOUT)).single.integer;
	k8s_fwd_holder_t *holder = NULL;
	if (addr == NULL) {
		int ret = k8s_forward_kept(check, ctx, &holder);
		if (ret != KNOT_EOK || holder == NULL) {
			return ret;
		}
	}
	k8s_kept_client_t *client = &ctx->kept_client;
	client->mod = check->mod;
	client->log_zone = ctx->answer.role == K8S_ROLE_CLUSTER;
	pthread_mutex_lock(&registry_lock);
	k8s_kept_t *k = registry;
	while (k != NULL && !kept_equal(k, addr, timeout_ms, holder)) {
		k = k->next;
	}
	if (k != NULL) {
		client->next = k->clients;
		k->clients = client;
	} else {
		client->next = NULL;
		k = kept_new(addr, timeout_ms, holder, client);
		if (k != NULL) {
			k->next = registry;
			registry = k;
		}
	}
	if (k != NULL) {
		k->refs++;
	}
	pthread_mutex_unlock(&registry_lock);
	if (k == NULL) {
		// The line of the days when the watcher started them: log lines stay as they were.
		knotd_mod_log(check->mod, LOG_ERR, "failed to start the watcher (cannot start the "
		              "upstream resolver)");
		return KNOT_ENOMEM;
	}
	ctx->kept = k;
	ctx->answer.upstream = k->keeper;
	return KNOT_EOK;
}

void k8s_kept_release(k8s_ctx_t *ctx)
{
	k8s_kept_t *k = ctx->kept;
	if (k == NULL) {
		return;
	}
	ctx->kept = NULL;
	ctx->answer.upstream = NULL;
	pthread_mutex_lock(&registry_lock);
	for (k8s_kept_client_t **c = &k->clients; *c != NULL; c = &(*c)->next) {
		if (*c == &ctx->kept_client) {
			*c = ctx->kept_client.next;
			break;
		}
	}
	bool last = (--k->refs == 0);
	if (last) {
		k8s_kept_t **p = &registry;
		while (*p != k) {
			p = &(*p)->next;
		}
		*p = k->next;
	}
	pthread_mutex_unlock(&registry_lock);
	if (last) {
		// Outside the lock: the own forwarder's thread, joined here, may be logging.
		k8s_keeper_free(k->keeper);
		k8s_forward_release(k->holder, NULL);
		free(k);
	}
}
