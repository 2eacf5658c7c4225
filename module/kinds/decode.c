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

/*
 * The decoding helpers the kinds share (kind_priv.h): values checked as the API
 * server checks them, an object packed in one allocation, ports, the metadata packed.
 * They call nothing of the kinds: each kind_*.c calls them, never the other way.
 */

#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libknot/errcode.h>

#include "lib/bulk.h"
#include "lib/dnsname.h"
#include "kinds/kind_priv.h"

/*! At most this many ports are kept (k8s_port_t counts are 16-bit). */
#define PORTS_MAX UINT16_MAX


/* --- validation ---------------------------------------------------------------- */

static char lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

k8s_str_t k8s_decode_label(k8s_str_t s, bool fold)
{
	if (s.ptr == NULL || !k8s_dns_label_valid(s.ptr, s.len, fold)) {
		s.ptr = NULL;
		s.len = 0;
	}
	return s;
}

k8s_str_t k8s_decode_hostname(k8s_str_t s)
{
	if (s.ptr != NULL && s.len > 0 && s.ptr[s.len - 1] == '.') {
		s.len--;
	}
	if (s.ptr == NULL || !k8s_dns_name_valid(s.ptr, s.len, K8S_DNS_NAME_MAX, 0, true)) {
		s.ptr = NULL;
		s.len = 0;
	}
	return s;
}

/*!
 * A dotted quad read as glibc's inet_pton(AF_INET) reads it (four decimal octets of at
 * most 255, no leading zero, nothing else), without copying it to a C string first: most
 * of a slice's addresses are IPv4, and inet_pton was a tenth of decoding one.
 */
static bool ipv4_read(const char *text, size_t len, uint8_t out[4])
{
	uint8_t octets[4] = { 0 };
	size_t count = 0;     // octets begun
	bool digits = false;  // inside an octet's digits
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (c >= '0' && c <= '9') {
			if (!digits) {
				if (count == 4) {
					return false;
				}
				count++;
				digits = true;
			} else if (octets[count - 1] == 0) {
				return false;  // a leading zero
			}
			unsigned value = octets[count - 1] * 10u + (unsigned)(c - '0');
			if (value > 255) {
				return false;
			}
			octets[count - 1] = (uint8_t)value;
		} else if (c == '.' && digits && count < 4) {
			digits = false;
		} else {
			return false;
		}
	}
	if (count < 4 || !digits) {
		return false;
	}
	memcpy(out, octets, 4);
	return true;
}

bool k8s_decode_ip(k8s_str_t s, int family, k8s_ip_t *ip)
{
	char text[INET6_ADDRSTRLEN];
	if (s.ptr == NULL || s.len == 0 || s.len >= sizeof(text)) {
		return false;
	}
	memset(ip, 0, sizeof(*ip));
	if (family != AF_INET6 && ipv4_read(s.ptr, s.len, ip->bytes)) {
		ip->family = AF_INET;
		return true;
	}
	if (family == AF_INET) {
		return false;
	}
	memcpy(text, s.ptr, s.len);
	text[s.len] = '\0';
	if (inet_pton(AF_INET6, text, ip->bytes) == 1) {
		ip->family = AF_INET6;
		return true;
	}
	return false;
}

uint8_t k8s_decode_ips(k8s_jv_t arr, const char *key, k8s_ip_t ips[2])
{
	uint8_t count = 0;
	JV_EACH(item, arr) {
		if (count == 2) {
			break;
		}
		k8s_str_t s = (key != NULL) ? jv_str(item, key) : jv_str_of(item);
		if (k8s_decode_ip(s, AF_UNSPEC, &ips[count])) {
			count++;
		}
	}
	return count;
}

/* --- packing ------------------------------------------------------------------- */

const char *k8s_pack_str(k8s_pack_t *p, k8s_str_t s, bool fold)
{
	if (s.ptr == NULL) {
		return NULL;
	}
	char *out = p->at;
	for (size_t i = 0; i < s.len; i++) {
		out[i] = fold ? lower(s.ptr[i]) : s.ptr[i];
	}
	out[s.len] = '\0';
	p->at += s.len + 1;
	return out;
}

void *k8s_decode_alloc(size_t head, size_t arrays, size_t strings, k8s_pack_t *p, void **arr_at)
{
	size_t arr_off = K8S_ALIGN_UP(head, _Alignof(max_align_t));
	size_t str_off = arr_off + arrays;
	char *mem = calloc(1, str_off + strings);
	if (mem == NULL) {
		return NULL;
	}
	if (arr_at != NULL) {
		*arr_at = mem + arr_off;
	}
	p->at = mem + str_off;
	return mem;
}

/* --- ports --------------------------------------------------------------------- */

/*! Reads one port; false when it is to be skipped (not an object, unknown protocol). */
static bool port_read(k8s_jv_t item, k8s_port_t *port, k8s_str_t *name)
{
	if (!jv_is(item, K8S_JOBJECT)) {
		return false;
	}
	k8s_str_t proto = jv_str(item, "protocol");
	if (proto.ptr == NULL || str_is(proto, "TCP")) {
		port->proto = K8S_PROTO_TCP;
	} else if (str_is(proto, "UDP")) {
		port->proto = K8S_PROTO_UDP;
	} else if (str_is(proto, "SCTP")) {
		port->proto = K8S_PROTO_SCTP;
	} else {
		return false;
	}
	int64_t number = jv_int(item, "port", 0);
	port->port = (number >= 1 && number <= UINT16_MAX) ? (uint16_t)number : 0;
	*name = k8s_decode_label(jv_str(item, "name"), false);
	port->name = NULL;
	return true;
}

uint16_t k8s_ports_measure(k8s_jv_t arr, size_t *strings)
{
	size_t count = 0;
	JV_EACH(item, arr) {
		k8s_port_t port;
		k8s_str_t name;
		if (count == PORTS_MAX) {
			break;
		}
		if (port_read(item, &port, &name)) {
			*strings += k8s_str_size(name);
			count++;
		}
	}
	return (uint16_t)count;
}

const k8s_port_t *k8s_ports_pack(k8s_jv_t arr, k8s_port_t *out, uint16_t count,
                                 k8s_pack_t *p)
{
	uint16_t done = 0;
	JV_EACH(item, arr) {
		k8s_str_t name;
		if (done == count) {
			break;
		}
		if (port_read(item, &out[done], &name)) {
			out[done].name = k8s_pack_str(p, name, false);
			done++;
		}
	}
	return (count > 0) ? out : NULL;
}

/* --- metadata ------------------------------------------------------------------ */

size_t k8s_meta_strings(const k8s_meta_t *m)
{
	return k8s_str_size(m->ns) + k8s_str_size(m->name);
}

void k8s_meta_pack(k8s_object_t *obj, k8s_kind_t kind, const k8s_meta_t *m, k8s_pack_t *p)
{
	obj->kind = kind;
	obj->ns = k8s_pack_str(p, m->ns, false);
	obj->name = k8s_pack_str(p, m->name, false);
}
