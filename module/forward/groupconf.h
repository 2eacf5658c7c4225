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
 * \brief A group of servers' own settings as the options write them, CoreDNS's words
 * for its server block's forward and cache (a policy on the resolver):
 *
 *   forward-options: "ZONE [{ policy random|round_robin|sequential ; max_fails N ;
 *                     expire DURATION ; force_tcp ; prefer_udp }]"
 *   forward-cache:   "ZONE [TTL] [{ success CAPACITY [TTL [MINTTL]] ;
 *                     denial CAPACITY [TTL [MINTTL]] ; servfail DURATION ;
 *                     disable success|denial }]"  or  "ZONE off"
 *
 * ZONE is `.` for the default servers, else a stub domain (of forward-stub or of kube-dns's
 * ConfigMap). A value is CoreDNS's: what is not said is CoreDNS's default (policy random,
 * max_fails 2, expire 10s; TTLs 3600 s and 1800 s at most, 5 s at least, 9984 entries,
 * SERVFAIL 5 s), and what CoreDNS refuses is refused.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "resolver/forward.h"

/*!
 * \brief Reads a forward-options (\a cache false) or forward-cache (\a cache true) value
 * into the settings of its zone in \a list (\a *count of them, K8S_FWD_SETTINGS_MAX at
 * most): the zone's entry if it has one (a zone's forward-options and forward-cache
 * make one), else a new one.
 *
 * \retval KNOT_EOK, KNOT_EINVAL (with a reason in \a msg: a value CoreDNS refuses, a zone
 *         given twice for the same option, too many zones), KNOT_ENOMEM
 */
int k8s_fwd_groupconf_parse(const char *text, bool cache, k8s_fwd_zone_settings_t *list,
                            size_t *count, char *msg, size_t msglen);

/*!
 * \brief Milliseconds of a Go duration (CoreDNS's: 10s, 1m30s, 500ms, 0), rounded up;
 * false if it is none or past a day.
 */
bool k8s_fwd_duration_ms(const char *text, uint64_t *ms);
