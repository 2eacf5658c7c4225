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

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <libknot/errcode.h>
#include <libknot/error.h>

#include "store/snapfile.h"

static const char MAGIC[8] = MOD_K8S_SNAP_MAGIC;   // With its NUL: 8 bytes.
#define FIXED_LEN (8 + 4 + 4 + 8 + 8)     // magic, version, sources, settings hash, created.

/* --- the directory and its key ------------------------------------------------------- */

/*!
 * \brief True if \a st is knotd's own and has none of the bits \a others, else \a why says
 * why not (a directory, its key, a file in it).
 */
static bool own_and_private(const struct stat *st, mode_t others, char *why, size_t why_len)
{
	if (st->st_uid != geteuid()) {
		snprintf(why, why_len, "owned by uid %lu, not by knotd's %lu",
		         (unsigned long)st->st_uid, (unsigned long)geteuid());
		return false;
	}
	if ((st->st_mode & others) != 0) {
		snprintf(why, why_len, "%s by group or others (mode %03o)",
		         (others & (S_IRGRP | S_IROTH)) ? "readable or writable" : "writable",
		         (unsigned)(st->st_mode & 07777));
		return false;
	}
	return true;
}

bool k8s_snapdir_owned(const k8s_snapdir_t *dir, char *why, size_t why_len)
{
	struct stat st;
	if (dir->fd < 0 || fstat(dir->fd, &st) != 0) {
		snprintf(why, why_len, "not open");
		return false;
	}
	// Whoever may write in it could put a snapshot of their own there, or remove ours.
	return own_and_private(&st, S_IWGRP | S_IWOTH, why, why_len);
}

/*! \brief Reads the key \a fd refers to, if it is knotd's own and private. */
static int key_read(int fd, uint8_t key[K8S_SNAP_KEY_LEN], char *why, size_t why_len)
{
	struct stat st;
	if (fstat(fd, &st) != 0) {
		return knot_map_errno();
	}
	char reason[96];
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, why_len, K8S_SNAP_KEY_FILE " is not a regular file");
		return KNOT_EMALF;
	}
	// Whoever may read it could key a snapshot of their own; whoever may write it, ours.
	if (!own_and_private(&st, S_IRWXG | S_IRWXO, reason, sizeof(reason))) {
		snprintf(why, why_len, K8S_SNAP_KEY_FILE " is %s", reason);
		return KNOT_EMALF;
	}
	if (st.st_size != K8S_SNAP_KEY_LEN ||
	    pread(fd, key, K8S_SNAP_KEY_LEN, 0) != K8S_SNAP_KEY_LEN) {
		snprintf(why, why_len, K8S_SNAP_KEY_FILE " is not %d bytes (remove it: a new key is "
		         "made, and snapshots of the old one are ignored)", K8S_SNAP_KEY_LEN);
		return KNOT_EMALF;
	}
	return KNOT_EOK;
}

/*!
 * \brief Makes a key: written whole under a name of this thread's, then linked to the
 * key's name, which fails if another thread or process made one first (then theirs is used).
 */
static int key_create(int dir_fd, char *why, size_t why_len)
{
	uint8_t key[K8S_SNAP_KEY_LEN];
	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key)) {
		snprintf(why, why_len, "no random bytes for " K8S_SNAP_KEY_FILE);
		return knot_map_errno();
	}
	char tmp[64];
	snprintf(tmp, sizeof(tmp), K8S_SNAP_KEY_FILE ".%ld.tmp", (long)gettid());
	int fd = k8s_snapfile_create(dir_fd, tmp, 0600);
	int ret = (fd >= 0) ? KNOT_EOK : fd;
	// Exactly 0600 whatever the umask (which only ever takes bits away).
	if (ret == KNOT_EOK && (fchmod(fd, 0600) != 0 ||
	                        write(fd, key, sizeof(key)) != (ssize_t)sizeof(key) || fsync(fd) != 0)) {
		ret = knot_map_errno();
	}
	if (fd >= 0 && close(fd) != 0 && ret == KNOT_EOK) {
		ret = knot_map_errno();
	}
	if (ret == KNOT_EOK && linkat(dir_fd, tmp, dir_fd, K8S_SNAP_KEY_FILE, 0) != 0 &&
	    errno != EEXIST) {
		ret = knot_map_errno();
	}
	(void)unlinkat(dir_fd, tmp, 0);
	memset(key, 0, sizeof(key));
	if (ret != KNOT_EOK) {
		snprintf(why, why_len, "cannot create " K8S_SNAP_KEY_FILE " (%s)", knot_strerror(ret));
	}
	return ret;
}

