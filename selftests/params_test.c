// SPDX-License-Identifier: GPL-2.0
/*
 * Parameters and debugfs files of tcp_rt: every parameter of the interface
 * with its default, permission and limits; bad values refused with EINVAL,
 * the old value kept, and one "tcp_rt: <param>:" line in the kernel log.
 *
 * Runs as root in the VM, from the checkout (it loads ./tcp_rt.ko).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define PARAMS	"/sys/module/tcp_rt/parameters/"
#define DBG	"/sys/kernel/debug/tcp-rt/"

static int load(const char *args)
{
	int fd = open("tcp_rt.ko", O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -1;
	ret = syscall(SYS_finit_module, fd, args, 0);
	close(fd);
	return ret;
}

static int unload(void)
{
	return syscall(SYS_delete_module, "tcp_rt", O_NONBLOCK);
}

static int loaded(void)
{
	return access("/sys/module/tcp_rt", F_OK) == 0;
}

/* Lines of the kernel log that contain @needle. */
static int klog_count(const char *needle)
{
	int size = klogctl(10, NULL, 0);	/* SYSLOG_ACTION_SIZE_BUFFER */
	char *buf, *p;
	int n = 0, len;

	if (size <= 0)
		return -1;
	buf = calloc(1, size + 1);
	if (!buf)
		return -1;
	len = klogctl(3, buf, size);		/* SYSLOG_ACTION_READ_ALL */
	if (len < 0) {
		free(buf);
		return -1;
	}
	buf[len] = '\0';
	for (p = buf; (p = strstr(p, needle)); p++)
		n++;
	free(buf);
	return n;
}

static int read_param(const char *name, char *out, size_t len)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, out, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	out[n] = '\0';
	return 0;
}

