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
 * The names queries ask for (k8s_upstream_ask()): the workers' lock-free hand-over
 * slots and lookups, and on the resolver's side the asked names kept, their eviction
 * order (probation, then the kept clock) and their rest when no query looks them up.
 */

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libknot/errcode.h>

#include "lib/hash.h"
#include "upstream/upstream_priv.h"

/*! \brief The name as text without the final dot, for logs and as the map key. */
const char *upstream_name_text(const knot_dname_t *name, knot_dname_txt_storage_t buf)
{
	if (knot_dname_to_str(buf, name, sizeof(knot_dname_txt_storage_t)) == NULL) {
		return "?";
	}
	size_t len = strlen(buf);
	if (len > 1 && buf[len - 1] == '.') {
		buf[len - 1] = '\0';
	}
	return buf;
}

const char *upstream_key_text(const knot_dname_t *name, const uint8_t *source, key_text_t buf)
{
	upstream_name_text(name, buf);
	size_t len = strlen(buf);
	if (source != NULL && source[0] != 0) {
		buf[len] = ' ';
		memcpy(buf + len + 1, source + 1, source[0]);
		buf[len + 1 + source[0]] = '\0';
	}
	return buf;
}

/*! \brief Takes the readers' mark on a job's entry (looked up since it was published). */
void upstream_job_harvest(job_t *job)
{
	k8s_upstream_entry_t *e = job->entry;
	// Read first: a write only where a reader wrote, so that readers keep the line shared.
	if (e != NULL && atomic_load_explicit(&e->used, memory_order_relaxed) &&
	    atomic_exchange_explicit(&e->used, false, memory_order_relaxed)) {
		job->looked = true;
		job->target->referenced = true;
	}
}

/*! \brief A new target for a lowercase name (and a source label, or NULL), in no map yet. */
target_t *upstream_target_new(const knot_dname_t *lower, const uint8_t *source)
{
	target_t *t = calloc(1, sizeof(*t) + knot_dname_size(lower));
	if (t == NULL) {
		return NULL;
	}
	memcpy(t->name, lower, knot_dname_size(lower));
	if (source != NULL && source[0] != 0) {
		memcpy(t->source, source, 1 + source[0]);
	}
	for (int i = 0; i < 2; i++) {
		t->jobs[i].target = t;
		t->jobs[i].qtype = (i == 0) ? KNOT_RRTYPE_A : KNOT_RRTYPE_AAAA;
		t->jobs[i].timer.pos = K8S_TIMER_IDLE;
	}
	return t;
}

/*! \brief Hash of a cache key: the name, the type and the source (a label, or NULL). */
uint32_t upstream_key_hash(const knot_dname_t *name, uint16_t qtype, const uint8_t *source)
{
	uint8_t key[2 + KNOT_DNAME_MAXLEN + 64] = { qtype & 0xff, qtype >> 8 };
	size_t size = knot_dname_size(name);
	memcpy(key + 2, name, size);
	size += 2;
	if (source != NULL && source[0] != 0) {
		memcpy(key + size, source, 1 + source[0]);
		size += 1 + source[0];
	}
	return k8s_hash(key, size);
}

/*! \brief True if an entry's source is \a source (NULL and the empty label are none). */
static bool source_equal(const uint8_t *a, const uint8_t *b)
{
	size_t alen = (a != NULL) ? a[0] : 0, blen = (b != NULL) ? b[0] : 0;
	return alen == blen && (alen == 0 || memcmp(a + 1, b + 1, alen) == 0);
}

/*! \brief Takes the names queries asked for out of their slots. */
size_t upstream_asks_take(k8s_upstream_t *u, knot_dname_storage_t names[ASK_SLOTS],
                        uint8_t sources[ASK_SLOTS][64])
{
	size_t count = 0;
	for (size_t i = 0; i < ASK_SLOTS; i++) {
		ask_t *a = &u->asks[i];
		if (atomic_load_explicit(&a->state, memory_order_acquire) == ASK_READY) {
			memcpy(sources[count], a->source, 1 + a->source[0]);
			memcpy(names[count++], a->name, knot_dname_size(a->name));
			atomic_store_explicit(&a->state, ASK_FREE, memory_order_release);
		}
	}
	return count;
}

