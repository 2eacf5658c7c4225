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

#include <stdint.h>
#include <string.h>

#include "kinds/kind_priv.h"

#define FNV_PRIME  0x100000001b3ULL

static uint64_t fnv_bytes(uint64_t h, const void *data, size_t len)
{
	const uint8_t *b = data;
	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= FNV_PRIME;
	}
	return h;
}

uint64_t k8s_digest_u64(uint64_t h, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++) {
		b[i] = (uint8_t)(v >> (8 * i));
	}
	return fnv_bytes(h, b, sizeof(b));
}

uint64_t k8s_digest_str(uint64_t h, const char *s)
{
	if (s == NULL) {
		return k8s_digest_u64(h, UINT64_MAX);
	}
	size_t len = strlen(s);
	return fnv_bytes(k8s_digest_u64(h, len), s, len);
}

uint64_t k8s_digest_ip(uint64_t h, const k8s_ip_t *ip)
{
	h = k8s_digest_u64(h, ip->family);
	return fnv_bytes(h, ip->bytes, (ip->family == AF_INET) ? 4 : 16);
}

uint64_t k8s_digest_ips(uint64_t h, const k8s_ip_t *ips, uint8_t count)
{
	h = k8s_digest_u64(h, count);
	for (uint8_t i = 0; i < count; i++) {
		h = k8s_digest_ip(h, &ips[i]);
	}
	return h;
}

uint64_t k8s_digest_mix(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

uint64_t k8s_digest_ports(uint64_t h, const k8s_port_t *ports, uint16_t count)
{
	uint64_t sum = 0;
	for (uint16_t i = 0; i < count; i++) {
		uint64_t e = k8s_digest_str(K8S_DIGEST_INIT, ports[i].name);
		e = k8s_digest_u64(e, ports[i].port);
		e = k8s_digest_u64(e, ports[i].proto);
		sum += k8s_digest_mix(e);
	}
	return k8s_digest_u64(k8s_digest_u64(h, count), sum);
}

uint64_t k8s_digest_meta(const k8s_object_t *obj)
{
	uint64_t h = k8s_digest_u64(K8S_DIGEST_INIT, obj->kind);
	h = k8s_digest_str(h, obj->ns);
	return k8s_digest_str(h, obj->name);
}

uint64_t k8s_object_digest(const k8s_object_t *obj)
{
	uint64_t h = k8s_digest_meta(obj);
	if ((unsigned)obj->kind < K8S_KIND_COUNT && k8s_kind_def(obj->kind)->digest != NULL) {
		h = k8s_kind_def(obj->kind)->digest(h, obj);
	}
	return h;
}

uint64_t k8s_object_digest_of(k8s_object_t *obj)
{
	if (!obj->digested) {
		obj->digest = k8s_object_digest(obj);
		obj->digested = true;
	}
	return obj->digest;
}
