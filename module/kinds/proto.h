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
 * \brief The transport protocols of ports and their names in SRV owners: what the
 * decoders (decode.c), the snapshot and the SRV answers (answer_srv.c) share, so
 * that the answer path needs nothing of the decoders.
 */

#pragma once

/*! \brief Transport protocols of ports. */
typedef enum {
	K8S_PROTO_TCP = 0,
	K8S_PROTO_UDP,
	K8S_PROTO_SCTP,
	K8S_PROTO_COUNT
} k8s_proto_t;

/*! \brief Lowercase protocol name without underscore ("tcp"), "unknown" out of range. */
static inline const char *k8s_proto_name(k8s_proto_t proto)
{
	static const char *names[K8S_PROTO_COUNT] = {
		[K8S_PROTO_TCP]  = "tcp",
		[K8S_PROTO_UDP]  = "udp",
		[K8S_PROTO_SCTP] = "sctp",
	};
	return ((unsigned)proto < K8S_PROTO_COUNT) ? names[proto] : "unknown";
}
