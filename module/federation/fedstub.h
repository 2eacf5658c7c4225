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
 * \brief Federation stub zones of the K8S-DNS role: which nameservers answer a
 * federation's names, as configured (federation-nameservers: NAME=IP[@port][,...])
 * or programmed at run time (POST /federations/NAME, {"nameservers": [...]}),
 * and the file the programmed ones persist in.
 *
 * Everything read here is hostile input (a request body, a file on disk):
 * sizes and counts are capped and every name and address is checked. Sets are
 * immutable once built, so that readers take them under RCU without a lock.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "lib/sockaddr.h"

/*! Nameservers of one federation. */
#define K8S_FEDSTUB_MAX_NS    8
/*! Federations programmed at run time (static ones do not count). */
#define K8S_FEDSTUB_MAX_FEDS  64
/*! Bytes of a request body. */
#define K8S_FEDSTUB_MAX_BODY  4096
/*! Bytes of the persisted file. */
#define K8S_FEDSTUB_MAX_FILE  (256 * 1024)

/*! \brief One federation's stub zone. */
typedef struct {
	uint8_t name[64];              /*!< Wire label, lowercase. */
	size_t count;                  /*!< Nameservers, 1 to K8S_FEDSTUB_MAX_NS. */
	struct sockaddr_storage ns[K8S_FEDSTUB_MAX_NS];
} k8s_fedstub_t;

/*! \brief An immutable set of stub zones, each name once. */
typedef struct {
	size_t count;
	k8s_fedstub_t feds[];
} k8s_fedstub_set_t;

/*!
 * \brief Reads a federation's name (a lowercase RFC 1123 label) into a wire label.
 *
 * \retval KNOT_EOK, KNOT_EINVAL
 */
int k8s_fedstub_name(const char *text, size_t len, uint8_t label[64]);

/*!
 * \brief Reads a nameserver: an IPv4 or IPv6 address, optionally with @port (1-65535).
 *
 * \retval KNOT_EOK, KNOT_EINVAL
 */
int k8s_fedstub_addr(const char *text, size_t len, struct sockaddr_storage *addr);

/*!
 * \brief Reads a request body {"nameservers": ["IP[@port]", ...]} (1 to
 * K8S_FEDSTUB_MAX_NS distinct addresses, nothing else) into \a fed's nameservers.
 *
 * \param err  Out: a lowercase reason on failure.
 *
 * \retval KNOT_EOK, KNOT_EINVAL, KNOT_ELIMIT (too large or too many), KNOT_ENOMEM
 */
int k8s_fedstub_body(const char *body, size_t len, k8s_fedstub_t *fed, char *err, size_t errlen);

/*!
 * \brief Reads a federation-nameservers value: NAME=IP[@port][,IP[@port]...].
 *
 * \retval KNOT_EOK, KNOT_EINVAL, KNOT_ELIMIT
 */
int k8s_fedstub_static(const char *text, k8s_fedstub_t *fed, char *err, size_t errlen);

/*!
 * \brief Reads the persisted file:
 * {"version": 1, "federations": {"NAME": {"nameservers": [...]}, ...}}.
 *
 * \param out  Out: the set (free()), on KNOT_EOK.
 *
 * \retval KNOT_EOK, KNOT_EINVAL, KNOT_ELIMIT, KNOT_ENOMEM
 */
int k8s_fedstub_file_parse(const char *data, size_t len, k8s_fedstub_set_t **out,
                           char *err, size_t errlen);

/*!
 * \brief Writes a set as the persisted file's text (what k8s_fedstub_file_parse() reads).
 *
 * \return The NUL-terminated text (free()), or NULL (no memory).
 */
char *k8s_fedstub_file_format(const k8s_fedstub_set_t *set);

/*! \brief The federation named by the wire label \a name, or NULL. */
const k8s_fedstub_t *k8s_fedstub_find(const k8s_fedstub_set_t *set, const uint8_t *name);

/*! \brief A new set: \a set (NULL: empty) with \a fed added or replacing its namesake. */
k8s_fedstub_set_t *k8s_fedstub_put(const k8s_fedstub_set_t *set, const k8s_fedstub_t *fed);

/*! \brief A new set: \a set without federation \a name. */
k8s_fedstub_set_t *k8s_fedstub_del(const k8s_fedstub_set_t *set, const uint8_t *name);

/*!
 * \brief The set the forwarder uses: every programmed federation, then the static
 * ones not programmed (programming overrides configuration for the same name).
 */
k8s_fedstub_set_t *k8s_fedstub_merge(const k8s_fedstub_set_t *programmed,
                                     const k8s_fedstub_set_t *configured);
