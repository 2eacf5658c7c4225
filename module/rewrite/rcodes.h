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
 * \brief RCODE names as miekg/dns reads them (StringToRcode), or numbers: what CoreDNS's
 * rewrite rcode rules and template's rcode take.
 */

#pragma once

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*! \brief \a s as an RCODE: a name of miekg's table, or (\a numeric) 0 to 4095. */
static inline int k8s_rcode_parse_as(const char *s, uint16_t *out, int numeric)
{
	static const struct { const char *name; uint16_t v; } rcodes[] = {
		{ "NOERROR", 0 }, { "FORMERR", 1 }, { "SERVFAIL", 2 }, { "NXDOMAIN", 3 },
		{ "NOTIMP", 4 }, { "REFUSED", 5 }, { "YXDOMAIN", 6 }, { "YXRRSET", 7 },
		{ "NXRRSET", 8 }, { "NOTAUTH", 9 }, { "NOTZONE", 10 }, { "BADSIG", 16 },
		{ "BADVERS", 16 }, { "BADKEY", 17 }, { "BADTIME", 18 }, { "BADMODE", 19 },
		{ "BADNAME", 20 }, { "BADALG", 21 }, { "BADTRUNC", 22 }, { "BADCOOKIE", 23 },
	};
	for (size_t i = 0; i < sizeof(rcodes) / sizeof(rcodes[0]); i++) {
		if (strcmp(s, rcodes[i].name) == 0) {
			*out = rcodes[i].v;
			return 0;
		}
	}
	if (!numeric || *s < '0' || *s > '9') {
		return -1;
	}
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (*end != '\0' || v > 4095) {
		return -1;
	}
	*out = v;
	return 0;
}

/*! \brief A rewrite rcode rule's value: a name (any case) or a number. */
static inline int k8s_rcode_parse(const char *s, uint16_t *out)
{
	char up[16];
	size_t len = strlen(s);
	if (len >= sizeof(up)) {
		return -1;
	}
	for (size_t i = 0; i <= len; i++) {
		up[i] = (s[i] >= 'a' && s[i] <= 'z') ? s[i] - ('a' - 'A') : s[i];
	}
	return k8s_rcode_parse_as(up, out, 1);
}
