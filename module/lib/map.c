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

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "lib/bulk.h"
#include "lib/hash.h"
#include "lib/map.h"

static char tombstone;
#define TOMB (&tombstone)

static uint32_t hash_str(const char *key)
{
	return k8s_hash(key, strlen(key));
}

static k8s_map_slot_t *find(const k8s_map_t *map, const char *key)
{
	if (map->cap == 0) {
		return NULL;
	}
	size_t pos = hash_str(key) & (map->cap - 1);
	while (map->slots[pos].key != NULL) {
		if (map->slots[pos].key != TOMB && strcmp(map->slots[pos].key, key) == 0) {
			return &map->slots[pos];
		}
		pos = (pos + 1) & (map->cap - 1);
	}
	return NULL;
}

void *k8s_map_get(const k8s_map_t *map, const char *key)
{
	k8s_map_slot_t *slot = find(map, key);
	return (slot != NULL) ? slot->value : NULL;
}

static int resize(k8s_map_t *map, size_t cap)
{
	k8s_map_slot_t *slots = (cap <= SIZE_MAX / sizeof(*slots))
	                        ? k8s_bulk_calloc(cap * sizeof(*slots)) : NULL;
	if (slots == NULL) {
		return KNOT_ENOMEM;
	}
	for (size_t i = 0; i < map->cap; i++) {
		k8s_map_slot_t *old = &map->slots[i];
		if (old->key == NULL || old->key == TOMB) {
			continue;
		}
		size_t pos = hash_str(old->key) & (cap - 1);
		while (slots[pos].key != NULL) {
			pos = (pos + 1) & (cap - 1);
		}
		slots[pos] = *old;
	}
	k8s_bulk_free(map->slots);
	map->slots = slots;
	map->cap = cap;
	map->used = map->count;
	return KNOT_EOK;
}

int k8s_map_set(k8s_map_t *map, const char *key, void *value)
{
	k8s_map_slot_t *slot = find(map, key);
	if (slot != NULL) {
		slot->value = value;
		return KNOT_EOK;
	}

	if (4 * (map->used + 1) > 3 * map->cap) {
		size_t cap = (map->cap > 0) ? map->cap : 16;
		while (cap < 2 * (map->count + 1)) {
			cap *= 2;
		}
		int ret = resize(map, cap);
		if (ret != KNOT_EOK) {
			return ret;
		}
	}

	char *copy = k8s_bulk_strdup(key);
	if (copy == NULL) {
		return KNOT_ENOMEM;
	}
	size_t pos = hash_str(key) & (map->cap - 1);
	while (map->slots[pos].key != NULL && map->slots[pos].key != TOMB) {
		pos = (pos + 1) & (map->cap - 1);
	}
	if (map->slots[pos].key == NULL) {
		map->used++;
	}
	map->slots[pos].key = copy;
	map->slots[pos].value = value;
	map->count++;
	return KNOT_EOK;
}

void *k8s_map_del(k8s_map_t *map, const char *key)
{
	k8s_map_slot_t *slot = find(map, key);
	if (slot == NULL) {
		return NULL;
	}
	void *value = slot->value;
	k8s_bulk_free(slot->key);
	slot->key = TOMB;
	slot->value = NULL;
	map->count--;
	return value;
}

const k8s_map_slot_t *k8s_map_next(const k8s_map_t *map, size_t *pos)
{
	while (*pos < map->cap) {
		const k8s_map_slot_t *slot = &map->slots[(*pos)++];
		if (slot->key != NULL && slot->key != TOMB) {
			return slot;
		}
	}
	return NULL;
}

void k8s_map_clear(k8s_map_t *map)
{
	for (size_t i = 0; i < map->cap; i++) {
		if (map->slots[i].key != TOMB) {
			k8s_bulk_free(map->slots[i].key);
		}
	}
	k8s_bulk_free(map->slots);
	memset(map, 0, sizeof(*map));
}