/*! \brief Reads the directory's key, made first if there is none. */
static int key_load(int dir_fd, uint8_t key[K8S_SNAP_KEY_LEN], char *why, size_t why_len)
{
	for (int tries = 0; tries < 2; tries++) {
		// Non-blocking: a FIFO planted at the name must not stall the watcher in open().
		int fd = openat(dir_fd, K8S_SNAP_KEY_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd >= 0) {
			int ret = key_read(fd, key, why, why_len);
			close(fd);
			return ret;
		} else if (errno == ELOOP) {
			snprintf(why, why_len, K8S_SNAP_KEY_FILE " is a symbolic link");
			return KNOT_EMALF;
		} else if (errno != ENOENT) {
			int ret = knot_map_errno();
			// One knotd may not even open (another user's, say) says why by its owner.
			char reason[96];
			struct stat st;
			if (fstatat(dir_fd, K8S_SNAP_KEY_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    !own_and_private(&st, S_IRWXG | S_IRWXO, reason, sizeof(reason))) {
				snprintf(why, why_len, K8S_SNAP_KEY_FILE " is %s", reason);
				return KNOT_EMALF;
			}
			snprintf(why, why_len, "cannot open " K8S_SNAP_KEY_FILE " (%s)", knot_strerror(ret));
			return ret;
		}
		int ret = key_create(dir_fd, why, why_len);
		if (ret != KNOT_EOK) {
			return ret;
		}
	}
	snprintf(why, why_len, K8S_SNAP_KEY_FILE " vanished as it was made");
	return KNOT_ENOENT;
}

int k8s_snapdir_open(k8s_snapdir_t *dir, const char *path, char *why, size_t why_len)
{
	memset(dir, 0, sizeof(*dir));
	dir->fd = -1;
	// mkdir() makes it with no one else's write bit or fails; it follows no link at the name.
	bool made = mkdir(path, 0700) == 0;
	if (!made && errno != EEXIST) {
		int ret = knot_map_errno();
		snprintf(why, why_len, "cannot create it (%s)", knot_strerror(ret));
		return ret;
	}
	// Looked at by name first, so that one knotd may not even open says why.
	struct stat st;
	if (lstat(path, &st) == 0 && (!S_ISDIR(st.st_mode) ||
	                              !own_and_private(&st, S_IWGRP | S_IWOTH, why, why_len))) {
		if (!S_ISDIR(st.st_mode)) {
			snprintf(why, why_len, "%s", S_ISLNK(st.st_mode) ? "a symbolic link"
			                                                 : "not a directory");
		}
		return KNOT_EMALF;
	}
	// Then by its descriptor, which every later step uses: what was checked is what is used.
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int ret = (errno == ELOOP || errno == ENOTDIR) ? KNOT_EMALF : knot_map_errno();
		snprintf(why, why_len, "%s", (errno == ELOOP || errno == ENOTDIR) ? "replaced as it "
		         "was opened" : knot_strerror(ret));
		return ret;
	}
	dir->fd = fd;
	int ret = KNOT_EOK;
	if (made && fchmod(fd, 0700) != 0) {  // Exactly 0700 whatever the umask.
		ret = knot_map_errno();
		snprintf(why, why_len, "cannot set its mode (%s)", knot_strerror(ret));
	} else if (!k8s_snapdir_owned(dir, why, why_len)) {
		ret = KNOT_EMALF;
	} else {
		ret = key_load(fd, dir->key, why, why_len);
	}
	if (ret != KNOT_EOK) {
		k8s_snapdir_close(dir);
	}
	return ret;
}

void k8s_snapdir_close(k8s_snapdir_t *dir)
{
	if (dir->fd >= 0) {
		close(dir->fd);
	}
	memset(dir, 0, sizeof(*dir));
	dir->fd = -1;
}

int k8s_snapfile_mac(const uint8_t key[K8S_SNAP_KEY_LEN], const void *data, size_t len,
                     uint8_t mac[K8S_SNAP_MAC_LEN])
{
	return gnutls_hmac_fast(GNUTLS_MAC_SHA256, key, K8S_SNAP_KEY_LEN, data, len, mac) == 0
	       ? KNOT_EOK : KNOT_ERROR;
}

/* --- the file ------------------------------------------------------------------------ */

/*! Writes all of \a len bytes, and folds them into the MAC. */
static int write_all(int fd, const void *data, size_t len, gnutls_hmac_hd_t mac)
{
	if (mac != NULL && gnutls_hmac(mac, data, len) != 0) {
		return KNOT_ERROR;
	}
	const char *p = data;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR) {
			continue;
		} else if (n <= 0) {
			return knot_map_errno();
		}
		p += n;
		len -= (size_t)n;
	}
	return KNOT_EOK;
}

