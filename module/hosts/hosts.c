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
 * The hosts table (hosts.h): entries gathered by a builder, then laid out at once,
 * names and addresses each in an array indexed by an open-addressing hash of slot
 * numbers, their rdatasets in one block of rdata.
 */

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "hosts/hosts_priv.h"
#include "lib/hash.h"

/*! \brief One entry as gathered: its name in the builder's arena. */
typedef struct {
	uint32_t name_off;
	uint32_t seq;          /*!< Order of addition: the order of an answer's records. */
	uint8_t name_len;      /*!< Wire size, root label included. */
	uint8_t family;
	uint8_t bytes[16];
} ent_t;

struct k8s_hosts_builder {
	const k8s_hosts_conf_t *conf;
	ent_t *ents;
	size_t count, cap;
	uint8_t *arena;
	size_t arena_len, arena_cap;
	k8s_hosts_stats_t stats;
};

typedef struct {
	uint32_t hash;
	const knot_dname_t *name;
	knot_rdataset_t rrs[2];    /*!< A, AAAA. */
} host_name_t;

typedef struct {
	uint32_t hash;
	uint8_t family;
	uint8_t bytes[16];
	knot_rdataset_t ptr;
} host_addr_t;

struct k8s_hosts {
	size_t entries;
	host_name_t *names;
	uint32_t *name_slots;      /*!< Index + 1 into names, 0: empty. */
	size_t name_mask;
	host_addr_t *addrs;
	uint32_t *addr_slots;
	size_t addr_mask;
	uint8_t *data;             /*!< Names and rdata. */
};

static size_t addr_len(int family)
{
	return (family == AF_INET) ? 4 : 16;
}

/* --- the builder ------------------------------------------------------------------- */

k8s_hosts_builder_t *k8s_hosts_builder_new(const k8s_hosts_conf_t *conf)
{
	k8s_hosts_builder_t *b = calloc(1, sizeof(*b));
	if (b != NULL) {
		b->conf = conf;
	}
	return b;
}

void k8s_hosts_builder_free(k8s_hosts_builder_t *b)
{
	if (b != NULL) {
		free(b->ents);
		free(b->arena);
		free(b);
	}
}

bool k8s_hosts_under(const knot_dname_t *name, const knot_dname_t *const *names, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		if (knot_dname_in_bailiwick(name, names[i]) >= 0) {
			return true;
		}
	}
	return false;
}

void k8s_hosts_count_line(k8s_hosts_builder_t *b, bool entry, size_t skipped)
{
	b->stats.lines += entry;
	b->stats.skipped += skipped;
}

k8s_hosts_add_t k8s_hosts_add(k8s_hosts_builder_t *b, const knot_dname_t *name, int family,
                              const uint8_t *bytes)
{
	const k8s_hosts_conf_t *conf = b->conf;
	if (conf->zone_count > 0 && !k8s_hosts_under(name, conf->zones, conf->zone_count)) {
		b->stats.outside++;
		return K8S_HOSTS_OUTSIDE;
	}
	if (b->count >= K8S_HOSTS_ENTRIES_MAX) {
		b->stats.capped++;
		return K8S_HOSTS_FULL;
	}
	size_t size = knot_dname_size(name);
	if (b->count == b->cap) {
		size_t cap = (b->cap > 0) ? 2 * b->cap : 64;
		ent_t *ents = realloc(b->ents, cap * sizeof(*ents));
		if (ents == NULL) {
			return K8S_HOSTS_NOMEM;
		}
		b->ents = ents;
		b->cap = cap;
	}
	if (size > b->arena_cap - b->arena_len) {
		size_t cap = (b->arena_cap > 0) ? 2 * b->arena_cap : 4096;
		uint8_t *arena = realloc(b->arena, cap);
		if (arena == NULL) {
			return K8S_HOSTS_NOMEM;
		}
		b->arena = arena;
		b->arena_cap = cap;
	}
	ent_t *e = &b->ents[b->count];
	memset(e, 0, sizeof(*e));
	e->name_off = (uint32_t)b->arena_len;
	e->name_len = (uint8_t)size;
	e->seq = (uint32_t)b->count;
	e->family = (uint8_t)family;
	memcpy(e->bytes, bytes, addr_len(family));
	memcpy(b->arena + b->arena_len, name, size);
	b->arena_len += size;
	b->count++;
	return K8S_HOSTS_ADDED;
}

