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
 * \brief IP addresses with a port, as the options and the stub zones write them
 * ("192.0.2.1", "2001:db8::1@5353": the port after '@', 53 left out): set from text,
 * compared, written back. Shared by the forwarder and the federation's stub zones.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/*!
 * \brief Sets \a addr (zeroed first) to the IPv4 or IPv6 address \a ip, a NUL-terminated
 * literal, and \a port. Returns KNOT_EOK, or KNOT_EINVAL if \a ip is neither.
 */
int k8s_sockaddr_set(struct sockaddr_storage *addr, const char *ip, uint16_t port);

/*! \brief Whether \a a and \b b are the same family, address and port. */
bool k8s_sockaddr_equal(const struct sockaddr_storage *a, const struct sockaddr_storage *b);

/*! \brief Writes \a addr as "IP", or "IP@port" for a port other than 53 ("?" if no IP). */
void k8s_sockaddr_text(const struct sockaddr_storage *addr, char *buf, size_t len);
