/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief What every slim object has: its kind, its name, the types its fields share.
 *
 * Each kind's own structure is in its kind_*.h, beside the kind_*.c that decodes,
 * digests, writes and reads it; objects.h gathers them.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "kinds/proto.h"

/*!
 * \brief The resource kinds the watcher reads, the one list of them: X(ENUM, file) for
 * each, in the enum's order (a snapshot's numbers: append, never reorder). A kind has
 * its kinds/kind_<file>.c and .h and its row k8s_kind_<file> (kind_priv.h); the enum,
 * the rows' declarations and the kind table (kind.c) expand this list.
 */
#define K8S_KINDS(X) \
	X(K8S_SERVICE,         service) \
	X(K8S_ENDPOINTSLICE,   endpointslice) \
	X(K8S_NAMESPACE,       namespace) \
	X(K8S_POD,             pod) \
	X(K8S_SERVICEIMPORT,   serviceimport) \
	X(K8S_CLUSTERPROPERTY, clusterproperty) \
	X(K8S_NODE,            node) \
	X(K8S_CONFIGMAP,       configmap)

#define K8S_KIND_ENUM(kind, file) kind,
typedef enum {
	K8S_KINDS(K8S_KIND_ENUM)
	K8S_KIND_COUNT
} k8s_kind_t;
#undef K8S_KIND_ENUM

/*! \brief Lowercase plural name of a kind, as in API paths ("services"). */
const char *k8s_kind_name(k8s_kind_t kind);

/*! \brief Whether objects of a kind live in a namespace (else their ns is ""). */
bool k8s_kind_namespaced(k8s_kind_t kind);

/*!
 * \brief Whether a kind's name is a DNS label (Service, Namespace), else a DNS subdomain.
 *
 * The API server's rule for the kind's metadata.name, which the decoder and the
 * snapshot reader apply: a subdomain may be 253 bytes long, with labels of any length.
 */
bool k8s_kind_name_is_label(k8s_kind_t kind);

/*! \brief An IP address; family is AF_INET (first 4 bytes used) or AF_INET6. */
typedef struct {
	uint8_t family;
	uint8_t bytes[16];
} k8s_ip_t;

/*! \brief A service, slice or import port. */
typedef struct {
	const char *name;   /*!< Port name (DNS label), NULL when unnamed. */
	uint16_t port;      /*!< Port number; 0 when the API left it unset. */
	uint8_t proto;      /*!< k8s_proto_t; TCP when unset. */
} k8s_port_t;

/*!
 * \brief Fields every object has: the first member (`meta`) of each kind's structure in
 * its kind_*.h, so that a k8s_object_t * of that kind points to the whole object.
 */
typedef struct {
	k8s_kind_t kind;
	bool digested;      /*!< \a digest is set; else k8s_object_digest_of() computes it. */
	const char *ns;     /*!< Namespace; "" for cluster-scoped kinds. */
	const char *name;   /*!< Object name. */
	uint64_t digest;    /*!< Hash of the DNS-relevant content: equal digest, equal records. */
} k8s_object_t;