/* --- the layout ---------------------------------------------------------------------- */

/*! \brief The arena sorts: qsort() has no context argument. Only the hosts thread builds. */
static __thread const uint8_t *sort_arena;

static int name_cmp(const ent_t *a, const ent_t *b)
{
	if (a->name_len != b->name_len) {
		return (a->name_len < b->name_len) ? -1 : 1;
	}
	return memcmp(sort_arena + a->name_off, sort_arena + b->name_off, a->name_len);
}

static int addr_cmp(const ent_t *a, const ent_t *b)
{
	if (a->family != b->family) {
		return (a->family < b->family) ? -1 : 1;
	}
	return memcmp(a->bytes, b->bytes, addr_len(a->family));
}

static int seq_cmp(const ent_t *a, const ent_t *b)
{
	return (a->seq < b->seq) ? -1 : (a->seq > b->seq);
}

/*! \brief By name, family, address, order: a name's records, each address once. */
static int by_name(const void *x, const void *y)
{
	const ent_t *a = x, *b = y;
	int cmp = name_cmp(a, b);
	cmp = (cmp != 0) ? cmp : addr_cmp(a, b);
	return (cmp != 0) ? cmp : seq_cmp(a, b);
}

/*! \brief By address, name, order: an address's names, each once. */
static int by_addr(const void *x, const void *y)
{
	const ent_t *a = x, *b = y;
	int cmp = addr_cmp(a, b);
	cmp = (cmp != 0) ? cmp : name_cmp(a, b);
	return (cmp != 0) ? cmp : seq_cmp(a, b);
}

/*! \brief qsort() of \a n entries, none given (a NULL array) for fewer than two. */
static void sort(ent_t *ents, size_t n, int (*cmp)(const void *, const void *))
{
	if (n > 1) {
		qsort(ents, n, sizeof(*ents), cmp);
	}
}

static int by_seq(const void *x, const void *y)
{
	return seq_cmp(x, y);
}

/*!
 * \brief Drops repeated keys from a sorted run (the first, in order of addition, stays),
 * then orders it as added; returns the run's new length.
 */
static size_t unique_run(ent_t *run, size_t n, int (*same)(const ent_t *, const ent_t *))
{
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (kept == 0 || same(&run[kept - 1], &run[i]) != 0) {
			run[kept++] = run[i];
		}
	}
	sort(run, kept, by_seq);
	return kept;
}

static bool is_wildcard(const uint8_t *name)
{
	return name[0] == 1 && name[1] == '*';
}

static size_t slots_for(size_t count)
{
	size_t slots = 16;
	while (slots < 2 * count) {
		slots *= 2;
	}
	return slots;
}

static void slot_put(uint32_t *slots, size_t mask, uint32_t hash, uint32_t idx)
{
	size_t i = hash & mask;
	while (slots[i] != 0) {
		i = (i + 1) & mask;
	}
	slots[i] = idx + 1;
}

/*! \brief Writes the rdata of a run's addresses of one family; returns where it ended. */
static uint8_t *put_addrs(knot_rdataset_t *rrs, uint8_t *pos, const ent_t *run, size_t n,
                          int family, size_t *capped)
{
	knot_rdataset_init(rrs);
	rrs->rdata = (knot_rdata_t *)pos;
	for (size_t i = 0; i < n; i++) {
		if (run[i].family != family) {
			continue;
		}
		if (rrs->count >= K8S_HOSTS_PER_NAME_MAX) {
			(*capped)++;
			continue;
		}
		knot_rdata_init((knot_rdata_t *)pos, addr_len(family), run[i].bytes);
		pos += knot_rdata_size(addr_len(family));
		rrs->count++;
	}
	rrs->size = pos - (uint8_t *)rrs->rdata;
	if (rrs->count == 0) {
		rrs->rdata = NULL;
	}
	return pos;
}

void k8s_hosts_free(k8s_hosts_t *h)
{
	if (h != NULL) {
		free(h->names);
		free(h->name_slots);
		free(h->addrs);
		free(h->addr_slots);
		free(h->data);
		free(h);
	}
}

