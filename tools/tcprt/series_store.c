// SPDX-License-Identifier: GPL-2.0
/* Series runs on local disk: one gzip file a run, bounded in age and bytes. */
#include "series_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util.h"

bool stored_run_parse(const char *name, struct stored_run *r)
{
	unsigned long long start, usec = 0, width, buckets;
	int a = 0, b = 0, end = 0;

	if (strlen(name) >= sizeof(r->name) ||
	    sscanf(name, "series-%llu%n", &start, &a) != 1)
		return false;
	if (name[a] == '.') {
		for (b = 1; b <= 6; b++)
			if (name[a + b] < '0' || name[a + b] > '9')
				return false;
		usec = strtoull(name + a + 1, NULL, 10);
		a += 7;
	}
	if (sscanf(name + a, "-%llux%llu.gz%n", &width, &buckets, &end) != 2 ||
	    name[a + end] != '\0' || !width || !buckets || buckets > 10000 ||
	    width > 10000 || start > UINT64_MAX / USEC_PER_SEC - 1)
		return false;
	memset(r, 0, sizeof(*r));
	strcpy(r->name, name);
	r->start = start;
	r->start_us = start * USEC_PER_SEC + usec;
	r->width_us = width;
	r->buckets = buckets;
	return true;
}

uint64_t stored_run_end(const struct stored_run *r)
{
	/* a bucket of delay to the first boundary, rounded up */
	return (r->start_us + (r->buckets + 1) * r->width_us + USEC_PER_SEC - 1) /
	       USEC_PER_SEC;
}

static int by_start(const void *a, const void *b)
{
	const struct stored_run *x = a, *y = b;

	if (x->start_us != y->start_us)
		return x->start_us < y->start_us ? -1 : 1;
	return strcmp(x->name, y->name);
}

int series_store_list(const char *dir, struct stored_run **runs, size_t *n)
{
	struct stored_run *v = NULL, r;
	size_t cap = 0;
	struct dirent *e;
	struct stat st;
	DIR *d;

	*n = 0;
	d = opendir(dir);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (!stored_run_parse(e->d_name, &r) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		r.bytes = (uint64_t)st.st_size;
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			v = xrealloc(v, cap, sizeof(*v));
		}
		v[(*n)++] = r;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), by_start);
	*runs = v;
	return 0;
}

int series_store_save(const char *dir, FILE *in, uint64_t start_us,
		      uint64_t width_us, uint64_t buckets, uint64_t *lines)
{
	char path[4096], tmp[4200], line[1024], usec[8] = "";
	gzFile gz;
	int fd, err = 0;

	*lines = 0;
	if (start_us % USEC_PER_SEC)
		snprintf(usec, sizeof(usec), ".%06llu",
			 (unsigned long long)(start_us % USEC_PER_SEC));
	snprintf(path, sizeof(path), "%s/series-%llu%s-%llux%llu.gz", dir,
		 (unsigned long long)(start_us / USEC_PER_SEC), usec,
		 (unsigned long long)width_us, (unsigned long long)buckets);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0) {
		warnx_("%s: %s", tmp, strerror(errno));
		return -1;
	}
	gz = gzdopen(fd, "wb6");
	if (!gz) {
		close(fd);
		unlink(tmp);
		warnx_("%s: no memory for the compressor", tmp);
		return -1;
	}
	while (fgets(line, sizeof(line), in)) {
		if (gzputs(gz, line) < 0) {
			err = 1;
			break;
		}
		(*lines)++;
	}
	if (ferror(in))
		err = 1;
	if (gzclose(gz) != Z_OK)
		err = 1;
	if (err || rename(tmp, path)) {
		warnx_("%s: cannot write the run: %s", path,
		       err ? "read or write error" : strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

int series_store_expire(const char *dir, uint64_t oldest, uint64_t max_bytes)
{
	struct stored_run *runs;
	uint64_t total = 0;
	size_t n, i;
	int removed = 0;
	char path[4200];

	if (series_store_list(dir, &runs, &n) < 0)
		return -1;
	for (i = 0; i < n; i++)
		total += runs[i].bytes;
	for (i = 0; i + 1 < n; i++) {
		bool old = oldest && stored_run_end(&runs[i]) <= oldest;
		bool big = max_bytes && total > max_bytes;

		if (!old && !big)
			break;
		snprintf(path, sizeof(path), "%s/%s", dir, runs[i].name);
		if (unlink(path) && errno != ENOENT) {
			warnx_("%s: cannot remove: %s", path, strerror(errno));
			continue;
		}
		total -= runs[i].bytes;
		removed++;
	}
	free(runs);
	return removed;
}
