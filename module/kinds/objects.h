/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief Slim copies of Kubernetes API objects: only the fields DNS needs.
 *
 * The decoder turns the JSON of one API object (a LIST item or the object of
 * a watch event) into one of the structures below. Every decoded object is a
 * single allocation (structure, arrays and strings packed behind it), released
 * with k8s_object_free(). Strings are NUL-terminated, lowercase where the API
 * guarantees case-insensitive meaning (names, hostnames, port names), and
 * already validated as DNS labels where they become one.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "proto.h"

/*! \brief Resource kinds the watcher reads. */
typedef enum {
	K8S_SERVICE = 0,
	K8S_ENDPOINTSLICE,
	K8S_NAMESPACE,
	K8S_POD,
	K8S_SERVICEIMPORT,
	K8S_CLUSTERPROPERTY,
	K8S_NODE,
	K8S_KIND_COUNT
} k8s_kind_t;

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

/*! \brief Fields every object has. */
typedef struct {
	k8s_kind_t kind;
	bool digested;      /*!< \a digest is set; else k8s_object_digest_of() computes it. */
	const char *ns;     /*!< Namespace; "" for cluster-scoped kinds. */
	const char *name;   /*!< Object name. */
	uint64_t digest;    /*!< Hash of the DNS-relevant content: equal digest, equal records. */
} k8s_object_t;

typedef enum {
	K8S_SVC_CLUSTERIP = 0,  /*!< ClusterIP, NodePort or LoadBalancer with a cluster IP. */
	K8S_SVC_HEADLESS,       /*!< clusterIP "None". */
	K8S_SVC_EXTERNALNAME,   /*!< type ExternalName. */
} k8s_svc_type_t;

/*! \brief Most load-balancer ingress IPs kept per Service (one per family in practice). */
#define K8S_INGRESS_MAX 2

/*! \brief core/v1 Service. */
typedef struct {
	k8s_object_t meta;
	uint8_t type;              /*!< k8s_svc_type_t. */
	bool publish_not_ready;    /*!< spec.publishNotReadyAddresses or the tolerate-unready annotation. */
	uint8_t ip_count;          /*!< Valid cluster IPs (spec.clusterIPs, else spec.clusterIP). */
	k8s_ip_t ips[2];
	uint8_t ingress_count;     /*!< status.loadBalancer.ingress[].ip, the first K8S_INGRESS_MAX. */
	k8s_ip_t ingress[2];       /*!< External addresses (Federated-DNS); hostname ingress is left out. */
	const char *external_name; /*!< Lowercase target without trailing dot, or NULL. */
	uint16_t port_count;
	const k8s_port_t *ports;
} k8s_service_t;

/*! \brief One address of an EndpointSlice endpoint (multi-address endpoints are flattened). */
typedef struct {
	k8s_ip_t ip;
	bool ready;                /*!< conditions.ready; absent means ready. */
	const char *hostname;      /*!< Valid DNS label or NULL. */
	const char *target;        /*!< targetRef.name of a Pod, valid label below 64 chars, or NULL. */
} k8s_endpoint_t;

/*! \brief discovery.k8s.io/v1 EndpointSlice (cluster-local or imported). */
typedef struct {
	k8s_object_t meta;
	const char *service;         /*!< Label kubernetes.io/service-name, or NULL. */
	const char *mcs_service;     /*!< Label multicluster.kubernetes.io/service-name, or NULL. */
	const char *source_cluster;  /*!< Label multicluster.kubernetes.io/source-cluster, or NULL. */
	uint8_t family;              /*!< AF_INET, AF_INET6, or 0 for FQDN and unknown types. */
	int64_t trigger_time_ns;     /*!< endpoints.kubernetes.io/last-change-trigger-time (Unix ns), 0 if absent. */
	uint32_t endpoint_count;
	const k8s_endpoint_t *endpoints;
	uint16_t port_count;
	const k8s_port_t *ports;     /*!< Target ports; port 0 means "all ports" and gets no SRV. */
	/*! The first targetRef name of a Pod that is a valid pod name (a DNS subdomain) but no
	 *  DNS label (over 63 bytes, or dotted), for a log line; NULL if none. Not in the digest. */
	const char *unlabelled_pod;
} k8s_slice_t;