int k8s_snapfile_create(int dir_fd, const char *path, mode_t mode)
{
	// A stale file of a crashed write, or a link someone planted: gone, not followed.
	if (unlinkat(dir_fd, path, 0) != 0 && errno != ENOENT) {
		return knot_map_errno();
	}
	// Exclusive: a name planted again in between fails the write instead of redirecting it.
	int fd = openat(dir_fd, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	return (fd >= 0) ? fd : knot_map_errno();
}

bool k8s_snapfile_owned(const struct stat *st, char *why, size_t why_len)
{
	return own_and_private(st, S_IWGRP | S_IWOTH, why, why_len);
}

int k8s_snapfile_write(const k8s_snapdir_t *dir, const char *name, const k8s_snaphdr_t *hdr,
                       const void *payload, size_t len)
{
	if (hdr->sources > K8S_SNAP_SOURCES_MAX || len > K8S_SNAP_MAX) {
		return KNOT_EINVAL;
	}
	unsigned char head[FIXED_LEN + 8 * K8S_SNAP_SOURCES_MAX + 8];
	memcpy(head, MAGIC, 8);
	k8s_snap_put_le(head + 8, K8S_SNAP_VERSION, 4);
	k8s_snap_put_le(head + 12, hdr->sources, 4);
	k8s_snap_put_le(head + 16, hdr->settings_hash, 8);
	k8s_snap_put_le(head + 24, (uint64_t)hdr->created_s, 8);
	size_t off = FIXED_LEN;
	for (uint32_t i = 0; i < hdr->sources; i++, off += 8) {
		k8s_snap_put_le(head + off, hdr->counts[i], 8);
	}
	k8s_snap_put_le(head + off, len, 8);
	off += 8;

	char tmp[1024];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= (int)sizeof(tmp)) {
		return KNOT_ERANGE;
	}
	gnutls_hmac_hd_t mac = NULL;
	if (gnutls_hmac_init(&mac, GNUTLS_MAC_SHA256, dir->key, K8S_SNAP_KEY_LEN) != 0) {
		return KNOT_ERROR;
	}
	int fd = k8s_snapfile_create(dir->fd, tmp, 0600);
	if (fd < 0) {
		gnutls_hmac_deinit(mac, NULL);
		return fd;
	}
	int ret = write_all(fd, head, off, mac);
	if (ret == KNOT_EOK) {
		ret = write_all(fd, payload, len, mac);
	}
	unsigned char trailer[K8S_SNAP_MAC_LEN];
	gnutls_hmac_deinit(mac, trailer);
	if (ret == KNOT_EOK) {
		ret = write_all(fd, trailer, sizeof(trailer), NULL);
	}
	// Flushed before the rename: after a crash the name holds the old file or the whole new one.
	if (ret == KNOT_EOK && fsync(fd) != 0) {
		ret = knot_map_errno();
	}
	if (close(fd) != 0 && ret == KNOT_EOK) {
		ret = knot_map_errno();
	}
	if (ret == KNOT_EOK && renameat(dir->fd, tmp, dir->fd, name) != 0) {
		ret = knot_map_errno();
	}
	if (ret != KNOT_EOK) {
		unlinkat(dir->fd, tmp, 0);
	}
	return ret;
}

static int refuse(char *why, size_t why_len, const char *reason)
{
	snprintf(why, why_len, "%s", reason);
	return KNOT_EMALF;
}

void k8s_snapfile_unmap(k8s_snapmap_t *map)
{
	if (map->map != NULL) {
		munmap(map->map, map->map_len);
	}
	memset(map, 0, sizeof(*map));
}

/*! \brief Compares two MACs in a time that does not depend on where they differ. */
static bool mac_equal(const uint8_t *a, const uint8_t *b)
{
	uint8_t diff = 0;
	for (size_t i = 0; i < K8S_SNAP_MAC_LEN; i++) {
		diff |= a[i] ^ b[i];
	}
	return diff == 0;
}

