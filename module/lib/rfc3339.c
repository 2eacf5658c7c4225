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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/rfc3339.h"

/*! Reads exactly \a n digits. */
static bool digits(const char **s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*s)[i];
		if (c < '0' || c > '9') {
			return false;
		}
		v = v * 10 + (c - '0');
	}
	*s += n;
	*out = v;
	return true;
}

static bool expect(const char **s, char c)
{
	if (**s != c) {
		return false;
	}
	(*s)++;
	return true;
}

static bool leap_year(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/*! Days since 1970-01-01 of a civil date (H. Hinnant's algorithm). */
static int64_t days_from_civil(int y, int m, int d)
{
	y -= (m <= 2);
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int64_t k8s_rfc3339_parse(const char *text)
{
	static const int MDAYS[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	if (text == NULL) {
		return 0;
	}
	const char *s = text;
	int year, mon, day, hour, min, sec;
	if (!digits(&s, 4, &year) || !expect(&s, '-') || !digits(&s, 2, &mon) ||
	    !expect(&s, '-') || !digits(&s, 2, &day)) {
		return 0;
	}
	if ((!expect(&s, 'T') && !expect(&s, 't')) || !digits(&s, 2, &hour) ||
	    !expect(&s, ':') || !digits(&s, 2, &min) || !expect(&s, ':') ||
	    !digits(&s, 2, &sec)) {
		return 0;
	}
	if (year < 1970 || year > 2261 || mon < 1 || mon > 12 || day < 1 ||
	    day > MDAYS[mon - 1] + (mon == 2 && leap_year(year)) ||
	    hour > 23 || min > 59 || sec > 59) {
		return 0;
	}

	int64_t frac_ns = 0;
	if (*s == '.') {
		s++;
		int n = 0;
		while (*s >= '0' && *s <= '9') {
			if (n == 9) {
				return 0; // finer than a nanosecond
			}
			frac_ns = frac_ns * 10 + (*s - '0');
			n++;
			s++;
		}
		if (n == 0) {
			return 0;
		}
		for (; n < 9; n++) {
			frac_ns *= 10;
		}
	}

	int64_t offset_s = 0;
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		int sign = (*s == '-') ? -1 : 1;
		int oh, om;
		s++;
		if (!digits(&s, 2, &oh) || !expect(&s, ':') || !digits(&s, 2, &om) ||
		    oh > 23 || om > 59) {
			return 0;
		}
		offset_s = sign * (oh * 3600 + om * 60);
	} else {
		return 0;
	}
	if (*s != '\0') {
		return 0;
	}

	int64_t secs = days_from_civil(year, mon, day) * 86400 + hour * 3600 + min * 60 + sec -
	               offset_s;
	if (secs <= 0 || secs > INT64_MAX / 1000000000 - 1) {
		return 0;
	}
	return secs * 1000000000 + frac_ns;
}