/*! \brief core/v1 Namespace. */
typedef struct {
	k8s_object_t meta;
} k8s_namespace_t;

/*! \brief core/v1 Pod. */
typedef struct {
	k8s_object_t meta;
	bool live;                 /*!< Pending or Running and not being deleted. */
	bool host_network;         /*!< spec.hostNetwork: its IP is the node's. */
	uint8_t ip_count;          /*!< status.podIPs (else status.podIP). */
	k8s_ip_t ips[2];
} k8s_pod_t;

/*!
 * \brief multicluster.x-k8s.io ServiceImport (v1alpha1 or v1beta1).
 *
 * Its name is a DNS subdomain, as the API server checks a custom resource's; only
 * one that is a DNS label names records (store.c).
 */
typedef struct {
	k8s_object_t meta;
	bool headless;             /*!< spec.type Headless, else ClusterSetIP. */
	uint8_t ip_count;          /*!< spec.ips. */
	k8s_ip_t ips[2];
	uint16_t port_count;
	const k8s_port_t *ports;
	uint16_t cluster_count;    /*!< status.clusters: the clusters exporting the service. */
	const char *const *clusters; /*!< Their ids (one or two DNS labels, lowercase). */
} k8s_serviceimport_t;

/*! \brief about.k8s.io ClusterProperty. */
typedef struct {
	k8s_object_t meta;
	const char *value;         /*!< spec.value. */
} k8s_clusterproperty_t;

/*!
 * \brief core/v1 Node: its topology, for federation names.
 *
 * Zone and region come from topology.kubernetes.io/zone and /region, else from
 * the deprecated failure-domain.beta.kubernetes.io labels; a value that is no
 * DNS name (lowercased, dot-separated RFC 1123 labels) counts as absent.
 */
typedef struct {
	k8s_object_t meta;
	const char *zone;          /*!< Lowercase zone, or NULL. */
	const char *region;        /*!< Lowercase region, or NULL. */
} k8s_node_t;

/*!
 * \brief Decodes one API object.
 *
 * \param kind    Expected kind.
 * \param text    JSON text of the object (need not be NUL-terminated).
 * \param len     Its length.
 * \param obj     Out: the object (single allocation) on success.
 * \param err     Out: a lowercase reason on failure (may be NULL).
 * \param errlen  Size of \a err.
 *
 * \retval KNOT_EOK     decoded.
 * \retval KNOT_ESPACE  too many JSON values or objects (k8s_json_bounded(), jsonstrict.h): not parsed.
 * \retval KNOT_EMALF   not JSON, or not an object.
 * \retval KNOT_EINVAL  a required field is missing or invalid (e.g. a name that is no DNS label).
 * \retval KNOT_ENOMEM  out of memory.
 */
int k8s_object_decode(k8s_kind_t kind, const char *text, size_t len,
                      k8s_object_t **obj, char *err, size_t errlen);

/*!
 * \brief The digest of a decoded object: FNV-1a (64-bit) over the fields that make records.
 *
 * Ports and endpoints are sets to DNS, so reordering them keeps the digest;
 * resourceVersion, annotations other than those used, and the trigger time
 * are left out.
 */
uint64_t k8s_object_digest(const k8s_object_t *obj);

/*!
 * \brief The object's digest, computed on first use and kept.
 *
 * The API's objects get it when decoded; a snapshot's are read without it, so that a
 * warm start answers sooner, and get it when the first LIST compares them.
 */
uint64_t k8s_object_digest_of(k8s_object_t *obj);

/*! \brief Frees a decoded object (NULL is fine). */
void k8s_object_free(k8s_object_t *obj);
