/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief The digest's helpers, private to module/kinds/: each kind's digest (its
 * kind_*.c) continues the hash of the fields every object has (k8s_digest_meta())
 * with those of its fields that make records; k8s_object_digest() (objects.h) is the
 * entry point.
 *
 * The digest is FNV-1a (64-bit) over the decoded fields that make records:
 * kind, namespace, name and each kind's DNS fields, strings with their length
 * (NULL distinct from ""), IPs with their family. Ports and endpoints are sets
 * to DNS, so each element is hashed alone (from K8S_DIGEST_INIT), spread
 * (k8s_digest_mix()), and the results summed: a reordered list keeps its digest.
 */

#pragma once

#include <stddef.h>
#include <stdint.h>

#include "kinds/kind.h"

#define K8S_DIGEST_INIT 0xcbf29ce484222325ULL

/*! \brief The hash of kind, namespace and name. */
uint64_t k8s_digest_meta(const k8s_object_t *obj);

uint64_t k8s_digest_u64(uint64_t h, uint64_t v);
/*! \brief A string with its length; NULL distinct from "". */
uint64_t k8s_digest_str(uint64_t h, const char *s);
uint64_t k8s_digest_ip(uint64_t h, const k8s_ip_t *ip);
/*! \brief A count and the IPs, in order (a Service's first IP is its primary). */
uint64_t k8s_digest_ips(uint64_t h, const k8s_ip_t *ips, uint8_t count);
/*! \brief Ports as a set. */
uint64_t k8s_digest_ports(uint64_t h, const k8s_port_t *ports, uint16_t count);
/*! \brief Spreads an element hash over all bits before it is summed (splitmix64 finaliser). */
uint64_t k8s_digest_mix(uint64_t h);