/* Asked names: probation (asked once, oldest first), then the kept clock. */

static asked_list_t *asked_list(k8s_upstream_t *u, const target_t *t)
{
	return t->kept ? &u->kept : &u->probation;
}

static void asked_list_push(asked_list_t *l, target_t *t)
{
	cds_list_add_tail(&t->asked_node, &l->targets);
	l->count++;
}

static void asked_list_remove(asked_list_t *l, target_t *t)
{
	cds_list_del(&t->asked_node);
	l->count--;
}

/*! \brief The first target of a list, the next to go; NULL when it is empty. */
static target_t *asked_list_first(asked_list_t *l)
{
	return cds_list_empty(&l->targets) ? NULL :
	       cds_list_first_entry(&l->targets, target_t, asked_node);
}

void upstream_asked_drop(k8s_upstream_t *u, target_t *t, target_t **forget)
{
	asked_list_remove(asked_list(u, t), t);
	t->asked = false;
	t->kept = false;
	t->referenced = false;
	u->asked--;
	key_text_t key;
	k8s_map_del(&u->names, upstream_key_text(t->name, t->source, key));
	t->next = *forget;
	*forget = t;
}

/*!
 * \brief Makes room for a newly asked name.
 *
 * The oldest name asked once and not looked up since its answer goes first;
 * one looked up or asked again moves to the kept names instead. Only without
 * such names does a kept one go: the first the clock's hand finds not looked
 * up since the hand last passed it. So a name queries keep using is displaced
 * only by as many names, each looked up twice, within one turn of the hand.
 *
 * \return False if nothing can go (only names asked in this very drain).
 */
static bool asked_evict(k8s_upstream_t *u, target_t **forget)
{
	target_t *t;
	// A target not active yet is this drain's, on its start list: never one to forget.
	while ((t = asked_list_first(&u->probation)) != NULL && t->active) {
		upstream_job_harvest(&t->jobs[0]);
		upstream_job_harvest(&t->jobs[1]);
		if (!t->referenced) {
			upstream_asked_drop(u, t, forget);
			return true;
		}
		asked_list_remove(&u->probation, t);
		t->kept = true;
		t->referenced = false;
		asked_list_push(&u->kept, t);
	}
	// One turn clears every mark: the turn after it finds one to go.
	for (size_t pass = 0; (t = asked_list_first(&u->kept)) != NULL && pass <= u->kept.count;
	     pass++) {
		upstream_job_harvest(&t->jobs[0]);
		upstream_job_harvest(&t->jobs[1]);
		if (!t->referenced) {
			upstream_asked_drop(u, t, forget);
			return true;
		}
		t->referenced = false;
		asked_list_remove(&u->kept, t);
		asked_list_push(&u->kept, t);
	}
	return false;
}

/*!
 * \brief Keeps a name a query asked for; a new target goes on \a start, an evicted
 * one on \a forget.
 *
 * \return False if MAX_ASKED names are kept already and none can go.
 */
