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
 * \brief kube-dns's ConfigMap (`kube-system/kube-dns`), as kube-dns reads it where it is
 * mounted (`/kube-dns-config`): the files `upstreamNameservers` (a JSON list of
 * addresses) and `stubDomains` (a JSON object, domain to a list of addresses), each
 * address `IP` or `IP:port` (`[IPv6]:port`). Read, checked and merged into the forward
 * options as kube-dns does: upstreamNameservers replaces the default servers (those from
 * resolv.conf), stubDomains adds per-domain servers (a ConfigMap domain replaces a
 * forward-stub of the same name). No knotd calls: the unit tests and the fuzzer link it.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "resolver/forward.h"

/*! \brief Largest file read (bytes): a larger one is refused whole. */
#define K8S_KUBEDNS_FILE_MAX 65536
/*! \brief upstreamNameservers: at most 3, as kube-dns validates. */
#define K8S_KUBEDNS_UPSTREAMS_MAX 3

/*! \brief What the ConfigMap says: absent keys change nothing. */
typedef struct {
	bool has_upstreams;          /*!< upstreamNameservers given and not empty. */
	k8s_fwd_group_t upstreams;   /*!< zone NULL. */
	k8s_fwd_group_t *stubs;      /*!< Lowercase zones. */
	size_t stub_count;
} k8s_kubedns_t;

/*! \brief Frees what \a cm holds (not itself). */
void k8s_kubedns_deinit(k8s_kubedns_t *cm);

/*! \brief The ConfigMap's files (its keys). */
typedef enum {
	K8S_KUBEDNS_UPSTREAMS = 0,  /*!< upstreamNameservers */
	K8S_KUBEDNS_STUBS,          /*!< stubDomains */
	K8S_KUBEDNS_FILES
} k8s_kubedns_file_t;

/*!
 * \brief Parses the JSON of \a file (\a len bytes, no terminator needed) into \a cm.
 *
 * \retval KNOT_EOK, KNOT_EINVAL (reason in \a msg), KNOT_ENOMEM
 */
int k8s_kubedns_parse(k8s_kubedns_t *cm, k8s_kubedns_file_t file, const char *text, size_t len,
                      char *msg, size_t msglen);

/*! \brief What tells a changed file (a ConfigMap update swaps the mount's symlink). */
typedef struct {
	struct {
		bool present;
		dev_t dev;
		ino_t ino;
		off_t size;
		struct timespec mtime;
	} file[K8S_KUBEDNS_FILES];
} k8s_kubedns_stamp_t;

/*! \brief Stats the two files of \a dir (following symlinks) into \a stamp. */
void k8s_kubedns_stamp(const char *dir, k8s_kubedns_stamp_t *stamp);

/*! \brief Whether the files changed between two stamps. */
bool k8s_kubedns_stamp_equal(const k8s_kubedns_stamp_t *a, const k8s_kubedns_stamp_t *b);

/*!
 * \brief Reads and parses the files of \a dir (a missing file or directory: that key
 * absent, as a ConfigMap without it).
 *
 * \retval KNOT_EOK, KNOT_EINVAL (reason, with the file, in \a msg), KNOT_ENOMEM
 */
int k8s_kubedns_read(const char *dir, k8s_kubedns_t *cm, char *msg, size_t msglen);

/*!
 * \brief The forward settings \a base (from the options) with the ConfigMap \a cm
 * applied, into \a out (to free with k8s_fwd_conf_deinit()).
 *
 * \retval KNOT_EOK, KNOT_EINVAL (over the caps; reason in \a msg), KNOT_ENOMEM
 */
int k8s_kubedns_merge(const k8s_fwd_conf_t *base, const k8s_kubedns_t *cm,
                      k8s_fwd_conf_t *out, char *msg, size_t msglen);
