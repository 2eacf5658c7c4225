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
 * \brief The stub domains and the default servers as the options write them (a policy
 * on the resolver: which servers a name goes to): `forward`'s ADDR[@PORT] and
 * `forward-stub`'s ZONE=ADDR[@PORT][,ADDR...], read into the forwarder's groups
 * (resolver/forward.h), which route a name to its longest stub domain.
 */

#pragma once

#include <stddef.h>
#include <sys/socket.h>

#include "resolver/forward.h"

/*!
 * \brief Parses a stub domain, `ZONE=ADDR[@PORT][,ADDR[@PORT]...]` (kube-dns's
 * stubDomains), into \a group.
 *
 * \retval KNOT_EOK, KNOT_EINVAL (with a reason in \a msg), KNOT_ENOMEM
 */
int k8s_fwd_stub_parse(const char *text, k8s_fwd_group_t *group, char *msg, size_t msglen);

/*! \brief An address with an optional @port (53 by default) into \a addr. */
int k8s_fwd_addr_parse(const char *text, struct sockaddr_storage *addr);
