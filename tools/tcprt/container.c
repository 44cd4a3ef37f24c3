// SPDX-License-Identifier: GPL-2.0
/* Naming the container of a record: see container.h. */
#include "container.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "util.h"

#define CGROUP_ROOT	"/sys/fs/cgroup"
#define CGROUP_HYBRID	"/sys/fs/cgroup/unified"
#define PROC_ROOT	"/proc"
#define CGROUP2_MAGIC	0x63677270	/* statfs f_type of cgroup2 */
#define MISS_RESCAN_US	USEC_PER_SEC		/* a miss reads again, at most this often */
#define MAX_AGE_US	(60 * USEC_PER_SEC)	/* a table is read again when older */
#define MAX_DEPTH	32
#define MAX_COMPONENTS	64

/* ---- what a path says ------------------------------------------------------- */

static const char *const runtime_names[] = {
	[CT_NONE] = NULL,
	[CT_DOCKER] = "docker",
	[CT_CONTAINERD] = "containerd",
	[CT_CRIO] = "cri-o",
	[CT_PODMAN] = "podman",
	[CT_KUBERNETES] = "kubernetes",
	[CT_SYSTEMD] = "systemd",
	[CT_HOST] = "host",
};

const char *ct_runtime_name(enum ct_runtime rt)
{
	return runtime_names[rt];
}

bool ct_is_container(enum ct_runtime rt)
{
	return rt >= CT_DOCKER && rt <= CT_KUBERNETES;
}

struct comp {
	const char *s;
	size_t len;
};

