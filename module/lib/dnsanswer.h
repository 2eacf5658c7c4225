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
 * \brief What an upstream's answer must be before a cache reads it, beyond what libknot
 * checks: the one rule of the forwarder's cache (its clients' and its kept names'); and
 * the kind of a response as CoreDNS tells them apart, which its cache and its query
 * log go by.
 *
 * libknot measures the rdata of class IN only: an SOA of another class may be empty or
 * anything, and knot_soa_minimum() on it reads past its end.
 */

#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <libknot/libknot.h>

/*! \brief The MINIMUM field of an SOA's rdata of any class, if the rdata is whole. */
bool k8s_soa_minimum(const knot_rdata_t *rdata, uint32_t *minimum);

/*!
 * \brief The negative TTL of a response from its SOA (RFC 2308, 5): the first SOA of
 * class IN in the authority section whose rdata is whole, its TTL or MINIMUM, the
 * smaller. Another SOA (another class, cut short) is not one to take it from.
 *
 * \retval true and \a ttl set, or false if there is no such SOA.
 */
bool k8s_negative_ttl(const knot_pkt_t *pkt, uint32_t *ttl);

/*! \brief A response's kind, as CoreDNS types it (plugin/pkg/response, Typify). */
typedef enum {
	K8S_RESPONSE_NOERROR = 0,  /*!< Records that answer, or NOERROR with no SOA or NS. */
	K8S_RESPONSE_DELEGATION,   /*!< NOERROR, no answer, NS records in the authority. */
	K8S_RESPONSE_NXDOMAIN,     /*!< NXDOMAIN without records in the answer section. */
	K8S_RESPONSE_NODATA,       /*!< NOERROR, no answer, an SOA in the authority. */
	K8S_RESPONSE_SERVFAIL,     /*!< SERVFAIL or NOTIMP (CoreDNS's ServerError). */
	K8S_RESPONSE_OTHER,        /*!< Any other error (REFUSED, FORMERR, NXDOMAIN with records). */
	K8S_RESPONSE_META,         /*!< NOTIFY, AXFR and IXFR. */
	K8S_RESPONSE_UPDATE,
} k8s_response_t;

/*! \brief CoreDNS's classes of responses (its log plugin's `class`), bit flags. */
typedef enum {
	K8S_RESPONSE_CLASS_SUCCESS = 1 << 0,  /*!< NOERROR, delegations. */
	K8S_RESPONSE_CLASS_DENIAL = 1 << 1,   /*!< NXDOMAIN, NODATA. */
	K8S_RESPONSE_CLASS_ERROR = 1 << 2,    /*!< Everything else. */
	K8S_RESPONSE_CLASS_ALL = 7,
} k8s_response_class_t;

/*!
 * \brief The kind of the response in \a wire (\a len bytes): its header, and the types of
 * its authority records. A message cut short is typed by what it holds.
 */
k8s_response_t k8s_response_type(const uint8_t *wire, size_t len);

/*! \brief The class of a kind of response (CoreDNS's Classify). */
k8s_response_class_t k8s_response_class(k8s_response_t type);

/*! \brief An RCODE's name as CoreDNS writes it (miekg/dns's RcodeToString), or its number. */
const char *k8s_rcode_name(unsigned rcode, char *buf, size_t len);
