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

/*!
 * \file
 *
 * \brief The forwarder's cache: upstream answers (positive and negative) for names
 * outside our zones, written by the forwarder thread, read lock-free by knotd's workers.
 *
 * An entry is one immutable allocation: the answer's records, section by section, as
 * the upstream sent them (OPT and TSIG left out), with the time it was stored. Its life
 * is the smallest TTL in it (a negative answer's: its SOA's TTL or MINIMUM, the smaller),
 * at most the configured maximum; the TTLs served are what remains. The table is a
 * fixed array of pointers, two slots per key (bounded memory: slots times the largest
 * entry); a replaced entry is freed after an RCU grace period.
 *
 * One entry type and one cache for the one resolver: the forwarder's clients' answers
 * and its kept names' (keeper.h), which the answer path reads through upstream.h. A kept
 * name's entry may carry a source label (part of its key: a federation's) and may be an
 * upstream's failure (REFUSED, SERVFAIL: no records, until the retry); clients are never
 * served those (k8s_fwd_cache_get()). A kept name's entry that the two-slot table
 * evicts is simply asked again: its next lookup misses, asks, and the keeper resolves it.
 */

#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libknot/libknot.h>
#include <urcu/urcu-memb.h>

#include "resolver/upstream.h"

/*! \brief Largest entry kept (bytes): a larger answer is relayed, not cached. */
#define K8S_FWD_ENTRY_MAX 8192
/*!
 * \brief Largest answer relayed once (bytes of the entry it makes): any a 64 KiB message
 * holds with its owners written out, but not what name compression can inflate to
 * (thousands of records each with a 255-byte owner); above it the client gets SERVFAIL.
 */
#define K8S_FWD_RELAY_MAX (256 * 1024)

struct k8s_fwd_entry {
	struct rcu_head rcu;
	uint32_t hash;
	uint16_t qtype;
	uint16_t rcode;        /*!< NOERROR or NXDOMAIN; a kept name's failure: another (no records). */
	bool kept;             /*!< A kept name's (the keeper may serve it past expiry, 5 min). */
	bool kept_only;        /*!< Never a client's: a failure, a source's, or beyond the cache rules. */
	bool unreachable;      /*!< A kept name's failure: no upstream answered within the deadline. */
	atomic_bool used;      /*!< Looked up by the answer path since published (the keeper's mark). */
	bool in_use;           /*!< A kept name queries look up (the forwarder's thread alone reads it). */
	uint64_t stored_ms;    /*!< k8s_now_ms() when stored. */
	uint64_t expires_ms;
	uint32_t ttl_cap;      /*!< TTLs served are at most this, less the entry's age. */
	bool uniform;          /*!< Every record served with ttl_cap less the age (CoreDNS's cache). */
	uint8_t group;         /*!< The group of servers it came from (the counts by group). */
	uint8_t kind;          /*!< What it counts as in its group: K8S_FWD_HELD_*. */
	uint32_t bytes;        /*!< Size of the allocation. */
	uint16_t count[3];     /*!< RRs of the answer, authority and additional sections. */
	knot_dname_t *qname;   /*!< Lowercase, inside the allocation. */
	uint8_t *source;       /*!< Key part: a source label inside the allocation, or NULL. */
	knot_rrset_t rrs[];    /*!< One RR each, in section order; owners and rdata inside. */
};

/*!
 * \brief An entry from an upstream answer to (\a qname, \a qtype), or NULL when it is
 * not to be kept: an RCODE other than NOERROR or NXDOMAIN, TC, a negative answer
 * without a whole IN SOA (k8s_negative_ttl()), a TTL of 0, more than K8S_FWD_ENTRY_MAX
 * bytes, or no memory. Records of a class other than IN are left out.
 *
 * \param qname  Lowercase.
 * \param relay  Only to relay it once, never cached: any RCODE and TTL, at most
 *               K8S_FWD_RELAY_MAX bytes.
 */
k8s_fwd_entry_t *k8s_fwd_entry_new(const knot_pkt_t *answer, const knot_dname_t *qname,
                                   uint16_t qtype, uint32_t max_ttl, uint64_t now_ms, bool relay);

/*! \brief k8s_fwd_entry_new() for the key (\a qname, \a qtype, \a source): a label, or NULL. */
k8s_fwd_entry_t *k8s_fwd_entry_new_source(const knot_pkt_t *answer, const knot_dname_t *qname,
                                          uint16_t qtype, const uint8_t *source,
                                          uint32_t max_ttl, uint64_t now_ms, bool relay);

