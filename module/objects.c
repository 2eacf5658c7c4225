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

/* Not yet written. */

#include "objects.h"

const char *k8s_proto_name(k8s_proto_t proto)
{
	switch (proto) {
	case K8S_PROTO_TCP:  return "tcp";
	case K8S_PROTO_UDP:  return "udp";
	case K8S_PROTO_SCTP: return "sctp";
	default:             return "";
	}
}

#include <stdlib.h>

void k8s_object_free(k8s_object_t *obj)
{
	free(obj);
}