/*! \brief Names: sorts the entries by name, keeps each address once, lays out names and A/AAAA. */
static uint8_t *layout_names(k8s_hosts_t *h, k8s_hosts_builder_t *b, uint8_t *pos)
{
	ent_t *ents = b->ents;
	sort(ents, b->count, by_name);
	size_t n = 0;
	for (size_t i = 0, end; i < b->count; i = end) {
		for (end = i + 1; end < b->count && name_cmp(&ents[i], &ents[end]) == 0; end++);
		size_t kept = unique_run(ents + i, end - i, addr_cmp);
		host_name_t *hn = &h->names[n];
		hn->name = memcpy(pos, b->arena + ents[i].name_off, ents[i].name_len);
		hn->hash = k8s_hash(hn->name, ents[i].name_len);
		pos += ents[i].name_len;
		pos = (uint8_t *)(((uintptr_t)pos + 1) & ~(uintptr_t)1);  // rdata is 2-aligned
		pos = put_addrs(&hn->rrs[0], pos, ents + i, kept, AF_INET, &b->stats.capped);
		pos = put_addrs(&hn->rrs[1], pos, ents + i, kept, AF_INET6, &b->stats.capped);
		slot_put(h->name_slots, h->name_mask, hn->hash, (uint32_t)n);
		n++;
	}
	return pos;
}

/*! \brief Addresses: their names as PTR rdata (no wildcard names), each name once. */
static void layout_addrs(k8s_hosts_t *h, k8s_hosts_builder_t *b, uint8_t *pos, size_t ptr_count)
{
	ent_t *ents = b->ents;
	sort(ents, ptr_count, by_addr);
	size_t n = 0;
	for (size_t i = 0, end; i < ptr_count; i = end) {
		for (end = i + 1; end < ptr_count && addr_cmp(&ents[i], &ents[end]) == 0; end++);
		size_t kept = unique_run(ents + i, end - i, name_cmp);
		host_addr_t *ha = &h->addrs[n];
		ha->family = ents[i].family;
		memcpy(ha->bytes, ents[i].bytes, addr_len(ha->family));
		ha->hash = k8s_hash(ha->bytes, addr_len(ha->family)) ^ ha->family;
		knot_rdataset_init(&ha->ptr);
		ha->ptr.rdata = (knot_rdata_t *)pos;
		for (size_t k = 0; k < kept; k++) {
			if (ha->ptr.count >= K8S_HOSTS_PER_NAME_MAX) {
				b->stats.capped++;
				continue;
			}
			knot_rdata_init((knot_rdata_t *)pos, ents[i + k].name_len,
			                b->arena + ents[i + k].name_off);
			pos += knot_rdata_size(ents[i + k].name_len);
			ha->ptr.count++;
		}
		ha->ptr.size = pos - (uint8_t *)ha->ptr.rdata;
		slot_put(h->addr_slots, h->addr_mask, ha->hash, (uint32_t)n);
		n++;
	}
}

