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
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include "answer/answer.h"
#include "answer/fedname.h"
#include "federation/fedfwd.h"
#include "store/snapfile.h"
#include "upstream/upstream.h"

struct k8s_fedfwd {
	k8s_fedstub_set_t *current;    /*!< What readers see (RCU). */
	k8s_upstream_t *fwd;
	uint8_t source[64];            /*!< Source-cluster label. */
	k8s_log_t log;

	/* Writers, under the lock. */
	pthread_mutex_t lock;
	k8s_fedstub_set_t *configured; /*!< federation-nameservers. */
	k8s_fedstub_set_t *programmed; /*!< Programmed at run time, persisted. */
	char *state_path;
};

static const uint8_t zone_wire[K8S_FEDFWD_ZONE_SIZE] = K8S_FEDFWD_ZONE;

/*! \brief The federation label of a name below svc.federation. (NULL at the apex or outside). */
static const uint8_t *fed_label(const knot_dname_t *name)
{
	int depth = knot_dname_in_bailiwick(name, zone_wire);
	if (depth <= 0) {
		return NULL;
	}
	// The label right above the zone: skip depth - 1 labels.
	const uint8_t *label = name;
	for (int i = 1; i < depth; i++) {
		label += 1 + label[0];
	}
	return label;
}

const k8s_fedstub_set_t *k8s_fedfwd_set(const k8s_fedfwd_t *f)
{
	return rcu_dereference(f->current);
}

/*! \brief The forwarder's server for a name: the federation's nameservers in turn. */
static bool servers(void *ctx, const knot_dname_t *name, unsigned attempt,
                    struct sockaddr_storage *server)
{
	const k8s_fedfwd_t *f = ctx;
	const uint8_t *label = fed_label(name);
	if (label == NULL) {
		return false;
	}
	urcu_memb_read_lock();
	const k8s_fedstub_t *fed = k8s_fedstub_find(k8s_fedfwd_set(f), label);
	bool found = fed != NULL && fed->count > 0;
	if (found) {
		*server = fed->ns[attempt % fed->count];
	}
	urcu_memb_read_unlock();
	return found;
}

/*! \brief Reads the persisted file: a missing one is no error, a bad one is logged. */
static k8s_fedstub_set_t *state_load(k8s_fedfwd_t *f)
{
	if (f->state_path == NULL) {
		return NULL;
	}
	int fd = open(f->state_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		if (errno != ENOENT) {
			k8s_logf(&f->log, LOG_WARNING, "federations, ignoring %s (%s)",
			         f->state_path, strerror(errno));
		}
		return NULL;
	}
	struct stat st;
	char *data = NULL;
	const char *why = NULL;
	char owner[96];
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		why = "not a regular file";
	} else if (!k8s_snapfile_owned(&st, owner, sizeof(owner))) {
		why = owner;  // Read as knotd's own writing: no one else may have written it.
	} else if (st.st_size > K8S_FEDSTUB_MAX_FILE) {
		why = "too large";
	} else if ((data = malloc(st.st_size + 1)) == NULL) {
		why = "no memory";
	} else {
		size_t done = 0;
		while (done < (size_t)st.st_size) {
			ssize_t n = read(fd, data + done, st.st_size - done);
			if (n <= 0) {
				why = "read failed";
				break;
			}
			done += n;
		}
	}
	close(fd);
	k8s_fedstub_set_t *set = NULL;
	char err[256] = "";
	if (why == NULL && k8s_fedstub_file_parse(data, st.st_size, &set, err, sizeof(err)) != KNOT_EOK) {
		why = err;
	}
	free(data);
	if (why != NULL) {
		k8s_logf(&f->log, LOG_WARNING, "federations, ignoring %s (%s)", f->state_path, why);
		return NULL;
	}
	k8s_logf(&f->log, LOG_INFO, "federations, loaded %zu programmed from %s",
	         set->count, f->state_path);
	return set;
}

/*! \brief Writes the programmed federations aside, flushed, then renamed over the file. */
static int state_save(k8s_fedfwd_t *f, const k8s_fedstub_set_t *set)
{
	if (f->state_path == NULL) {
		return KNOT_EOK;
	}
	char *text = k8s_fedstub_file_format(set);
	if (text == NULL) {
		return KNOT_ENOMEM;
	}
	size_t len = strlen(text);
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", f->state_path) >= (int)sizeof(tmp)) {
		free(text);
		return KNOT_ERANGE;
	}
	int ret = KNOT_EOK;
	int fd = k8s_snapfile_create(tmp, 0600);
	if (fd < 0) {
		ret = fd;
	}
	for (size_t done = 0; ret == KNOT_EOK && done < len; ) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0) {
			ret = knot_map_errno();
		} else {
			done += n;
		}
	}
	if (ret == KNOT_EOK && fsync(fd) != 0) {
		ret = knot_map_errno();
	}
	if (fd >= 0 && close(fd) != 0 && ret == KNOT_EOK) {
		ret = knot_map_errno();
	}
	if (ret == KNOT_EOK && rename(tmp, f->state_path) != 0) {
		ret = knot_map_errno();
	}
	// The rename itself survives a crash once the directory is flushed.
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", f->state_path);
	char *slash = strrchr(dir, '/');
	if (ret == KNOT_EOK && slash != NULL) {
		*(slash == dir ? slash + 1 : slash) = '\0';
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			(void)fsync(dfd);
			close(dfd);
		}
	}
	if (ret != KNOT_EOK && fd >= 0) {
		unlink(tmp);
	}
	free(text);
	return ret;
}