static bool is_hex(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool comp_is(const struct comp *c, const char *s)
{
	return c->len == strlen(s) && !memcmp(c->s, s, c->len);
}

static bool starts(const struct comp *c, const char *prefix)
{
	size_t pl = strlen(prefix);

	return c->len >= pl && !memcmp(c->s, prefix, pl);
}

static bool ends(const struct comp *c, const char *suffix)
{
	size_t sl = strlen(suffix);

	return c->len >= sl && !memcmp(c->s + c->len - sl, suffix, sl);
}

/* <prefix><64 hex digits><suffix>: the id into @id. */
static bool id_between(const struct comp *c, const char *prefix,
		       const char *suffix, char *id)
{
	size_t pl = strlen(prefix), sl = strlen(suffix);

	if (c->len != pl + CT_ID_LEN + sl || !starts(c, prefix) ||
	    !ends(c, suffix) || !is_hex(c->s + pl, CT_ID_LEN))
		return false;
	memcpy(id, c->s + pl, CT_ID_LEN);
	id[CT_ID_LEN] = '\0';
	return true;
}

/* Split @path on '/'; empty components are skipped. */
static size_t split(const char *path, struct comp *c, size_t max)
{
	size_t n = 0;

	while (*path && n < max) {
		size_t len = strcspn(path, "/");

		if (len) {
			c[n].s = path;
			c[n].len = len;
			n++;
		}
		path += len;
		if (*path)
			path++;
	}
	return n;
}

static bool in_kubepods(const struct comp *c, size_t i)
{
	while (i--)
		if (starts(&c[i], "kubepods"))
			return true;
	return false;
}

/* Component @i (of @n) as a container: its runtime, its id into @id. */
static enum ct_runtime container_at(const struct comp *c, size_t i, char *id)
{
	if (id_between(&c[i], "docker-", ".scope", id))
		return CT_DOCKER;
	if (id_between(&c[i], "cri-containerd-", ".scope", id))
		return CT_CONTAINERD;
	if (id_between(&c[i], "crio-", ".scope", id) ||
	    id_between(&c[i], "crio-", "", id))
		return CT_CRIO;
	/* systemd's layout, and cgroupfs's (libpod_parent/libpod-<id>) */
	if (id_between(&c[i], "libpod-", ".scope", id) ||
	    id_between(&c[i], "libpod-", "", id))
		return CT_PODMAN;
	if (i > 0 && id_between(&c[i], "", "", id)) {
		if (comp_is(&c[i - 1], "docker"))
			return CT_DOCKER;
		if (starts(&c[i - 1], "pod") && in_kubepods(c, i - 1))
			return CT_KUBERNETES;
	}
	id[0] = '\0';
	return CT_NONE;
}

/* A pod UID: 1..CT_POD_MAX of [0-9a-f-_], '_' (systemd's) into '-'. */
static bool pod_uid(const char *s, size_t len, char *pod)
{
	size_t i;

	if (len == 0 || len > CT_POD_MAX)
		return false;
	for (i = 0; i < len; i++) {
		char ch = s[i] == '_' ? '-' : s[i];

		if (ch != '-' && !is_hex(&ch, 1))
			return false;
		pod[i] = ch;
	}
	pod[len] = '\0';
	return true;
}

/* kubepods[-<qos>]-pod<uid>.slice, or pod<uid> under kubepods. */
static bool pod_at(const struct comp *c, size_t i, char *pod)
{
	const struct comp *p = &c[i];

	if (starts(p, "kubepods") && ends(p, ".slice")) {
		const char *s = p->s, *end = p->s + p->len - strlen(".slice");
		const char *at = NULL;

		for (; s + 4 <= end; s++)
			if (!memcmp(s, "-pod", 4))
				at = s + 4;
		return at && pod_uid(at, (size_t)(end - at), pod);
	}
	if (starts(p, "pod") && in_kubepods(c, i))
		return pod_uid(p->s + 3, p->len - 3, pod);
	return false;
}

void ct_parse_path(const char *path, struct ct_name *n)
{
	struct comp c[MAX_COMPONENTS];
	size_t nc = split(path, c, MAX_COMPONENTS), i;

	memset(n, 0, sizeof(*n));
	for (i = nc; i-- > 0;) {
		n->runtime = container_at(c, i, n->id);
		if (n->runtime != CT_NONE)
			break;
	}
	for (i = 0; i < nc; i++)
		if (pod_at(c, i, n->pod))
			break;
	if (n->runtime != CT_NONE)
		return;
	if (n->pod[0]) {
		n->runtime = CT_KUBERNETES;	/* the pod's own cgroup */
		return;
	}
	for (i = nc; i-- > 0;) {
		if (c[i].len > strlen(".service") && ends(&c[i], ".service") &&
		    c[i].len <= CT_ID_MAX) {
			n->runtime = CT_SYSTEMD;
			memcpy(n->id, c[i].s, c[i].len);
			n->id[c[i].len] = '\0';
			return;
		}
	}
}

/* ---- the tables -------------------------------------------------------------- */

struct entry {
	uint64_t num;		/* cgroup id, or netns inode number */
	char *path;		/* the cgroup path; NULL when not known */
	bool host;		/* netns: the namespace of PID 1 */
	int pid;		/* netns: the lowest PID in it */
};

struct table {
	struct entry *e;
	size_t n, cap;
	bool read;
	uint64_t when;		/* mono_us() of the last read */
	void (*fill)(struct table *t);
};

static void add(struct table *t, uint64_t num, const char *path, int pid)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->e = xrealloc(t->e, t->cap, sizeof(*t->e));
	}
	t->e[t->n] = (struct entry){ .num = num, .pid = pid };
	if (path) {
		t->e[t->n].path = strdup(path);
		if (!t->e[t->n].path)
			die(EXIT_RUNTIME, "out of memory");
	}
	t->n++;
}