/* Write @val in a single write(); 0 or -errno. */
static int write_param(const char *name, const char *val)
{
	char path[256];
	int fd, err = 0;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* Permission bits of @path, -1 when it does not exist. */
static int file_mode(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -1;
	return st.st_mode & 07777;
}

struct param_default {
	const char *name;
	const char *value;
	int mode;
};

static const struct param_default defaults[] = {
	{ "lports",		"\n",		0644 },
	{ "lports_range",	"\n",		0644 },
	{ "pports",		"\n",		0644 },
	{ "pports_range",	"\n",		0644 },
	{ "stats",		"0\n",		0644 },
	{ "stats_interval",	"60\n",		0644 },
	{ "log_buf_num",	"8\n",		0444 },
	{ "log_format",		"binary\n",	0444 },
	{ "stats_buf_num",	"8\n",		0444 },
	{ "max_tracked",	"262144\n",	0644 },
	{ "log_sample",		"1\n",		0644 },
	{ "deactivate",		"0\n",		0644 },
	{ "log_ext",		"\n",		0644 },
	{ "netns",		"\n",		0644 },
};

struct bad_value {
	const char *name;
	const char *value;
};

static const struct bad_value bad_values[] = {
	{ "lports", "0" },
	{ "lports", "65536" },
	{ "lports", "-1" },
	{ "lports", "80,x" },
	{ "lports", "1,2,3,4,5,6,7" },
	{ "lports", "80,,81" },
	{ "lports", " 80" },
	{ "lports", "99999999999999999999" },
	{ "lports_range", "80" },
	{ "lports_range", "90,80" },
	{ "lports_range", "1,2,3,4,5,6,7,8" },
	{ "lports_range", "0,10" },
	{ "pports", "70000" },
	{ "pports", "abc" },
	{ "pports_range", "10,20,30" },
	{ "pports_range", "2000,1000" },
	{ "stats", "2" },
	{ "stats", "-1" },
	{ "stats", "\n" },
	{ "stats", "yes" },
	{ "stats_interval", "0" },
	{ "stats_interval", "86401" },
	{ "stats_interval", "4294967296" },
	{ "stats_interval", " 5" },
	{ "max_tracked", "0" },
	{ "max_tracked", "16777217" },
	{ "log_sample", "0" },
	{ "log_sample", "65537" },
	{ "log_sample", "-4" },
	{ "log_sample", "1/16" },
	{ "deactivate", "3" },
	{ "deactivate", "yes" },
	{ "deactivate", "-1" },
	{ "log_ext", "foo" },
	{ "log_ext", "netns," },
	{ "log_ext", ",cgroup" },
	{ "log_ext", "netns cgroup" },
	{ "log_ext", "NETNS" },
	{ "log_ext", "netns,,cgroup" },
	{ "log_ext", "seq," },
	{ "log_ext", "SEQ" },
	{ "log_ext", "seqs" },
	{ "netns", "abc" },
	{ "netns", "0" },
	{ "netns", "-1" },
	{ "netns", "4294967296" },
	{ "netns", "4026531840,,4026531841" },
	{ "netns", " 4026531840" },
	{ "netns", "4026531840," },
};

TEST(load_time_defaults_and_modes)
{
	char val[256], path[256];
	unsigned int i;

	if (loaded())
		ASSERT_EQ(0, unload());
	ASSERT_EQ(0, load(""));
	for (i = 0; i < ARRAY_SIZE(defaults); i++) {
		snprintf(path, sizeof(path), PARAMS "%s", defaults[i].name);
		EXPECT_EQ(defaults[i].mode, file_mode(path)) {
			TH_LOG("mode of %s", defaults[i].name);
		}
		ASSERT_EQ(0, read_param(defaults[i].name, val, sizeof(val)));
		EXPECT_STREQ(defaults[i].value, val) {
			TH_LOG("default of %s", defaults[i].name);
		}
	}
	/* load-time-only parameters cannot be written, even by root */
	EXPECT_EQ(-EACCES, write_param("log_buf_num", "4"));
	EXPECT_EQ(-EACCES, write_param("stats_buf_num", "4"));
	EXPECT_EQ(-EACCES, write_param("log_format", "both"));
	ASSERT_EQ(0, unload());
}

TEST(debugfs_files)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	char path[256];
	long i;

	if (loaded())
		ASSERT_EQ(0, unload());
	ASSERT_EQ(0, load("lports=80"));
	/* log_format=binary, the default: a log, its records and a peek a CPU */
	for (i = 0; i < cpus; i++) {
		snprintf(path, sizeof(path), DBG "rt-network-log%ld", i);
		EXPECT_EQ(0400, file_mode(path)) TH_LOG("%s", path);
		snprintf(path, sizeof(path), DBG "rt-network-bin%ld", i);
		EXPECT_EQ(0400, file_mode(path)) TH_LOG("%s", path);
		snprintf(path, sizeof(path), DBG "rt-network-peek%ld", i);
		EXPECT_EQ(0400, file_mode(path)) TH_LOG("%s", path);
	}
	snprintf(path, sizeof(path), DBG "rt-network-log%ld", cpus);
	EXPECT_EQ(-1, file_mode(path));
	snprintf(path, sizeof(path), DBG "rt-network-bin%ld", cpus);
	EXPECT_EQ(-1, file_mode(path));
	EXPECT_EQ(-1, file_mode(DBG "rt-network-text0"));
	EXPECT_EQ(0400, file_mode(DBG "rt-network-stats"));
	EXPECT_EQ(0200, file_mode(DBG "deactivate"));
	EXPECT_EQ(0444, file_mode(DBG "status"));
	ASSERT_EQ(0, unload());
	EXPECT_EQ(-1, file_mode(DBG "status"));
	EXPECT_NE(0, access(DBG, F_OK));
}

TEST(load_time_bad_values_refused)
{
	static const char * const bad[] = {
		"lports=0", "lports=1,2,3,4,5,6,7", "lports_range=9,8",
		"pports=65536", "pports_range=1", "stats=3",
		"stats_interval=0", "log_buf_num=0", "log_buf_num=65",
		"stats_buf_num=100", "max_tracked=0", "deactivate=3",
		"log_sample=0", "log_ext=bogus", "netns=x",
		"log_format=bin", "log_format=",
		/* a bad value after good ones must not leave anything behind */
		"lports=80 pports=443 stats_interval=x",
	};
	unsigned int i;

	if (loaded())
		ASSERT_EQ(0, unload());
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		errno = 0;
		EXPECT_EQ(-1, load(bad[i])) TH_LOG("load %s", bad[i]);
		EXPECT_EQ(EINVAL, errno) TH_LOG("load %s", bad[i]);
		EXPECT_FALSE(loaded()) TH_LOG("load %s", bad[i]);
		if (loaded())
			unload();
	}
	/* and the edges are accepted */
	ASSERT_EQ(0, load("log_buf_num=1 stats_buf_num=64 stats_interval=86400 lports=1,65535"));
	ASSERT_EQ(0, unload());
}

