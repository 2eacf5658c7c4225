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
 * checks: the one rule of the forwarder's cache (its clients' and its kept names').
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
