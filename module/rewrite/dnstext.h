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
 * \brief DNS names as CoreDNS's rules read and write them: the presentation text
 * miekg/dns gives a wire name (its escapes, lowercase, a final dot), and such a text
 * back into a wire name with the checks of dns.IsDomainName. Both into the caller's
 * buffer: no allocation.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*! \brief The longest presentation text of a name: 255 octets, each as \DDD, and dots. */
#define K8S_NAME_TEXT_MAX 1024

/*!
 * \brief Writes \a name (wire, at most 255 octets) as miekg/dns's presentation text,
 * lowercase ASCII: `. ' @ ; ( ) " \` and space escaped with a backslash, other bytes
 * outside 0x20-0x7e as \DDD, a dot after every label ("." for the root).
 *
 * \return The text's length (NUL-terminated in \a out), or 0 if it does not fit.
 */
size_t k8s_name_to_text(const uint8_t *name, char *out, size_t max);

/*!
 * \brief Reads a presentation text (a final dot optional) into a wire name, lowercase,
 * as CoreDNS accepts a rewritten name: labels of 1 to 63 octets, no empty label but the
 * root, `\X` and `\DDD` (at most 255) escapes, 255 octets at most.
 *
 * \return The wire name's size, or 0 if the text is not a valid name.
 */
size_t k8s_name_from_text(const char *text, size_t len, uint8_t out[256]);