static void clear(struct table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->e[i].path);
	t->n = 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static const struct entry *find(const struct table *t, uint64_t num)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->e[mid].num == num)
			return &t->e[mid];
		if (t->e[mid].num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void refill(struct table *t)
{
	clear(t);
	t->fill(t);
	qsort(t->e, t->n, sizeof(*t->e), entry_cmp);
	t->read = true;
	t->when = mono_us();
}

/* The entry of @num: read again when old, or on a miss once a second. */
static const struct entry *lookup(struct table *t, uint64_t num)
{
	const struct entry *e;

	if (!t->read || mono_us() - t->when >= MAX_AGE_US)
		refill(t);
	e = find(t, num);
	if (!e && mono_us() - t->when >= MISS_RESCAN_US) {
		refill(t);
		e = find(t, num);
	}
	return e;
}

/* ---- the cgroup tree ------------------------------------------------------------ */

static const char *cgroup_root(void)
{
	static const char *root;
	const char *env = getenv("TCPRT_CGROUP_ROOT");
	struct statfs fs;

	if (root)
		return root;
	if (env && *env)
		root = env;
	else if (statfs(CGROUP_ROOT, &fs) == 0 && fs.f_type == CGROUP2_MAGIC)
		root = CGROUP_ROOT;
	else if (statfs(CGROUP_HYBRID, &fs) == 0 && fs.f_type == CGROUP2_MAGIC)
		root = CGROUP_HYBRID;
	else
		root = "";	/* no cgroup2: nothing is named */
	return root;
}

/* Every directory under @dfd (on device @dev), its inode -> its path. */
static void walk(struct table *t, int dfd, dev_t dev, char *path, size_t plen,
		 unsigned int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		size_t nlen = strlen(de->d_name);
		struct stat st;
		int fd;

		if (de->d_name[0] == '.' || (de->d_type != DT_DIR &&
					     de->d_type != DT_UNKNOWN))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || st.st_dev != dev ||
		    plen + 1 + nlen >= PATH_MAX)
			continue;
		path[plen] = '/';
		memcpy(path + plen + 1, de->d_name, nlen + 1);
		add(t, st.st_ino, path, 0);
		if (depth >= MAX_DEPTH)
			continue;
		fd = openat(dirfd(d), de->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			walk(t, fd, dev, path, plen + 1 + nlen, depth + 1);
	}
	closedir(d);
	path[plen] = '\0';
}

static void fill_cgroups(struct table *t)
{
	const char *root = cgroup_root();
	char path[PATH_MAX];
	struct stat st;
	int fd;

	if (!*root)
		return;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return;
	}
	add(t, st.st_ino, "/", 0);
	path[0] = '\0';
	walk(t, fd, st.st_dev, path, 0, 1);
}

static struct table cgroups = { .fill = fill_cgroups };

/* ---- network namespaces, through /proc ------------------------------------------ */

static const char *proc_root(void)
{
	const char *env = getenv("TCPRT_PROC_ROOT");

	return env && *env ? env : PROC_ROOT;
}

/* The netns of process @pid ("net:[N]"); false if it cannot be read. */
static bool netns_of(int procfd, const char *pid, uint64_t *ino)
{
	char rel[64], link[64];
	ssize_t n;
	size_t len;

	snprintf(rel, sizeof(rel), "%s/ns/net", pid);
	n = readlinkat(procfd, rel, link, sizeof(link) - 1);
	if (n < 7)
		return false;
	len = (size_t)n;
	link[len] = '\0';
	return !strncmp(link, "net:[", 5) && link[len - 1] == ']' &&
	       parse_u64(link + 5, len - 6, ino);
}