int k8s_snapfile_read(const k8s_snapdir_t *dir, const char *name, uint64_t settings_hash,
                      int64_t now_s, int64_t max_age_s, k8s_snaphdr_t *hdr, k8s_snapmap_t *map,
                      char *why, size_t why_len)
{
	memset(map, 0, sizeof(*map));
	snprintf(why, why_len, "no snapshot");
	// Non-blocking: a FIFO planted at the name must not stall the watcher in open().
	int fd = openat(dir->fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ELOOP) {
			return refuse(why, why_len, "a symbolic link");
		}
		return (errno == ENOENT) ? KNOT_ENOENT : knot_map_errno();
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int ret = knot_map_errno();
		close(fd);
		return ret;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)K8S_SNAP_MAX + 4096) {
		close(fd);
		return refuse(why, why_len, "not a regular file or too large");
	}
	// The payload is trusted as our own writing: only a file that only knotd could write.
	if (!k8s_snapfile_owned(&st, why, why_len)) {
		close(fd);
		return KNOT_EMALF;
	}
	size_t got = (size_t)st.st_size;
	if (got == 0) {
		close(fd);
		return refuse(why, why_len, "truncated");
	}
	/*
	 * Mapped with its pages in place: a page fault costs as much as reading 5 kB on a
	 * virtual machine, and reading the file into fresh memory faults every page of it.
	 * The file is only ever replaced by a rename, never changed in place; whoever could
	 * truncate it under us could as well do so to knotd's own mapped databases (timers,
	 * journal) in the same storage.
	 */
	unsigned char *data = mmap(NULL, got, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	int ret = (data == MAP_FAILED) ? knot_map_errno() : KNOT_EOK;
	close(fd);
	if (ret != KNOT_EOK) {
		return ret;
	}

	uint32_t sources = 0;
	uint64_t plen = 0;
	size_t off = FIXED_LEN;
	uint8_t mac[K8S_SNAP_MAC_LEN];
	if (got < 8 || memcmp(data, MAGIC, 8) != 0) {
		ret = refuse(why, why_len, (got < 8) ? "truncated" : "not a snapshot file");
		goto out;
	}
	if (got < FIXED_LEN) {
		ret = refuse(why, why_len, "truncated");
		goto out;
	}
	if (k8s_snap_get_le(data + 8, 4) != K8S_SNAP_VERSION) {
		snprintf(why, why_len, "version %u, expected %u", (unsigned)k8s_snap_get_le(data + 8, 4),
		         K8S_SNAP_VERSION);
		ret = KNOT_EMALF;
		goto out;
	}
	sources = (uint32_t)k8s_snap_get_le(data + 12, 4);
	if (sources > K8S_SNAP_SOURCES_MAX) {
		ret = refuse(why, why_len, "corrupt header");
		goto out;
	}
	if (got < off + 8 * (size_t)sources + 8) {
		ret = refuse(why, why_len, "truncated");
		goto out;
	}
	off += 8 * (size_t)sources;
	plen = k8s_snap_get_le(data + off, 8);
	off += 8;
	if (plen > got || got - off < plen + K8S_SNAP_MAC_LEN) {
		ret = refuse(why, why_len, (plen > K8S_SNAP_MAX) ? "corrupt header" : "truncated");
		goto out;
	}
	if (got - off != plen + K8S_SNAP_MAC_LEN) {
		ret = refuse(why, why_len, "trailing data");
		goto out;
	}
	if (k8s_snapfile_mac(dir->key, data, off + plen, mac) != KNOT_EOK) {
		ret = KNOT_ERROR;
		goto out;
	}
	if (!mac_equal(mac, data + off + plen)) {
		ret = refuse(why, why_len, "key check failed: corrupt, or not written with this "
		             "directory's " K8S_SNAP_KEY_FILE);
		goto out;
	}
	// Checked after the MAC: a corrupt file says so, not that it has other settings.
	if (k8s_snap_get_le(data + 16, 8) != settings_hash) {
		ret = refuse(why, why_len, "made with other watch settings");
		goto out;
	}
	// Both times non-negative, so no difference below can overflow.
	int64_t created = (int64_t)k8s_snap_get_le(data + 24, 8);
	if (now_s < 0) {
		now_s = 0;
	}
	if (created < 0) {
		ret = refuse(why, why_len, "negative creation time");
		goto out;
	}
	if (created > now_s && created - now_s > 60) {
		ret = refuse(why, why_len, "created in the future");
		goto out;
	}
	if (max_age_s > 0 && created < now_s && now_s - created > max_age_s) {
		snprintf(why, why_len, "%lld s old, older than snapshot-max-age",
		         (long long)(now_s - created));
		ret = KNOT_EMALF;
		goto out;
	}

	memset(hdr, 0, sizeof(*hdr));
	hdr->settings_hash = settings_hash;
	hdr->created_s = created;
	hdr->sources = sources;
	for (uint32_t i = 0; i < sources; i++) {
		hdr->counts[i] = k8s_snap_get_le(data + FIXED_LEN + 8 * i, 8);
	}
	map->map = data;
	map->map_len = got;
	map->payload = (const char *)data + off;
	map->len = plen;
	why[0] = '\0';
	return KNOT_EOK;
out:
	munmap(data, got);
	return ret;
}
