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
#include <sys/stat.h>
#include <unistd.h>

#include <libknot/errcode.h>

#include "store/snapfile.h"

static const char MAGIC[8] = MOD_K8S_SNAP_MAGIC;   // With its NUL: 8 bytes.
#define FIXED_LEN (8 + 4 + 4 + 8 + 8)     // magic, version, sources, settings hash, created.

/*! Writes all of \a len bytes, and folds them into the checksum. */
static int write_all(int fd, const void *data, size_t len, uint64_t *sum)
{
	*sum = k8s_fnv64(data, len, *sum);
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

int k8s_snapfile_create(const char *path, mode_t mode)
{
	// A stale file of a crashed write, or a link someone planted: gone, not followed.
	if (unlink(path) != 0 && errno != ENOENT) {
		return knot_map_errno();
	}
	// Exclusive: a name planted again in between fails the write instead of redirecting it.
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	return (fd >= 0) ? fd : knot_map_errno();
}

bool k8s_snapfile_owned(const struct stat *st, char *why, size_t why_len)
{
	if (st->st_uid != geteuid()) {
		snprintf(why, why_len, "owned by uid %lu, not by knotd's %lu",
		         (unsigned long)st->st_uid, (unsigned long)geteuid());
		return false;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		snprintf(why, why_len, "writable by group or others (mode %03o)",
		         (unsigned)(st->st_mode & 0777));
		return false;
	}
	return true;
}

int k8s_snapfile_write(const char *path, const k8s_snaphdr_t *hdr,
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

	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		return KNOT_ERANGE;
	}
	int fd = k8s_snapfile_create(tmp, 0640);
	if (fd < 0) {
		return fd;
	}
	uint64_t sum = K8S_FNV64_INIT;
	int ret = write_all(fd, head, off, &sum);
	if (ret == KNOT_EOK) {
		ret = write_all(fd, payload, len, &sum);
	}
	if (ret == KNOT_EOK) {
		unsigned char trailer[8];
		k8s_snap_put_le(trailer, sum, 8);
		uint64_t ignored = 0;
		ret = write_all(fd, trailer, sizeof(trailer), &ignored);
	}
	// Flushed before the rename: after a crash the name holds the old file or the whole new one.
	if (ret == KNOT_EOK && fsync(fd) != 0) {
		ret = knot_map_errno();
	}
	if (close(fd) != 0 && ret == KNOT_EOK) {
		ret = knot_map_errno();
	}
	if (ret == KNOT_EOK && rename(tmp, path) != 0) {
		ret = knot_map_errno();
	}
	if (ret != KNOT_EOK) {
		unlink(tmp);
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

int k8s_snapfile_read(const char *path, uint64_t settings_hash, int64_t now_s,
                      int64_t max_age_s, k8s_snaphdr_t *hdr, k8s_snapmap_t *map,
                      char *why, size_t why_len)
{
	memset(map, 0, sizeof(*map));
	snprintf(why, why_len, "no snapshot");
	// Non-blocking: a FIFO planted at the name must not stall the watcher in open().
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
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
	if (plen > got || got - off < plen + 8) {
		ret = refuse(why, why_len, (plen > K8S_SNAP_MAX) ? "corrupt header" : "truncated");
		goto out;
	}
	if (got - off != plen + 8) {
		ret = refuse(why, why_len, "trailing data");
		goto out;
	}
	if (k8s_fnv64(data, off + plen, K8S_FNV64_INIT) != k8s_snap_get_le(data + off + plen, 8)) {
		ret = refuse(why, why_len, "checksum mismatch");
		goto out;
	}
	// Checked after the checksum: a corrupt file says so, not that it has other settings.
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