/* log_ext's seq at load, with the others: read back last. */
TEST(load_time_log_ext_seq)
{
	char val[256];

	if (loaded())
		ASSERT_EQ(0, unload());
	ASSERT_EQ(0, load("lports=80 log_ext=seq,netns"));
	ASSERT_EQ(0, read_param("log_ext", val, sizeof(val)));
	EXPECT_STREQ("netns,seq\n", val);
	ASSERT_EQ(0, unload());
}

FIXTURE(runtime) {
	int unused;
};

FIXTURE_SETUP(runtime)
{
	if (loaded())
		ASSERT_EQ(0, unload());
	ASSERT_EQ(0, load("lports=80,8080 lports_range=1000,2000 pports=6379 pports_range=3000,3010 stats_interval=10"));
}

FIXTURE_TEARDOWN(runtime)
{
	unload();
}

TEST_F(runtime, bad_values_refused_old_value_kept)
{
	char before[256], after[256], needle[64];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad_values); i++) {
		const struct bad_value *b = &bad_values[i];
		int logged;

		snprintf(needle, sizeof(needle), "tcp_rt: %s:", b->name);
		logged = klog_count(needle);
		ASSERT_EQ(0, read_param(b->name, before, sizeof(before)));
		EXPECT_EQ(-EINVAL, write_param(b->name, b->value)) {
			TH_LOG("%s='%s'", b->name, b->value);
		}
		ASSERT_EQ(0, read_param(b->name, after, sizeof(after)));
		EXPECT_STREQ(before, after) {
			TH_LOG("%s changed by '%s'", b->name, b->value);
		}
		EXPECT_EQ(logged + 1, klog_count(needle)) {
			TH_LOG("no single '%s' line for '%s'", needle, b->value);
		}
	}
}

TEST_F(runtime, good_values_accepted)
{
	static const struct bad_value good[] = {
		{ "lports", "81,82,83,84,85,86" },
		{ "lports", "443\n" },
		{ "lports", "\n" },	/* what "echo > lports" writes: none */
		{ "lports_range", "1,65535" },
		{ "lports_range", "10,20,30,40,50,60" },
		{ "pports", "6380" },
		{ "pports_range", "1,1" },
		{ "stats", "1" },
		{ "stats_interval", "1" },
		{ "max_tracked", "16777216" },
		{ "log_sample", "65536" },
		{ "log_sample", "16" },
		/* written in the records' order, whatever order was given */
		{ "log_ext", "cgroup,netns" },
		{ "log_ext", "netns\n" },
		{ "log_ext", "cgroup,cgroup" },
		/* seq, wherever it is given, comes last */
		{ "log_ext", "seq,cgroup,netns" },
		{ "log_ext", "seq\n" },
		{ "log_ext", "\n" },
		{ "netns", "4026531840,4294967295,1" },
		{ "netns", "\n" },
	};
	static const char * const expect[] = {
		"81,82,83,84,85,86\n", "443\n", "\n", "1,65535\n",
		"10,20,30,40,50,60\n", "6380\n", "1,1\n", "1\n", "1\n",
		"16777216\n", "65536\n", "16\n",
		"netns,cgroup\n", "netns\n", "cgroup\n", "netns,cgroup,seq\n",
		"seq\n", "\n",
		"4026531840,4294967295,1\n", "\n",
	};
	char val[256];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		EXPECT_EQ(0, write_param(good[i].name, good[i].value)) {
			TH_LOG("%s='%s'", good[i].name, good[i].value);
		}
		ASSERT_EQ(0, read_param(good[i].name, val, sizeof(val)));
		EXPECT_STREQ(expect[i], val) TH_LOG("%s", good[i].name);
	}
}

/* netns holds 128 namespaces: the 129th is refused, the 128 kept. */
TEST_F(runtime, netns_list_bounded)
{
	char list[129 * 11 + 1], val[sizeof(list) + 1];
	int len = 0, logged, i;

	for (i = 0; i < 128; i++)
		len += sprintf(list + len, "%s%u", i ? "," : "", 4026531840U + i);
	ASSERT_EQ(0, write_param("netns", list));
	logged = klog_count("tcp_rt: netns: more than 128");
	sprintf(list + len, ",%u", 4026531840U + 128);
	EXPECT_EQ(-EINVAL, write_param("netns", list));
	EXPECT_EQ(logged + 1, klog_count("tcp_rt: netns: more than 128"));
	ASSERT_EQ(0, read_param("netns", val, sizeof(val)));
	list[len] = '\0';
	strcat(list, "\n");
	EXPECT_STREQ(list, val);
}

TEST_HARNESS_MAIN