bool upstream_asked_keep(k8s_upstream_t *u, const knot_dname_t *name, const uint8_t *source,
                         target_t **again, target_t **start, target_t **forget, bool *evicted)
{
	key_text_t key;
	upstream_key_text(name, source, key);
	target_t *t = k8s_map_get(&u->names, key);
	if (t != NULL && t->asked) {
		// Asked again: a query found no answer (none yet, or dropped) and wants one.
		for (int i = 0; i < 2; i++) {
			t->jobs[i].looked = true;
		}
		if (t->jobs[0].entry != NULL || t->jobs[1].entry != NULL) {
			t->referenced = true;  // Asked after an answer: more than one query's name.
		}
		*again = t;  // The caller resumes it: this file calls nothing of upstream.c.
		return true;
	}
	if (u->asked >= atomic_load_explicit(&u->max_asked, memory_order_relaxed)) {
		if (!asked_evict(u, forget)) {
			return false;
		}
		*evicted = true;
	}
	if (t == NULL) {
		t = upstream_target_new(name, source);
		if (t == NULL || k8s_map_set(&u->names, key, t) != KNOT_EOK) {
			free(t);
			return true;  // No memory: a later query asks again.
		}
		t->next = *start;
		*start = t;
	}
	t->asked = true;
	t->kept = false;
	t->referenced = false;
	for (int i = 0; i < 2; i++) {
		t->jobs[i].looked = true;  // The ask is the query's: one resolution for it.
	}
	asked_list_push(&u->probation, t);
	u->asked++;
	return true;
}

k8s_upstream_status_t k8s_upstream_lookup(const k8s_upstream_t *u, const knot_dname_t *name,
                                          uint16_t qtype, const k8s_upstream_answer_t **ans)
{
	return k8s_upstream_lookup_source(u, name, qtype, NULL, ans);
}

/*! Set in a thread that only looks names up: see k8s_upstream_asks_off(). */
static __thread bool asks_off __attribute__((tls_model("initial-exec")));

k8s_upstream_status_t k8s_upstream_lookup_source(const k8s_upstream_t *u,
                                                 const knot_dname_t *name, uint16_t qtype,
                                                 const uint8_t *source,
                                                 const k8s_upstream_answer_t **ans)
{
	uint32_t hash = upstream_key_hash(name, qtype, source);
	k8s_rcuhash_iter_t it;
	k8s_rcuhash_iter_init(&it, &u->cache, hash);
	k8s_upstream_entry_t *e;
	while ((e = k8s_rcuhash_iter_next(&it)) != NULL) {
		if (e->hash == hash && e->qtype == qtype && knot_dname_is_equal(e->name, name) &&
		    source_equal(e->source, source)) {
			// Written once per refresh at most, so readers do not contend on it. A
			// retry's lookup delivers the query that asked: it is no new use.
			if (!asks_off && !atomic_load_explicit(&e->used, memory_order_relaxed)) {
				atomic_store_explicit(&e->used, true, memory_order_relaxed);
			}
			*ans = e->ans;
			return K8S_UPSTREAM_READY;
		}
	}
	return K8S_UPSTREAM_PENDING;
}

void k8s_upstream_asks_off(void)
{
	asks_off = true;
}

bool k8s_upstream_ask(const k8s_upstream_t *u, const knot_dname_t *name)
{
	return k8s_upstream_ask_source(u, name, NULL);
}

bool k8s_upstream_ask_source(const k8s_upstream_t *u, const knot_dname_t *name,
                             const uint8_t *source)
{
	if (asks_off) {
		return true;
	}
	size_t size = knot_dname_size(name);
	// Where a name starts probing is fixed, so that its repeated asks meet the same slots.
	size_t start = k8s_hash(name, size);
	for (size_t i = 0; i < ASK_PROBE; i++) {
		ask_t *a = &u->asks[(start + i) % ASK_SLOTS];
		unsigned expected = ASK_FREE;
		if (atomic_compare_exchange_strong_explicit(&a->state, &expected, ASK_WRITING,
		                                            memory_order_acquire,
		                                            memory_order_relaxed)) {
			memcpy(a->name, name, size);
			a->source[0] = 0;
			if (source != NULL && source[0] != 0) {
				memcpy(a->source, source, 1 + source[0]);
			}
			atomic_store_explicit(&a->state, ASK_READY, memory_order_release);
			uint64_t one = 1;
			(void)!write(u->wake_fd, &one, sizeof(one));
			return true;
		}
	}
	return false;
}
