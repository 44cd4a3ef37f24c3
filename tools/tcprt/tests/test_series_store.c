// SPDX-License-Identifier: GPL-2.0
/*
 * series_store.c: run files' names, a run saved whole under its name
 * (0640, nothing left under the temporary one), listed oldest first, and
 * the bounds: runs past the age go, then the oldest while over the bytes,
 * the newest always kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "series_store.h"
#include "tap.h"

static char dir[] = "/tmp/test_series_store.XXXXXX";

static void test_names(void)
{
	struct stored_run r;

	ok(stored_run_parse("series-1795826000-1000x2000.gz", &r) &&
	   r.start == 1795826000 && r.width_us == 1000 && r.buckets == 2000,
	   "a run's name");
	ok(stored_run_end(&r) == 1795826000 + 3, "ends after 2001 ms, rounded up");
	ok(!stored_run_parse("series-1795826000-1000x2000.gz.tmp", &r),
	   "a run being written is not one");
	ok(!stored_run_parse("series-1795826000-1000x0.gz", &r), "no bucket");
	ok(!stored_run_parse("series-1795826000-1000x20000.gz", &r),
	   "more buckets than a run has");
	ok(!stored_run_parse("other.gz", &r), "another file");
	ok(stored_run_parse("series-1795826000.250000-10000x45.gz", &r) &&
	   r.start == 1795826000 && r.start_us == 1795826000250000ULL &&
	   r.width_us == 10000 && r.buckets == 45, "a window's name, its microseconds");
	ok(stored_run_end(&r) == 1795826000 + 1, "it ends 710 ms on, rounded up");
	ok(!stored_run_parse("series-1795826000.25-10000x45.gz", &r) &&
	   !stored_run_parse("series-1795826000.2500000-10000x45.gz", &r) &&
	   !stored_run_parse("series-1795826000.-10000x45.gz", &r),
	   "microseconds are six digits");
}

static int save(uint64_t start, const char *text)
{
	uint64_t lines;
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err = series_store_save(dir, f, start * 1000000, 1000, 2000, &lines);

	fclose(f);
	return err ? -1 : (int)lines;
}

static void test_save_list(void)
{
	char path[256], back[256] = "";
	struct stored_run *runs;
	struct stat st;
	gzFile gz;
	size_t n;

	ok(save(1795826300, "a 1\nb 2\n") == 2, "saved: 2 lines");
	ok(save(1795826000, "c 3\n") == 1, "an older run saved after");
	snprintf(path, sizeof(path), "%s/series-1795826300-1000x2000.gz", dir);
	ok(!stat(path, &st) && (st.st_mode & 0777) == 0640, "mode 0640");
	gz = gzopen(path, "rb");
	ok(gz && gzread(gz, back, sizeof(back) - 1) == 8 &&
	   !strcmp(back, "a 1\nb 2\n"), "the lines, whole");
	if (gz)
		gzclose(gz);
	snprintf(path, sizeof(path), "%s/series-1795826300-1000x2000.gz.tmp", dir);
	ok(access(path, F_OK), "no temporary file left");
	ok(!series_store_list(dir, &runs, &n) && n == 2 &&
	   runs[0].start == 1795826000 && runs[1].start == 1795826300 &&
	   runs[0].bytes > 0, "listed oldest first, with sizes");
	free(runs);
}

/* Windows of the recorder: two in one second, each its own file, in order. */
static void test_windows(void)
{
	const char *text = "w 1\n";
	struct stored_run *runs;
	uint64_t lines;
	size_t n;
	FILE *f;
	int i, err = 0;

	for (i = 0; i < 2; i++) {
		f = fmemopen((void *)text, strlen(text), "r");
		err |= series_store_save(dir, f, 1795826400000000ULL + (i ? 900000 : 100000),
					 10000, 45, &lines);
		fclose(f);
	}
	ok(!err && !series_store_list(dir, &runs, &n) && n == 4 &&
	   !strcmp(runs[2].name, "series-1795826400.100000-10000x45.gz") &&
	   !strcmp(runs[3].name, "series-1795826400.900000-10000x45.gz"),
	   "two windows of one second: two files, in order");
	free(runs);
}

static void test_expire(void)
{
	struct stored_run *runs;
	size_t n;

	ok(save(1795826600, "d 4\n") == 1 && save(1795826900, "e 5\n") == 1,
	   "two more runs");
	ok(series_store_expire(dir, 1795826000 + 3, 0) == 1,
	   "age: the run that ended by then goes");
	ok(series_store_expire(dir, 0, 1) == 4, "bytes: all but the newest go");
	ok(!series_store_list(dir, &runs, &n) && n == 1 &&
	   runs[0].start == 1795826900, "the newest stays");
	free(runs);
	ok(series_store_expire(dir, UINT64_MAX, 1) == 0, "even when it is old and too big");
	ok(series_store_expire("/nonexistent/x", 0, 0) == -1, "no folder: -1");
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_names();
	test_save_list();
	test_windows();
	test_expire();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			diag("could not remove %s", dir);
	}
	return done_testing();
}
