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
#include "lib/sockaddr.h"
#include "forward/keeper.h"
#include "resolver/upstream.h"

/*!
 * \brief What readers see: the federations and each one's resolver (the forwarder core
 * with its nameservers as default servers, keeper.h), in the set's order; a resolver is
 * NULL when it could not start (its names are cold until their deadline).
 */
typedef struct {
	k8s_fedstub_set_t *set;
	k8s_keeper_t *keepers[];
} view_t;

struct k8s_fedfwd {
	view_t *current;               /*!< What readers see (RCU). */
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
	return rcu_dereference(f->current)->set;
}

static bool same_servers(const k8s_fedstub_t *a, const k8s_fedstub_t *b)
{
	if (a->count != b->count) {
		return false;
	}
	for (size_t i = 0; i < a->count; i++) {
		if (!k8s_sockaddr_equal(&a->ns[i], &b->ns[i])) {
			return false;
		}
	}
	return true;
}

/*!
 * \brief The view of \a set (taken): a federation whose nameservers did not change keeps
 * its resolver from \a old (with its kept names; marked in \a taken, old's count of
 * flags), the others get one started. NULL on no memory (\a set freed).
 */
static view_t *view_new(k8s_fedfwd_t *f, k8s_fedstub_set_t *set, const view_t *old,
                        bool *taken)
{
	view_t *v = calloc(1, sizeof(*v) + set->count * sizeof(v->keepers[0]));
	if (v == NULL) {
		free(set);
		return NULL;
	}
	v->set = set;
	for (size_t i = 0; i < set->count; i++) {
		const k8s_fedstub_t *fed = &set->feds[i];
		for (size_t j = 0; old != NULL && j < old->set->count; j++) {
			const k8s_fedstub_t *was = &old->set->feds[j];
			if (!taken[j] && old->keepers[j] != NULL && was->name[0] == fed->name[0] &&
			    memcmp(was->name + 1, fed->name + 1, fed->name[0]) == 0 &&
			    same_servers(was, fed)) {
				v->keepers[i] = old->keepers[j];
				taken[j] = true;
				break;
			}
		}
		if (v->keepers[i] == NULL) {
			v->keepers[i] = k8s_keeper_new(fed->ns, fed->count, K8S_EDNS_SOURCE_CLUSTER,
			                               K8S_FEDFWD_TIMEOUT_MS, "federation", &f->log);
		}
		if (v->keepers[i] == NULL) {
			k8s_logf(&f->log, LOG_ERR, "federations, no resolver for %.*s (no memory or "
			         "thread), its names fail", (int)fed->name[0], fed->name + 1);
		}
	}
	return v;
}

/*! \brief Frees a view no reader sees, and its resolvers but those \a taken (or NULL). */
static void view_free(view_t *v, const bool *taken)
{
	if (v == NULL) {
		return;
	}
	for (size_t i = 0; i < v->set->count; i++) {
		if (taken == NULL || !taken[i]) {
			k8s_keeper_free(v->keepers[i]);
		}
	}
	free(v->set);
	free(v);
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
	int fd = k8s_snapfile_create(AT_FDCWD, tmp, 0600);
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
	k8s_fedstub_set_t *set = k8s_fedstub_merge(f->programmed, f->configured);
	f->current = (set != NULL) ? view_new(f, set, NULL, NULL) : NULL;
	if (f->current == NULL) {
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
	view_free(f->current, NULL);
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
	// A resolver kept goes on in the new view; the old one still shows it to readers.
	bool *taken = calloc(f->current->set->count + 1, sizeof(*taken));
	view_t *view = (taken != NULL) ? view_new(f, current, f->current, taken) : NULL;
	if (view == NULL) {
		pthread_mutex_unlock(&f->lock);
		if (taken == NULL) {
			free(current);
		}
		free(taken);
		free(programmed);
		return KNOT_ENOMEM;
	}
	free(f->programmed);
	f->programmed = programmed;
	view_t *old = rcu_xchg_pointer(&f->current, view);
	pthread_mutex_unlock(&f->lock);

	// A federation whose nameservers changed has a new resolver: its names are asked
	// anew by the next queries (cold once), none keeps the old servers' answer.
	urcu_memb_synchronize_rcu();
	view_free(old, taken);
	free(taken);
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
                                        uint16_t qtype, const struct sockaddr_storage *remote,
                                        const k8s_fwd_entry_t **ans)
{
	const uint8_t *label = fed_label(qname);
	const view_t *v = rcu_dereference(f->current);
	const k8s_keeper_t *k = NULL;
	for (size_t i = 0; label != NULL && i < v->set->count; i++) {
		const uint8_t *name = v->set->feds[i].name;
		if (name[0] == label[0] && memcmp(name + 1, label + 1, label[0]) == 0) {
			k = v->keepers[i];
			break;
		}
	}
	if (k == NULL) {
		return K8S_UPSTREAM_PENDING;  // No such federation, or its resolver did not start.
	}
	k8s_upstream_status_t status = k8s_keeper_lookup_source(k, qname, qtype, f->source, ans);
	if (status != K8S_UPSTREAM_READY) {
		// Busy slots: the client's retry asks again.
		(void)k8s_keeper_ask_source(k, qname, f->source, k8s_tenant_addr(remote));
	}
	return status;
}

k8s_answer_t k8s_fedfwd_answer(const k8s_fedfwd_t *f, const knot_dname_t *qname,
                               uint16_t qtype, const struct sockaddr_storage *remote,
                               knot_pkt_t *pkt)
{
	bool apex;
	if (k8s_fedfwd_stub(f, qname, &apex) == NULL) {
		// The apex: the zone file's records. No stub zone: not ours to answer, nor to deny.
		return apex ? K8S_ANSWER_PASS : K8S_ANSWER_REFUSED;
	}
	if (qtype != KNOT_RRTYPE_A && qtype != KNOT_RRTYPE_AAAA) {
		return K8S_ANSWER_NODATA;
	}
	const k8s_fwd_entry_t *ans;
	if (k8s_fedfwd_lookup(f, qname, qtype, remote, &ans) != K8S_UPSTREAM_READY) {
		k8s_answer_cold_note();
		return K8S_ANSWER_SERVFAIL;
	}
	if (k8s_upstream_unreachable(ans)) {
		return K8S_ANSWER_UNREACHABLE;  // Silent nameservers: at once, until the retry.
	}
	if (k8s_upstream_failed(ans)) {
		return K8S_ANSWER_SERVFAIL;  // The stub zone's servers failed: answered at once.
	}
	// A denial is this zone's: knotd adds its SOA, so caches in front can keep it.
	if (k8s_upstream_empty(ans)) {
		return (k8s_upstream_rcode(ans) == KNOT_RCODE_NXDOMAIN) ? K8S_ANSWER_NXDOMAIN :
		                                                          K8S_ANSWER_NODATA;
	}
	return k8s_answer_relay(pkt, qtype, ans);
}
