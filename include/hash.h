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
 * \brief The hash of the module's tables: FNV-1a with a final avalanche.
 *
 * The tables index with the low bits of the hash (open addressing, power-of-two
 * sizes), which plain FNV-1a spreads poorly; the avalanche (MurmurHash3's
 * finaliser) fixes that. Keys are cluster data or query names, not secrets:
 * no seed is needed.
 */

#pragma once

#include <stddef.h>
#include <stdint.h>

#define K8S_HASH_INIT 2166136261u

/*! \brief Adds bytes to a running hash (start with K8S_HASH_INIT). */
static inline uint32_t k8s_hash_bytes(uint32_t h, const void *data, size_t len)
{
	const uint8_t *bytes = data;
	for (size_t i = 0; i < len; i++) {
		h = (h ^ bytes[i]) * 16777619u;
	}
	return h;
}

/*! \brief Mixes a running hash into the table index hash. */
static inline uint32_t k8s_hash_final(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}
