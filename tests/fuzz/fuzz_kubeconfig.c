/*  Copyright (C) 2026 mod-k8s authors

    This program is free software: you can redistribute it and/or modify
    it under the terms of the GNU General Public License as published by
    the Free Software Foundation, either version 3 of the License, or
    (at your option) any later version.
 */

/*
 * The kubeconfig reader on any file (YAML or JSON): it loads settings or
 * fails with a reason, never more. The input is written to a file, read by
 * its path as knotd would; a loaded configuration must hold an
 * http(s) server URL and say where it came from.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libknot/errcode.h>

#include "api/kubeconfig.h"
#include "fz_check.h"

static char path[64];
static int fd = -1;

/*
 * The file lives in memory (memfd) and is read through /proc/self/fd: a file
 * on disk would cost more than the parsing, and nothing is left behind.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fd = memfd_create("kubeconfig", 0);
	CHECK(fd >= 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	CHECK(ftruncate(fd, 0) == 0);
	CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);

	k8s_apiconf_t conf;
	char err[256];
	memset(err, 'x', sizeof(err));
	int ret = k8s_kubeconfig_load(path, NULL, &conf, err, sizeof(err));
	CHECK(memchr(err, '\0', sizeof(err)) != NULL);
	if (ret == KNOT_EOK) {
		CHECK(conf.server != NULL);
		CHECK(strncasecmp(conf.server, "https://", 8) == 0 ||
		      strncasecmp(conf.server, "http://", 7) == 0);
		CHECK(conf.source != NULL);
		CHECK(conf.ca.len == 0 || conf.ca.data != NULL);
		CHECK(conf.cert.len == 0 || conf.cert.data != NULL);
		CHECK(conf.key.len == 0 || conf.key.data != NULL);
		k8s_apiconf_free(&conf);
	} else {
		CHECK(ret == KNOT_ENOENT || ret == KNOT_EMALF || ret == KNOT_EINVAL || ret == KNOT_ENOMEM);
		CHECK(conf.server == NULL && conf.token == NULL && conf.source == NULL);
	}
	return 0;
}
