/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*!
 * \file
 *
 * \brief Where the API server is and how to authenticate: kubeconfig or in-cluster.
 *
 * Only local files and the environment are read; nothing here touches the network,
 * so knotc conf-check can run it.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define K8S_SA_DIR_DEFAULT "/var/run/secrets/kubernetes.io/serviceaccount"

/*! \brief A larger kubeconfig is refused (real ones are a few KiB); enforced while reading. */
#define K8S_KUBECONFIG_MAX (4 * 1024 * 1024)

/*! \brief A PEM blob given inline (the kubeconfig *-data fields, base64-decoded). */
typedef struct {
	uint8_t *data;
	size_t len;
} k8s_blob_t;

/*! \brief Connection settings of one API server. Every pointer is owned. */
typedef struct {
	char *server;           /*!< Base URL, "https://host:port" without trailing slash. */
	char *tls_server_name;  /*!< Name to verify instead of the host, or NULL. */
	bool insecure;          /*!< insecure-skip-tls-verify: no verification at all. */
	char *ca_file;          /*!< CA bundle path, or NULL. */
	k8s_blob_t ca;          /*!< Inline CA bundle (certificate-authority-data). */
	char *cert_file;        /*!< Client certificate path, or NULL. */
	k8s_blob_t cert;        /*!< Inline client certificate. */
	char *key_file;         /*!< Client key path, or NULL. */
	k8s_blob_t key;         /*!< Inline client key. */
	char *token;            /*!< Static bearer token, or NULL. Never logged. */
	char *token_file;       /*!< Bearer token file, re-read while running, or NULL. */
	char *source;           /*!< Where this came from, for logs ("kubeconfig /x, context y" or "in-cluster"). */
} k8s_apiconf_t;

/*!
 * \brief Reads a kubeconfig file (YAML or JSON).
 *
 * Relative file references are relative to the kubeconfig's directory.
 * Exec and auth-provider plugins are rejected with a clear message, so are a
 * server URL with user information and a token with control characters (the
 * message names neither). A file over K8S_KUBECONFIG_MAX bytes is refused.
 *
 * \param path     Kubeconfig path.
 * \param context  Context to use, or NULL for current-context.
 * \param out      Out: the settings (free with k8s_apiconf_free()).
 * \param err      Out: lowercase reason on failure.
 * \param errlen   Size of \a err.
 *
 * \retval KNOT_EOK      on success.
 * \retval KNOT_ENOENT   file, context, cluster or user missing.
 * \retval KNOT_EMALF    not parseable.
 * \retval KNOT_EINVAL   a value is invalid (e.g. not https, bad base64).
 */
int k8s_kubeconfig_load(const char *path, const char *context, k8s_apiconf_t *out,
                        char *err, size_t errlen);

/*!
 * \brief In-cluster settings: KUBERNETES_SERVICE_HOST/PORT and the service account directory.
 *
 * \param sa_dir  Directory with token and ca.crt (K8S_SA_DIR_DEFAULT in a pod).
 *
 * \retval KNOT_EOK     on success.
 * \retval KNOT_ENOENT  not in a cluster (variables unset) or files missing.
 */
int k8s_incluster_load(const char *sa_dir, k8s_apiconf_t *out, char *err, size_t errlen);

/*!
 * \brief Whether a bearer token can go into a header: no control characters.
 *
 * libcurl sends a header as given, so a CR LF in a token would start headers of its own.
 */
bool k8s_token_valid(const char *token, size_t len);

/*! \brief Copies a server URL without trailing slashes. */
char *k8s_url_dup(const char *url);

/*! \brief Overwrites and frees memory that holds a secret (a token, a key); NULL is fine. */
void k8s_secret_free(void *data, size_t len);

/*! \brief Frees the settings' members (secrets overwritten first) and zeroes them. */
void k8s_apiconf_free(k8s_apiconf_t *conf);
