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
 * \brief A parser's reason for refusing a value, written into the caller's buffer:
 * what the readers of module/rewrite/ (rules, templates, Go templates) share.
 */

#pragma once

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/*! \brief Where a refusal's reason goes. */
typedef struct {
	char *err;
	size_t err_len;
} k8s_perr_t;

/*! \brief Writes the reason; returns -1, the readers' refusal. */
__attribute__((format(printf, 2, 3)))
static inline int k8s_perr(k8s_perr_t *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->err, e->err_len, fmt, ap);
	va_end(ap);
	return -1;
}