k8s_hosts_t *k8s_hosts_build(k8s_hosts_builder_t *b, k8s_hosts_stats_t *stats)
{
	k8s_hosts_t *h = calloc(1, sizeof(*h));
	if (h == NULL) {
		k8s_hosts_builder_free(b);
		return NULL;
	}
	sort_arena = b->arena;
	ent_t *ents = b->ents;
	size_t count = b->count;

	// Sizes: distinct names and addresses, and bytes at most (before duplicates go).
	sort(ents, count, by_name);
	size_t names = 0, data_size = 0;
	for (size_t i = 0; i < count; i++) {
		names += (i == 0 || name_cmp(&ents[i - 1], &ents[i]) != 0);
		data_size += ents[i].name_len + 1 + knot_rdata_size(16) +  // name, address
		             knot_rdata_size(ents[i].name_len);            // PTR
	}
	// PTR entries: named by no wildcard, unless PTR records are off; first in the array.
	size_t ptr_count = 0;
	for (size_t i = 0; i < count && !b->conf->no_reverse; i++) {
		if (!is_wildcard(b->arena + ents[i].name_off)) {
			ent_t tmp = ents[ptr_count];
			ents[ptr_count++] = ents[i];
			ents[i] = tmp;
		}
	}
	sort(ents, ptr_count, by_addr);
	size_t addrs = 0;
	for (size_t i = 0; i < ptr_count; i++) {
		addrs += (i == 0 || addr_cmp(&ents[i - 1], &ents[i]) != 0);
	}

	h->entries = count;
	h->name_mask = slots_for(names) - 1;
	h->addr_mask = slots_for(addrs) - 1;
	h->names = calloc(names + 1, sizeof(*h->names));
	h->name_slots = calloc(h->name_mask + 1, sizeof(uint32_t));
	h->addrs = calloc(addrs + 1, sizeof(*h->addrs));
	h->addr_slots = calloc(h->addr_mask + 1, sizeof(uint32_t));
	h->data = malloc(data_size + 16);
	if (h->names == NULL || h->name_slots == NULL || h->addrs == NULL ||
	    h->addr_slots == NULL || h->data == NULL) {
		k8s_hosts_free(h);
		k8s_hosts_builder_free(b);
		return NULL;
	}
	// The PTR entries are first: their layout sorts only them, before the names sort all.
	uint8_t *pos = (uint8_t *)(((uintptr_t)h->data + 1) & ~(uintptr_t)1);
	size_t ptr_size = 0;
	for (size_t i = 0; i < ptr_count; i++) {
		ptr_size += knot_rdata_size(ents[i].name_len);
	}
	layout_addrs(h, b, pos, ptr_count);
	pos += ptr_size;
	layout_names(h, b, pos);

	b->stats.entries = count;
	if (stats != NULL) {
		*stats = b->stats;
	}
	k8s_hosts_builder_free(b);
	return h;
}

/* --- readers ------------------------------------------------------------------------- */

static const host_name_t *find_name(const k8s_hosts_t *h, const uint8_t *name, size_t size)
{
	uint32_t hash = k8s_hash(name, size);
	for (size_t i = hash & h->name_mask; h->name_slots[i] != 0; i = (i + 1) & h->name_mask) {
		const host_name_t *hn = &h->names[h->name_slots[i] - 1];
		if (hn->hash == hash && knot_dname_size(hn->name) == size &&
		    memcmp(hn->name, name, size) == 0) {
			return hn;
		}
	}
	return NULL;
}

const knot_rdataset_t *k8s_hosts_addrs(const k8s_hosts_t *h, const knot_dname_t *name, int family)
{
	int idx = (family == AF_INET) ? 0 : 1;
	size_t size = knot_dname_size(name);
	const host_name_t *hn = find_name(h, name, size);
	if (hn != NULL) {
		return (hn->rrs[idx].count > 0) ? &hn->rrs[idx] : NULL;
	}
	// "*.<parent>": one label more than a name of at least one label (not the root's).
	const uint8_t *parent = name + 1 + name[0];
	if (name[0] == 0 || parent[0] == 0) {
		return NULL;
	}
	uint8_t wild[KNOT_DNAME_MAXLEN + 2] = { 1, '*' };
	size_t parent_size = size - 1 - name[0];
	if (2 + parent_size > KNOT_DNAME_MAXLEN) {
		return NULL;
	}
	memcpy(wild + 2, parent, parent_size);
	hn = find_name(h, wild, 2 + parent_size);
	return (hn != NULL && hn->rrs[idx].count > 0) ? &hn->rrs[idx] : NULL;
}

const knot_rdataset_t *k8s_hosts_names(const k8s_hosts_t *h, int family, const uint8_t *bytes)
{
	size_t len = addr_len(family);
	uint32_t hash = k8s_hash(bytes, len) ^ (uint32_t)family;
	for (size_t i = hash & h->addr_mask; h->addr_slots[i] != 0; i = (i + 1) & h->addr_mask) {
		const host_addr_t *ha = &h->addrs[h->addr_slots[i] - 1];
		if (ha->hash == hash && ha->family == family && memcmp(ha->bytes, bytes, len) == 0) {
			return &ha->ptr;
		}
	}
	return NULL;
}

size_t k8s_hosts_count(const k8s_hosts_t *h)
{
	return h->entries;
}