k8s_fedfwd_t *k8s_fedfwd_new(const uint8_t *source, k8s_fedstub_set_t *configured,
                             const char *state_path, const k8s_log_t *log)
{
	k8s_fedfwd_t *f = calloc(1, sizeof(*f));
	if (f == NULL) {
		free(configured);
		return NULL;
	}
	memcpy(f->source, source, 1 + source[0]);
	if (log != NULL) {
		f->log = *log;
	}
	f->configured = configured;
	pthread_mutex_init(&f->lock, NULL);
	if (state_path != NULL && (f->state_path = strdup(state_path)) == NULL) {
		k8s_fedfwd_free(f);
		return NULL;
	}
	f->programmed = state_load(f);
	f->current = k8s_fedstub_merge(f->programmed, f->configured);
	if (f->current == NULL) {
		k8s_fedfwd_free(f);
		return NULL;
	}
	f->fwd = k8s_upstream_new_forwarder(servers, f, K8S_EDNS_SOURCE_CLUSTER,
	                                    K8S_FEDFWD_TIMEOUT_MS, log);
	if (f->fwd == NULL) {
		k8s_fedfwd_free(f);
		return NULL;
	}
	return f;
}

void k8s_fedfwd_free(k8s_fedfwd_t *f)
{
	if (f == NULL) {
		return;
	}
	k8s_upstream_free(f->fwd);
	free(f->current);
	free(f->configured);
	free(f->programmed);
	free(f->state_path);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

int k8s_fedfwd_program(k8s_fedfwd_t *f, const uint8_t *name, const k8s_fedstub_t *fed)
{
	pthread_mutex_lock(&f->lock);
	k8s_fedstub_set_t *programmed = NULL;
	int ret = KNOT_EOK;
	if (fed != NULL) {
		size_t count = (f->programmed != NULL) ? f->programmed->count : 0;
		if (k8s_fedstub_find(f->programmed, name) == NULL && count >= K8S_FEDSTUB_MAX_FEDS) {
			ret = KNOT_ELIMIT;
		} else {
			k8s_fedstub_t named = *fed;
			memcpy(named.name, name, 1 + name[0]);
			programmed = k8s_fedstub_put(f->programmed, &named);
		}
	} else if (k8s_fedstub_find(f->programmed, name) == NULL) {
		ret = KNOT_ENOENT;
	} else {
		programmed = k8s_fedstub_del(f->programmed, name);
	}
	k8s_fedstub_set_t *current = NULL;
	if (ret == KNOT_EOK) {
		current = (programmed != NULL) ? k8s_fedstub_merge(programmed, f->configured) : NULL;
		ret = (current != NULL) ? state_save(f, programmed) : KNOT_ENOMEM;
	}
	if (ret != KNOT_EOK) {
		pthread_mutex_unlock(&f->lock);
		free(programmed);
		free(current);
		return ret;
	}
	free(f->programmed);
	f->programmed = programmed;
	k8s_fedstub_set_t *old = rcu_xchg_pointer(&f->current, current);
	pthread_mutex_unlock(&f->lock);

	urcu_memb_synchronize_rcu();
	free(old);
	k8s_upstream_refresh(f->fwd);
	return KNOT_EOK;
}

const k8s_fedstub_t *k8s_fedfwd_stub(const k8s_fedfwd_t *f, const knot_dname_t *qname,
                                     bool *apex)
{
	const uint8_t *label = fed_label(qname);
	*apex = (label == NULL);
	return (label != NULL) ? k8s_fedstub_find(k8s_fedfwd_set(f), label) : NULL;
}

k8s_upstream_status_t k8s_fedfwd_lookup(const k8s_fedfwd_t *f, const knot_dname_t *qname,
                                        uint16_t qtype, const k8s_upstream_answer_t **ans)
{
	k8s_upstream_status_t status = k8s_upstream_lookup_source(f->fwd, qname, qtype, f->source,
	                                                          ans);
	if (status != K8S_UPSTREAM_READY) {
		// Busy slots: the client's retry asks again.
		(void)k8s_upstream_ask_source(f->fwd, qname, f->source);
	}
	return status;
}

k8s_answer_t k8s_fedfwd_answer(const k8s_fedfwd_t *f, const knot_dname_t *qname,
                               uint16_t qtype, knot_pkt_t *pkt)
{
	bool apex;
	if (k8s_fedfwd_stub(f, qname, &apex) == NULL) {
		// The apex: the zone file's records. No stub zone: not ours to answer, nor to deny.
		return apex ? K8S_ANSWER_PASS : K8S_ANSWER_REFUSED;
	}
	if (qtype != KNOT_RRTYPE_A && qtype != KNOT_RRTYPE_AAAA) {
		return K8S_ANSWER_NODATA;
	}
	const k8s_upstream_answer_t *ans;
	if (k8s_fedfwd_lookup(f, qname, qtype, &ans) != K8S_UPSTREAM_READY) {
		k8s_answer_cold_note();
		return K8S_ANSWER_SERVFAIL;
	}
	if (k8s_upstream_failed(ans)) {
		return K8S_ANSWER_SERVFAIL;  // The stub zone's servers failed: answered at once.
	}
	// A denial is this zone's: knotd adds its SOA, so caches in front can keep it.
	if (ans->count == 0) {
		return (ans->rcode == KNOT_RCODE_NXDOMAIN) ? K8S_ANSWER_NXDOMAIN : K8S_ANSWER_NODATA;
	}
	return k8s_answer_relay(pkt, qtype, ans);
}
