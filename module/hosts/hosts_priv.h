/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief Private to module/hosts/: what the text parser (hostsfile.c) hands the
 * builder (hosts.c).
 */

#pragma once

#include "hosts/hosts.h"

/*! \brief Why an entry was not added. */
typedef enum {
	K8S_HOSTS_ADDED = 0,
	K8S_HOSTS_OUTSIDE,    /*!< The name is in none of the zones. */
	K8S_HOSTS_FULL,       /*!< K8S_HOSTS_ENTRIES_MAX reached. */
	K8S_HOSTS_NOMEM,
} k8s_hosts_add_t;

/*!
 * \brief Adds one (name, address) entry after the others.
 *
 * \param name    Lowercase wire name (a valid one).
 * \param family  AF_INET or AF_INET6.
 * \param bytes   4 or 16 bytes.
 */
k8s_hosts_add_t k8s_hosts_add(k8s_hosts_builder_t *b, const knot_dname_t *name, int family,
                              const uint8_t *bytes);

/*! \brief Counts a line read and the fields skipped on it (the builder's stats). */
void k8s_hosts_count_line(k8s_hosts_builder_t *b, bool entry, size_t skipped);
