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
 * The ConfigMap board (configmaps.h): a short list of entries under one mutex, each the
 * last published copy of one ConfigMap's data. A few ConfigMaps, read once a second by
 * a thread or two: a list and a lock are all it needs.
 */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "store/configmaps.h"

typedef struct entry {
	struct entry *next;
	char *ns;
	char *name;
	unsigned holders;
	k8s_cmstate_t state;
	uint64_t digest;      /*!< Of the ConfigMap copied (k8s_object_digest_of()). */
	bool whole;           /*!< The last publication was copied whole (not out of memory). */
	size_t count;         /*!< Keys of the copy. */
	char **keys;
	char **values;
	size_t *lens;
} entry_t;

static pthread_mutex_t board_lock = PTHREAD_MUTEX_INITIALIZER;
static entry_t *board;
static uint64_t board_gen;

static entry_t *find(const char *ns, const char *name)
{
	for (entry_t *e = board; e != NULL; e = e->next) {
		if (strcmp(e->ns, ns) == 0 && strcmp(e->name, name) == 0) {
			return e;
		}
	}
	return NULL;
}

static void data_free(entry_t *e)
{
	for (size_t i = 0; i < e->count; i++) {
		free(e->keys[i]);
		free(e->values[i]);
	}
	free(e->keys);
	free(e->values);
	free(e->lens);
	e->keys = e->values = NULL;
	e->lens = NULL;
	e->count = 0;
}

int k8s_configmaps_hold(const char *ns, const char *name)
{
	pthread_mutex_lock(&board_lock);
	entry_t *e = find(ns, name);
	if (e == NULL) {
		e = calloc(1, sizeof(*e));
		if (e == NULL || (e->ns = strdup(ns)) == NULL || (e->name = strdup(name)) == NULL) {
			if (e != NULL) {
				free(e->ns);
			}
			free(e);
			pthread_mutex_unlock(&board_lock);
			return KNOT_ENOMEM;
		}
		e->next = board;
		board = e;
	}
	e->holders++;
	pthread_mutex_unlock(&board_lock);
	return KNOT_EOK;
}

void k8s_configmaps_release(const char *ns, const char *name)
{
	pthread_mutex_lock(&board_lock);
	for (entry_t **p = &board; *p != NULL; p = &(*p)->next) {
		entry_t *e = *p;
		if (strcmp(e->ns, ns) != 0 || strcmp(e->name, name) != 0) {
			continue;
		}
		if (--e->holders == 0) {
			*p = e->next;
			data_free(e);
			free(e->ns);
			free(e->name);
			free(e);
		}
		break;
	}
	pthread_mutex_unlock(&board_lock);
}

/*! \brief A copy of \a cm's keys and values into \a e (whose old copy is freed first). */
static int copy_data(entry_t *e, const k8s_configmap_t *cm)
{
	data_free(e);
	size_t count = (cm != NULL) ? cm->count : 0;
	if (count == 0) {
		return KNOT_EOK;
	}
	e->keys = calloc(count, sizeof(char *));
	e->values = calloc(count, sizeof(char *));
	e->lens = calloc(count, sizeof(size_t));
	if (e->keys == NULL || e->values == NULL || e->lens == NULL) {
		data_free(e);
		return KNOT_ENOMEM;
	}
	for (size_t i = 0; i < count; i++) {
		e->count = i + 1;
		e->keys[i] = strdup(cm->data[i].key);
		e->values[i] = malloc(cm->data[i].len + 1);
		if (e->keys[i] == NULL || e->values[i] == NULL) {
			data_free(e);
			return KNOT_ENOMEM;
		}
		memcpy(e->values[i], cm->data[i].value, cm->data[i].len + 1);
		e->lens[i] = cm->data[i].len;
	}
	return KNOT_EOK;
}

uint64_t k8s_configmaps_digest(const k8s_configmap_t *cm)
{
	return (cm != NULL) ? k8s_object_digest_of((k8s_object_t *)&cm->meta) : 0;
}

bool k8s_configmaps_publish(const char *ns, const char *name, const k8s_configmap_t *cm)
{
	uint64_t digest = k8s_configmaps_digest(cm);
	bool changed = false;
	pthread_mutex_lock(&board_lock);
	entry_t *e = find(ns, name);
	if (e != NULL && (e->state.gen == 0 || !e->whole || e->state.present != (cm != NULL) ||
	                  e->digest != digest)) {
		// Out of memory: published as absent, which its readers survive; the next
		// publication copies it again.
		e->whole = copy_data(e, cm) == KNOT_EOK;
		e->state.present = cm != NULL && e->whole;
		e->state.gen = ++board_gen;
		e->digest = digest;
		changed = true;
	}
	pthread_mutex_unlock(&board_lock);
	return changed;
}

k8s_cmstate_t k8s_configmaps_state(const char *ns, const char *name)
{
	pthread_mutex_lock(&board_lock);
	entry_t *e = find(ns, name);
	k8s_cmstate_t state = (e != NULL) ? e->state : (k8s_cmstate_t){ 0 };
	pthread_mutex_unlock(&board_lock);
	return state;
}

int k8s_configmaps_read(const char *ns, const char *name, const char *const *keys, size_t count,
                        k8s_cmstate_t *state, char **values, size_t *lens)
{
	memset(values, 0, count * sizeof(*values));
	pthread_mutex_lock(&board_lock);
	entry_t *e = find(ns, name);
	*state = (e != NULL) ? e->state : (k8s_cmstate_t){ 0 };
	int ret = KNOT_EOK;
	for (size_t k = 0; e != NULL && k < count && ret == KNOT_EOK; k++) {
		for (size_t i = 0; i < e->count; i++) {
			if (strcmp(e->keys[i], keys[k]) != 0) {
				continue;
			}
			values[k] = malloc(e->lens[i] + 1);
			if (values[k] == NULL) {
				ret = KNOT_ENOMEM;
				break;
			}
			memcpy(values[k], e->values[i], e->lens[i] + 1);
			if (lens != NULL) {
				lens[k] = e->lens[i];
			}
			break;
		}
	}
	pthread_mutex_unlock(&board_lock);
	if (ret != KNOT_EOK) {
		for (size_t k = 0; k < count; k++) {
			free(values[k]);
			values[k] = NULL;
		}
	}
	return ret;
}