/* The "0::<path>" line of /proc/PID/cgroup, into @path. */
static bool cgroup_of(int procfd, int pid, char *path, size_t size)
{
	char rel[64], line[PATH_MAX + 8];
	bool found = false;
	FILE *f;
	int fd;

	snprintf(rel, sizeof(rel), "%d/cgroup", pid);
	fd = openat(procfd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return false;
	}
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "0::", 3) && strlen(line + 3) < size) {
			strcpy(path, line + 3);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* Every namespace a process is in, with its lowest PID, then their paths. */
static void fill_netns(struct table *t)
{
	int procfd = open(proc_root(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char path[PATH_MAX];
	uint64_t ino, host = 0;
	struct dirent *de;
	size_t i, kept = 0;
	DIR *d;

	if (procfd < 0)
		return;
	d = fdopendir(dup(procfd));
	if (!d) {
		close(procfd);
		return;
	}
	while ((de = readdir(d))) {
		uint64_t pid;

		if (!parse_u64(de->d_name, strlen(de->d_name), &pid) ||
		    pid == 0 || pid > 0x7fffffff ||
		    !netns_of(procfd, de->d_name, &ino))
			continue;
		add(t, ino, NULL, (int)pid);
	}
	closedir(d);
	if (!netns_of(procfd, "1", &host))
		host = 0;
	qsort(t->e, t->n, sizeof(*t->e), entry_cmp);
	for (i = 0; i < t->n; i++) {
		struct entry *e = &t->e[i];

		if (kept && t->e[kept - 1].num == e->num)
			continue;	/* a higher PID of the same namespace */
		t->e[kept] = *e;
		t->e[kept].host = host && e->num == host;
		if (cgroup_of(procfd, e->pid, path, sizeof(path))) {
			t->e[kept].path = strdup(path);
			if (!t->e[kept].path)
				die(EXIT_RUNTIME, "out of memory");
		}
		kept++;
	}
	t->n = kept;
	close(procfd);
}

static struct table netns = { .fill = fill_netns };

/* ---- records ------------------------------------------------------------------------ */

const struct ct_info *ct_of_record(const struct record *r)
{
	static struct ct_info ci;
	static char number[24];
	const struct entry *e = NULL;
	bool has_cg = rec_has_ext(r, EXT_CGROUP);
	bool has_ns = rec_has_ext(r, EXT_NETNS);

	memset(&ci, 0, sizeof(ci));
	ci.key = "";
	if (!has_cg && !has_ns)
		return &ci;
	ci.any = true;
	if (has_cg)
		e = lookup(&cgroups, r->ext[EXT_CGROUP]);
	if ((!e || !e->path) && has_ns) {
		e = lookup(&netns, r->ext[EXT_NETNS]);
		if (e && e->host) {
			ci.found = true;
			ci.name.runtime = CT_HOST;
			ci.key = "host";
			return &ci;
		}
	}
	if (e && e->path) {
		ci.found = true;
		ci.path = e->path;
		ct_parse_path(e->path, &ci.name);
		ci.key = ci.name.id[0] ? ci.name.id : e->path;
		return &ci;
	}
	snprintf(number, sizeof(number), "%llu", (unsigned long long)
		 r->ext[has_cg ? EXT_CGROUP : EXT_NETNS]);
	ci.key = number;
	return &ci;
}

unsigned int ct_running(const char *prefix, char first[CT_ID_MAX + 1])
{
	size_t i, plen = strlen(prefix);
	unsigned int n = 0;
	struct ct_name name;

	refill(&cgroups);
	first[0] = '\0';
	for (i = 0; i < cgroups.n; i++) {
		ct_parse_path(cgroups.e[i].path, &name);
		if (!ct_is_container(name.runtime) || !name.id[0] ||
		    strncmp(name.id, prefix, plen) || !strcmp(name.id, first))
			continue;
		if (n++)
			return n;	/* a second one: enough to tell */
		strcpy(first, name.id);
	}
	return n;
}

bool ct_container_arg_ok(const char *arg, const char **why)
{
	size_t len = strlen(arg), i;

	if (is_hex(arg, len) && len >= CT_ID_MIN && len <= CT_ID_LEN)
		return true;
	if (is_hex(arg, len) && len < CT_ID_MIN && len) {
		*why = "too short: give at least 12 hex digits of the id";
		return false;
	}
	if (len > strlen(".service") && len <= CT_ID_MAX &&
	    !strcmp(arg + len - strlen(".service"), ".service")) {
		for (i = 0; i < len; i++)
			if (arg[i] <= ' ' || arg[i] > '~' || arg[i] == '/')
				break;
		if (i == len)
			return true;
	}
	*why = "not a container id (12 to 64 lower-case hex digits) or a systemd service (NAME.service)";
	return false;
}

static bool container_is(const struct ct_info *ci, const char *want)
{
	if (ct_is_container(ci->name.runtime) && ci->name.id[0] &&
	    is_hex(want, strlen(want)))
		return !strncmp(ci->name.id, want, strlen(want));
	return ci->name.runtime == CT_SYSTEMD && !strcmp(ci->name.id, want);
}

bool ct_match(const struct ct_filter *f, const struct record *r)
{
	if (f->netns_set && (!rec_has_ext(r, EXT_NETNS) ||
			     r->ext[EXT_NETNS] != f->netns))
		return false;
	return !f->container || container_is(ct_of_record(r), f->container);
}

void ct_free(void)
{
	clear(&cgroups);
	clear(&netns);
	free(cgroups.e);
	free(netns.e);
	cgroups = (struct table){ .fill = fill_cgroups };
	netns = (struct table){ .fill = fill_netns };
}
