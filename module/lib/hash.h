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
 * \brief The hash of the module's tables: keyed, drawn at random when the module loads.
 *
 * The tables index with the low bits of the hash (open addressing, power-of-two
 * sizes). Their keys are names and addresses that any namespace user chooses
 * (services, hostnames, EndpointSlice addresses): with a public hash, one
 * could pick thousands that share a slot and make every insertion and lookup
 * walk them all. Under a secret key there is nothing to pick. The function is
 * the fallback memory hash of Go's runtime (wyhash's multiply-fold under a
 * per-process random key), which guards Go's maps against the same attack: a
 * few 64x64->128-bit multiplications, cheaper than byte-wise FNV-1a on the
 * 4 to 40 byte keys used here.
 */

#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*! \brief FNV-1a 64 of \a len bytes, continuing from \a h (start with K8S_FNV64_INIT): a
 * public checksum (a fingerprint of settings, of a snapshot's forms), not for tables nor
 * against a hostile writer (the snapshot file is keyed: snapfile.h). */
#define K8S_FNV64_INIT 0xcbf29ce484222325ULL
uint64_t k8s_fnv64(const void *data, size_t len, uint64_t h);

/*! \brief The process's hash key: random odd words, set before any table exists. */
extern uint64_t k8s_hash_key[2];

static inline uint64_t k8s_hash_mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t k8s_hash_r8(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t k8s_hash_r4(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/*! \brief Hash of bytes for the tables' indexes. */
static inline uint32_t k8s_hash(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t seed = k8s_hash_key[0], a, b;
	if (len == 0) {
		a = b = 0;
	} else if (len < 4) {
		a = p[0] | (uint64_t)p[len >> 1] << 8 | (uint64_t)p[len - 1] << 16;
		b = 0;
	} else if (len <= 8) {
		a = k8s_hash_r4(p);
		b = k8s_hash_r4(p + len - 4);
	} else if (len <= 16) {
		a = k8s_hash_r8(p);
		b = k8s_hash_r8(p + len - 8);
	} else {
		size_t left = len;
		for (; left > 16; left -= 16, p += 16) {
			seed = k8s_hash_mix(k8s_hash_r8(p) ^ k8s_hash_key[1], k8s_hash_r8(p + 8) ^ seed);
		}
		a = k8s_hash_r8(p + left - 16);
		b = k8s_hash_r8(p + left - 8);
	}
	uint64_t h = k8s_hash_mix(0x1d8e4e27c47d124fULL ^ len,
	                          k8s_hash_mix(a ^ k8s_hash_key[1], b ^ seed));
	return (uint32_t)(h ^ (h >> 32));
}