/*!
 * \brief A kept name's failure entry: \a rcode (REFUSED, SERVFAIL...), no records,
 * running out at \a expires_ms (the retry). NULL on no memory.
 */
k8s_fwd_entry_t *k8s_fwd_entry_failure(const knot_dname_t *qname, uint16_t qtype,
                                       const uint8_t *source, uint16_t rcode, uint64_t now_ms,
                                       uint64_t expires_ms);

/*!
 * \brief An entry of \a answer's records as CoreDNS's cache keeps one: any RCODE, every
 * record served with the TTL \a ttl less the entry's age, living \a ttl seconds; NULL
 * when larger than K8S_FWD_ENTRY_MAX or no memory.
 */
k8s_fwd_entry_t *k8s_fwd_entry_new_uniform(const knot_pkt_t *answer, const knot_dname_t *qname,
                                           uint16_t qtype, uint32_t ttl, uint64_t now_ms);

/*! \brief Frees an entry no reader can see. */
void k8s_fwd_entry_free(k8s_fwd_entry_t *e);

/*!
 * \brief Puts the entry's records into \a pkt (positioned at its answer section),
 * with TTLs less the entry's age. What does not fit in the answer or authority
 * section sets TC; the additional section is filled as far as it fits.
 *
 * \retval KNOT_EOK, or an error of knot_pkt_put() other than lack of space.
 */
int k8s_fwd_entry_put(const k8s_fwd_entry_t *e, knot_pkt_t *pkt, uint64_t now_ms);

/*! \brief What an entry counts as in its group (a group's own capacities). */
enum { K8S_FWD_HELD_NONE = 0, K8S_FWD_HELD_SUCCESS, K8S_FWD_HELD_DENIAL, K8S_FWD_HELD_KINDS };
/*! \brief Groups the counts are kept for: the default servers and 16 stub domains. */
#define K8S_FWD_CACHE_GROUPS 17

typedef struct {
	k8s_fwd_entry_t **slots;      /*!< Published with rcu_xchg_pointer(), read with rcu_dereference(). */
	size_t mask;
	atomic_uint_fast64_t entries;
	atomic_uint_fast64_t bytes;
	/*! Entries published by group and kind (the writer's thread alone). */
	uint32_t held[K8S_FWD_CACHE_GROUPS][K8S_FWD_HELD_KINDS];
} k8s_fwd_cache_t;

/*! \brief A cache of at least \a size entries (a power of two slots, 2 at least). */
int k8s_fwd_cache_init(k8s_fwd_cache_t *c, size_t size);

/*! \brief Frees the entries and the table: no reader may remain, and rcu_barrier() was called. */
void k8s_fwd_cache_deinit(k8s_fwd_cache_t *c);

/*!
 * \brief The live entry of (\a qname, \a qtype) a client may be answered from (no
 * source, no failure), or NULL. Call inside an RCU read-side section; the entry stays
 * valid until it ends.
 *
 * \param qname  Lowercase.
 */
const k8s_fwd_entry_t *k8s_fwd_cache_get(k8s_fwd_cache_t *c, const knot_dname_t *qname,
                                         uint16_t qtype, uint64_t now_ms);

/*!
 * \brief The entry of (\a qname, \a qtype, \a source), expired or not, any kind, or NULL
 * (inside an RCU read-side section, or the writer's thread).
 */
k8s_fwd_entry_t *k8s_fwd_cache_find(k8s_fwd_cache_t *c, const knot_dname_t *qname,
                                    uint16_t qtype, const uint8_t *source);

/*! \brief Unpublishes \a e if the table holds it (the writer's thread): freed after a grace period. */
void k8s_fwd_cache_del(k8s_fwd_cache_t *c, k8s_fwd_entry_t *e);

/*!
 * \brief Publishes \a e (one writer thread, registered with RCU): it replaces the entry
 * of the same key, else an empty or expired slot of the two, else the one that expires
 * first. What it replaces is freed after a grace period.
 */
void k8s_fwd_cache_put(k8s_fwd_cache_t *c, k8s_fwd_entry_t *e, uint64_t now_ms);

/*! \brief The key's hash: lowercase name and type. */
uint32_t k8s_fwd_key_hash(const knot_dname_t *qname, uint16_t qtype);

/*! \brief The key's hash with a source label (NULL or empty: k8s_fwd_key_hash()). */
uint32_t k8s_fwd_key_hash_source(const knot_dname_t *qname, uint16_t qtype,
                                 const uint8_t *source);
