/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief The hosts table: names and addresses of hosts-file entries, as CoreDNS's
 * *hosts* plugin serves them (A, AAAA, PTR), published whole and immutable.
 *
 * Entries come from a hosts file's text (hostsfile.c: `IP NAME...` lines, `#`
 * comments), the file's or a ConfigMap key's, then from inline lines, in that
 * order, which is the order of an answer's records. A builder gathers them
 * (names outside the table's zones left out, as CoreDNS leaves them) and lays
 * out the table in one go: every name's A and AAAA rdatasets and every
 * address's PTR rdataset prebuilt, so an answer copies nothing. A `*.suffix`
 * name matches one label more, below an exact name, and makes no PTR. Readers
 * need nothing but the table; the thread that re-reads the file publishes a new
 * table and frees the old one after a grace period (k8s_hosts.c). No knotd call.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libknot/libknot.h>

/*! \brief Largest text read (a hosts file, a ConfigMap key): larger is refused whole. */
#define K8S_HOSTS_TEXT_MAX (32 * 1024 * 1024)

/*! \brief Most (name, address) entries of a table: past it, lines are left out (counted). */
#define K8S_HOSTS_ENTRIES_MAX 1000000

/*! \brief Most addresses of a family per name, and names per address (PTR): the rest left out. */
#define K8S_HOSTS_PER_NAME_MAX 1000

/*! \brief How a table is built and answered: the hosts settings. */
typedef struct {
	const knot_dname_t *const *zones;  /*!< Names served (lowercase); none: every name. */
	size_t zone_count;
	const knot_dname_t *const *fall;   /*!< Fallthrough zones (the root: all); none: no fallthrough. */
	size_t fall_count;
	bool fall_unsupported;             /*!< Types other than A, AAAA, PTR of a known name pass on. */
	bool no_reverse;                   /*!< No PTR records. */
	uint32_t ttl;                      /*!< Of every record. */
} k8s_hosts_conf_t;

/*! \brief What a build read, for the log. */
typedef struct {
	size_t lines;         /*!< Lines with an address and a name. */
	size_t entries;       /*!< (name, address) entries kept. */
	size_t skipped;       /*!< Fields that are no address or name. */
	size_t outside;       /*!< Names outside the zones. */
	size_t capped;        /*!< Entries past the caps. */
} k8s_hosts_stats_t;

typedef struct k8s_hosts k8s_hosts_t;
typedef struct k8s_hosts_builder k8s_hosts_builder_t;

/*! \brief A builder for \a conf (which must outlive it); NULL without memory. */
k8s_hosts_builder_t *k8s_hosts_builder_new(const k8s_hosts_conf_t *conf);

/*! \brief Frees a builder that was not built. */
void k8s_hosts_builder_free(k8s_hosts_builder_t *b);

/*!
 * \brief Adds the entries of a hosts file's text (\a len bytes, no terminator needed),
 * after those added before (hostsfile.c).
 *
 * \retval KNOT_EOK, KNOT_ENOMEM (the builder is unusable: free it)
 */
int k8s_hosts_parse(k8s_hosts_builder_t *b, const char *text, size_t len);

/*!
 * \brief Lays out the table of what was added, and frees the builder either way.
 *
 * \param stats  Out (or NULL): what was read.
 *
 * \return The table, or NULL without memory.
 */
k8s_hosts_t *k8s_hosts_build(k8s_hosts_builder_t *b, k8s_hosts_stats_t *stats);

/*! \brief Frees a table no reader can see any more. */
void k8s_hosts_free(k8s_hosts_t *h);

/* Readers: any thread, the table held (RCU). Names are lowercase wire names. */

/*!
 * \brief The addresses of a name, of one family (AF_INET, AF_INET6): its own, else
 * those of the `*.suffix` entry of its parent; NULL if none.
 */
const knot_rdataset_t *k8s_hosts_addrs(const k8s_hosts_t *h, const knot_dname_t *name, int family);

/*! \brief The names (PTR rdata) of an address of \a family (4 or 16 \a bytes); NULL if none. */
const knot_rdataset_t *k8s_hosts_names(const k8s_hosts_t *h, int family, const uint8_t *bytes);

/*! \brief (name, address) entries of the table. */
size_t k8s_hosts_count(const k8s_hosts_t *h);

/* hosts_answer.c */

/*! \brief What an answer from the table came to. */
typedef enum {
	K8S_HOSTS_PASS = 0,   /*!< Not ours: the next module, the zone, or forwarding answers. */
	K8S_HOSTS_HIT,        /*!< Records put in the answer. */
	K8S_HOSTS_NODATA,     /*!< The name has addresses, not of this type: NOERROR, no records. */
	K8S_HOSTS_SERVFAIL,   /*!< A name of the zones the table lacks, without fallthrough. */
	K8S_HOSTS_TRUNC,      /*!< It does not fit (TC set). */
	K8S_HOSTS_ERROR,      /*!< Out of memory: SERVFAIL. */
} k8s_hosts_result_t;

/*!
 * \brief Answers a query from the table, as CoreDNS's *hosts* plugin answers it.
 *
 * \param qname  Lowercase query name.
 * \param pkt    Response, positioned at the ANSWER section; the records' owner is
 *               the question (its case kept).
 */
k8s_hosts_result_t k8s_hosts_answer(const k8s_hosts_t *h, const k8s_hosts_conf_t *conf,
                                    const knot_dname_t *qname, uint16_t qtype, knot_pkt_t *pkt);

/*! \brief Whether a name is below one of \a names (\a count; the root holds every name). */
bool k8s_hosts_under(const knot_dname_t *name, const knot_dname_t *const *names, size_t count);

/*!
 * \brief The address of a reverse name (4 decimal labels under in-addr.arpa, 32 nibbles
 * under ip6.arpa); 0 if it is none, else its family (\a bytes filled).
 */
int k8s_hosts_reverse(const knot_dname_t *name, uint8_t bytes[16]);
