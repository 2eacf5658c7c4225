/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief The ConfigMaps the watchers read, published for the threads that use them.
 *
 * A process-wide board, keyed by namespace and name: a watcher that reads a
 * ConfigMap (an aside source of resources.h) holds its entry while it watches it
 * and publishes what it holds after each complete LIST and each change; the
 * glue's threads (the kube-dns ConfigMap's, the hosts table's) copy a key's value
 * out of it, about once a second. Neither side waits for the other but for a
 * mutex held while a value is copied; no knotd worker reads it.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kinds/objects.h"

/*! \brief What the board says of one ConfigMap. */
typedef struct {
	/*! Changes with every publication of this ConfigMap (process-wide, never 0 once
	 *  published); 0: no watcher has listed it (none reads it, or the API forbids it). */
	uint64_t gen;
	bool present;        /*!< It exists (else the LIST found none). */
} k8s_cmstate_t;

/*! \brief A watcher starts reading the ConfigMap \a ns / \a name. \retval KNOT_EOK, KNOT_ENOMEM */
int k8s_configmaps_hold(const char *ns, const char *name);

/*! \brief ...and stops: the entry goes with its last holder. */
void k8s_configmaps_release(const char *ns, const char *name);

/*! \brief What tells a ConfigMap's content (its keys and values); 0 for NULL. */
uint64_t k8s_configmaps_digest(const k8s_configmap_t *cm);

/*!
 * \brief Publishes the ConfigMap \a ns / \a name as listed: \a cm, or NULL when it does
 * not exist. Only while held. The same content again (another watcher holding it too)
 * changes nothing.
 * \return Whether the board's copy changed (a new publication).
 */
bool k8s_configmaps_publish(const char *ns, const char *name, const k8s_configmap_t *cm);

/*!
 * \brief Reads the state of a ConfigMap and copies the values of \a count keys.
 *
 * \param values  Out: each key's value (malloc, NUL-terminated), NULL when absent;
 *                the caller frees them.
 * \param lens    Out (or NULL): each value's length.
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (no value is set)
 */
int k8s_configmaps_read(const char *ns, const char *name, const char *const *keys, size_t count,
                        k8s_cmstate_t *state, char **values, size_t *lens);

/*! \brief The state of a ConfigMap only: what a poll compares before it copies. */
k8s_cmstate_t k8s_configmaps_state(const char *ns, const char *name);
