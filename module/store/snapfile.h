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
 * The snapshot file of the warm restart (issue 14): a versioned container, keyed
 * with a MAC, written aside and renamed, so a reader sees the old file or the new one,
 * never a torn one. The payload is opaque here.
 *
 * Layout (integers little-endian): magic "K8SSNAP\0", u32 version (3; 2 had an FNV-1a
 * checksum, 1 held JSON: both refused), u32 source count n, u64 settings hash, i64
 * creation time (Unix s), n x u64 object counts, u64 payload length, payload, then the
 * HMAC-SHA-256 of everything before it, keyed with the directory's key.
 *
 * The directory (k8s_snapdir_t) is the module's own, "mod-k8s" in the zone's storage:
 * created with mode 0700, refused unless it is a directory owned by knotd's effective
 * uid and writable by neither group nor others, and used through its descriptor, so a
 * name swapped in the storage afterwards is never followed. Its key, "snapshot.key",
 * 32 random bytes, is created with mode 0600 at the first use and refused unless it is
 * a regular file of knotd's effective uid that no one else may read or write.
 */

#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "kinds/form.h"
#include "lib/hash.h"
#include "mod-k8s/mod-k8s.h"

#define K8S_SNAP_VERSION      MOD_K8S_SNAP_VERSION
#define K8S_SNAP_SOURCES_MAX  32
/*! \brief The snapshots' directory in the zone's storage. */
#define K8S_SNAP_DIR          "mod-k8s"
/*! \brief The key's file in it. */
#define K8S_SNAP_KEY_FILE     "snapshot.key"
/*! \brief Bytes of the key, and of the MAC that ends a file (HMAC-SHA-256). */
#define K8S_SNAP_KEY_LEN      32
#define K8S_SNAP_MAC_LEN      32

typedef struct {
	uint64_t settings_hash;                  /*!< Hash of the watch settings the payload depends on. */
	int64_t created_s;                       /*!< Wall-clock creation time. */
	uint32_t sources;                        /*!< Entries used in counts. */
	uint64_t counts[K8S_SNAP_SOURCES_MAX];   /*!< Objects per source. */
} k8s_snaphdr_t;

/*! \brief The snapshots' directory, checked, and its key. */
typedef struct {
	int fd;                                  /*!< The directory (O_DIRECTORY); -1: none. */
	uint8_t key[K8S_SNAP_KEY_LEN];           /*!< The MAC's key. */
} k8s_snapdir_t;

/*!
 * \brief Opens the snapshots' directory \a path (creating it, mode 0700), checks it, and
 * reads its key (creating it, mode 0600, if there is none).
 *
 * \retval KNOT_EOK     \a dir is open (k8s_snapdir_close()).
 * \retval KNOT_EMALF   refused: the directory or the key is not knotd's own (\a why).
 * \retval KNOT_E*      another error (\a why says which step); \a dir->fd is -1 unless KNOT_EOK.
 */
int k8s_snapdir_open(k8s_snapdir_t *dir, const char *path, char *why, size_t why_len);

/*! \brief Closes \a dir and forgets its key (one never opened, fd -1, is fine). */
void k8s_snapdir_close(k8s_snapdir_t *dir);

/*!
 * \brief True if the open directory is still knotd's own (its owner or mode may have
 * changed since it was opened), else \a why says why not.
 */
bool k8s_snapdir_owned(const k8s_snapdir_t *dir, char *why, size_t why_len);

/*!
 * \brief Creates \a path for writing, as a new file of \a mode in knotd's storage.
 *
 * Whatever has the name (a stale temporary file, a planted symbolic or hard link) is
 * removed, and the file is created with O_EXCL | O_NOFOLLOW: nothing that anyone put at
 * the name is ever written through. Used for the snapshot and the federations file.
 *
 * \param dir_fd  The directory \a path is relative to, or AT_FDCWD.
 *
 * \return The descriptor, or a negative KNOT_E*.
 */
int k8s_snapfile_create(int dir_fd, const char *path, mode_t mode);

/*!
 * \brief True if a file in knotd's storage is knotd's own: owned by its effective uid
 * and writable by no one else; otherwise \a why says why not.
 *
 * Such files (the snapshot, the federations file) are read as written by us; one that
 * another user could have written is refused.
 */
bool k8s_snapfile_owned(const struct stat *st, char *why, size_t why_len);

/*!
 * \brief Writes the snapshot \a name in \a dir: into "<name>.tmp", keyed, flushed to disk,
 * then renamed.
 *
 * \retval KNOT_EOK     written.
 * \retval KNOT_EINVAL  too many sources or too large.
 * \retval KNOT_E*      the I/O error (the temporary file is removed).
 */
int k8s_snapfile_write(const k8s_snapdir_t *dir, const char *name, const k8s_snaphdr_t *hdr,
                       const void *payload, size_t len);

/*! \brief A snapshot file mapped read-only; its payload lies inside. */
typedef struct {
	void *map;             /*!< The mapping (NULL: none). */
	size_t map_len;
	const char *payload;   /*!< Checked payload, not NUL-terminated. */
	size_t len;
} k8s_snapmap_t;

/*! \brief Unmaps a file read by k8s_snapfile_read() (an empty one is fine). */
void k8s_snapfile_unmap(k8s_snapmap_t *map);

/*!
 * \brief Reads and checks the snapshot \a name in \a dir.
 *
 * A snapshot is refused if it is missing, a symbolic link, not a regular file,
 * owned by another user than knotd's effective one or writable by group or others,
 * truncated, not a snapshot, of another version, not keyed with the directory's key
 * (a MAC that does not verify: corrupt, or not written with this key), of other
 * settings, of a negative creation time, older than \a max_age_s (0: no limit) or more
 * than 60 s in the future; \a why then says which, for the log line.
 *
 * \param map  Out: the file, mapped, and its payload (k8s_snapfile_unmap()); empty unless
 *             KNOT_EOK.
 *
 * \retval KNOT_EOK     usable.
 * \retval KNOT_ENOENT  no snapshot.
 * \retval KNOT_EMALF   refused (see \a why).
 * \retval KNOT_E*      another error.
 */
int k8s_snapfile_read(const k8s_snapdir_t *dir, const char *name, uint64_t settings_hash,
                      int64_t now_s, int64_t max_age_s, k8s_snaphdr_t *hdr, k8s_snapmap_t *map,
                      char *why, size_t why_len);

/*!
 * \brief The MAC of \a len bytes under \a key (HMAC-SHA-256), into \a mac.
 *
 * \retval KNOT_EOK, KNOT_ERROR (the library failed)
 */
int k8s_snapfile_mac(const uint8_t key[K8S_SNAP_KEY_LEN], const void *data, size_t len,
                     uint8_t mac[K8S_SNAP_MAC_LEN]);
