// SPDX-License-Identifier: GPL-2.0
/*
 * Naming containers (container.c): the cgroup path shapes of every
 * runtime, then a cgroup tree and a /proc built by the test in a temporary
 * folder (TCPRT_CGROUP_ROOT, TCPRT_PROC_ROOT): a record's cgroup id - the
 * inode number the test reads back with stat() - names its path and
 * container; a netns names the cgroup of the lowest PID in it; a number
 * that names nothing stays a number; a cgroup made later is found once a
 * second has passed; the --netns and --container filters.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container.h"
#include "parse.h"
#include "tap.h"

/* Container ids and pod UIDs, made up here. */
#define ID_A	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID_B	"fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define ID_C	"aaaaaaaaaaaa1111111111111111111111111111111111111111111111111111"
#define ID_D	"aaaaaaaaaaaa2222222222222222222222222222222222222222222222222222"
#define UID	"6f1d2c3b-4a59-4e8f-9d0c-1b2a3f4e5d6c"
#define UID_SD	"6f1d2c3b_4a59_4e8f_9d0c_1b2a3f4e5d6c"

static void shape(const char *path, enum ct_runtime rt, const char *id,
		  const char *pod)
{
	struct ct_name n;

	ct_parse_path(path, &n);
	ok(n.runtime == rt && !strcmp(n.id, id) && !strcmp(n.pod, pod),
	   "%s: %s %s%s%s (got %s '%s' '%s')", path,
	   ct_runtime_name(rt) ? ct_runtime_name(rt) : "nothing", id,
	   *pod ? " pod " : "", pod,
	   ct_runtime_name(n.runtime) ? ct_runtime_name(n.runtime) : "nothing",
	   n.id, n.pod);
}

static void test_shapes(void)
{
	shape("/system.slice/docker-" ID_A ".scope", CT_DOCKER, ID_A, "");
	shape("/docker/" ID_A, CT_DOCKER, ID_A, "");
	shape("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_SD
	      ".slice/cri-containerd-" ID_B ".scope", CT_CONTAINERD, ID_B, UID);
	shape("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_SD
	      ".slice/crio-" ID_A ".scope", CT_CRIO, ID_A, UID);
	shape("/kubepods.slice/kubepods-pod" UID_SD ".slice/cri-containerd-" ID_A ".scope",
	      CT_CONTAINERD, ID_A, UID);
	shape("/kubepods.slice/kubepods-pod" UID_SD ".slice/docker-" ID_A ".scope",
	      CT_DOCKER, ID_A, UID);
	shape("/kubepods/burstable/pod" UID "/" ID_B, CT_KUBERNETES, ID_B, UID);
	shape("/kubepods/pod" UID "/" ID_B, CT_KUBERNETES, ID_B, UID);
	shape("/kubepods/besteffort/pod" UID "/crio-" ID_B, CT_CRIO, ID_B, UID);
	shape("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_SD ".slice",
	      CT_KUBERNETES, "", UID);
	shape("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_SD
	      ".slice/crio-conmon-" ID_A ".scope", CT_KUBERNETES, "", UID);
	shape("/machine.slice/libpod-" ID_A ".scope", CT_PODMAN, ID_A, "");
	shape("/machine.slice/libpod-" ID_A ".scope/container", CT_PODMAN, ID_A, "");
	shape("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID_B ".scope",
	      CT_PODMAN, ID_B, "");
	shape("/machine.slice/libpod-conmon-" ID_A ".scope", CT_NONE, "", "");
	/* podman --cgroup-manager=cgroupfs, as podman 4.3 lays it out */
	shape("/libpod_parent/libpod-" ID_A, CT_PODMAN, ID_A, "");
	shape("/libpod_parent/conmon", CT_NONE, "", "");
	shape("/system.slice/nginx.service", CT_SYSTEMD, "nginx.service", "");
	shape("/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service",
	      CT_SYSTEMD, "foo.service", "");
	shape("/system.slice/docker-" ID_A ".scope/system.slice/nginx.service",
	      CT_DOCKER, ID_A, "");
	shape("/system.slice/docker.service", CT_SYSTEMD, "docker.service", "");
	shape("/user.slice/user-1000.slice/session-3.scope", CT_NONE, "", "");
	shape("/", CT_NONE, "", "");
	shape("/init.scope", CT_NONE, "", "");
	/* near misses */
	shape("/system.slice/docker-" ID_A "0.scope", CT_NONE, "", "");
	shape("/system.slice/docker-0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef.scope",
	      CT_NONE, "", "");
	shape("/other/" ID_A, CT_NONE, "", "");
	shape("/pod" UID "/" ID_A, CT_NONE, "", "");
	shape("/.service", CT_NONE, "", "");
}

static void test_arg(void)
{
	static const char *const good[] = {
		ID_A, "0123456789ab", "nginx.service", "user@1000.service",
	};
	static const char *const bad[] = {
		"", "0123456789a", "0123456789AB", ID_A "0", "nginx", ".service",
		"a/b.service", "my app.service", "xyz0123456789",
	};
	const char *why = NULL;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ok(ct_container_arg_ok(good[i], &why), "--container %s taken", good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		ok(!ct_container_arg_ok(bad[i], &why) && why,
		   "--container '%s' refused: %s", bad[i], why ? why : "(no reason)");
	}
}

/* ---- a tree on disk ------------------------------------------------------------ */

static char top[64];

static void mkdirs(const char *rel)
{
	char path[4096], *p;

	snprintf(path, sizeof(path), "%s/%s", top, rel);
	for (p = path + strlen(top) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		diag("mkdir %s: %s", path, strerror(errno));
}

static uint64_t ino_of(const char *rel)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", top, rel);
	if (stat(path, &st) < 0) {
		diag("stat %s: %s", path, strerror(errno));
		return 0;
	}
	return st.st_ino;
}

static void put(const char *rel, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", top, rel);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A process of /proc: its netns and its cgroup v2 path. */
static void proc(int pid, uint64_t ns, const char *cgroup)
{
	char rel[128], link[64], text[512], path[4096];

	snprintf(rel, sizeof(rel), "proc/%d/ns", pid);
	mkdirs(rel);
	snprintf(path, sizeof(path), "%s/%s/net", top, rel);
	snprintf(link, sizeof(link), "net:[%llu]", (unsigned long long)ns);
	if (symlink(link, path))
		diag("symlink %s: %s", path, strerror(errno));
	snprintf(rel, sizeof(rel), "proc/%d/cgroup", pid);
	snprintf(text, sizeof(text), "0::%s\n", cgroup);
	put(rel, text);
}

static struct record rec;

/* A record with a cgroup and/or a netns (0: not on the line). */
static const struct ct_info *name_of(uint64_t cgroup, uint64_t netns)
{
	char line[256], why[PARSE_WHY_MAX];
	int n;

	n = snprintf(line, sizeof(line),
		     "V6 R 1795218000 000001 10.0.0.2:40000 10.0.0.1:80 1 2 3 4 5 6 7 8 0 10");
	if (netns)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " netns=%llu",
			      (unsigned long long)netns);
	if (cgroup)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " cgroup=%llu",
			      (unsigned long long)cgroup);
	if (!parse_log_line(line, (size_t)n, &rec, why))
		diag("%s: %s", line, why);
	return ct_of_record(&rec);
}

static bool is(const struct ct_info *ci, const char *path, enum ct_runtime rt,
	       const char *key)
{
	bool same_path = path ? ci->path && !strcmp(ci->path, path) : !ci->path;

	if (!same_path || ci->name.runtime != rt || strcmp(ci->key, key))
		diag("got path %s runtime %s key %s", ci->path ? ci->path : "(none)",
		     ct_runtime_name(ci->name.runtime) ?
		     ct_runtime_name(ci->name.runtime) : "none", ci->key);
	return same_path && ci->name.runtime == rt && !strcmp(ci->key, key);
}

#define DOCKER_A	"system.slice/docker-" ID_A ".scope"
#define CRI_B		"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" \
			UID_SD ".slice/cri-containerd-" ID_B ".scope"
#define PODMAN_C	"machine.slice/libpod-" ID_C ".scope"
#define PODMAN_D	"machine.slice/libpod-" ID_D ".scope"
#define NGINX		"system.slice/nginx.service"

static void test_tree(void)
{
	uint64_t docker, cri, nginx, gone, later, root, podman;
	const uint64_t host_ns = 4026531840ULL, ns_a = 4026532500ULL,
		       ns_b = 4026532600ULL, ns_gone = 4026532999ULL;
	char cg[128], first[CT_ID_MAX + 1];
	struct ct_filter f = { 0 };
	const struct ct_info *ci;

	snprintf(top, sizeof(top), "/tmp/tcprt-ct.XXXXXX");
	if (!mkdtemp(top)) {
		ok(0, "mkdtemp");
		return;
	}
	mkdirs("cg/" DOCKER_A);
	mkdirs("cg/" CRI_B);
	mkdirs("cg/" NGINX);
	mkdirs("cg/" PODMAN_C);
	mkdirs("cg/" PODMAN_D "/container");
	mkdirs("cg/gone");
	docker = ino_of("cg/" DOCKER_A);
	cri = ino_of("cg/" CRI_B);
	nginx = ino_of("cg/" NGINX);
	podman = ino_of("cg/" PODMAN_C);
	root = ino_of("cg");
	gone = ino_of("cg/gone");
	rmdir(strcat(strcpy(cg, top), "/cg/gone"));

	/* PID 1 in the host's namespace; two processes share ns_a, the lower
	 * PID in the Docker container; PID 300 in ns_b, a pod's container */
	proc(1, host_ns, "/init.scope");
	proc(250, ns_a, "/" DOCKER_A);
	proc(260, ns_a, "/" NGINX);
	proc(300, ns_b, "/" CRI_B);
	proc(400, host_ns, "/" NGINX);

	snprintf(cg, sizeof(cg), "%s/cg", top);
	setenv("TCPRT_CGROUP_ROOT", cg, 1);
	snprintf(cg, sizeof(cg), "%s/proc", top);
	setenv("TCPRT_PROC_ROOT", cg, 1);

	ci = name_of(docker, 0);
	ok(ci->any && ci->found && is(ci, "/" DOCKER_A, CT_DOCKER, ID_A),
	   "cgroup %llu (stat of the Docker scope): docker, its id", (unsigned long long)docker);
	ci = name_of(cri, 0);
	ok(is(ci, "/" CRI_B, CT_CONTAINERD, ID_B) && !strcmp(ci->name.pod, UID),
	   "cgroup of a containerd container of a pod: its id, the pod's UID");
	ci = name_of(nginx, 0);
	ok(is(ci, "/" NGINX, CT_SYSTEMD, "nginx.service"), "cgroup of a service: the unit");
	ci = name_of(root, 0);
	ok(is(ci, "/", CT_NONE, "/"), "the root cgroup: the path /");
	ci = name_of(gone, 0);
	ok(ci->any && !ci->found && !ci->path && ci->name.runtime == CT_NONE &&
	   strtoull(ci->key, NULL, 10) == gone,
	   "a cgroup that no longer exists: the number %llu", (unsigned long long)gone);

	/* netns alone: through the lowest PID in it */
	ci = name_of(0, ns_a);
	ok(is(ci, "/" DOCKER_A, CT_DOCKER, ID_A),
	   "netns %llu alone: the lowest PID in it (250, Docker), not 260",
	   (unsigned long long)ns_a);
	ci = name_of(0, ns_b);
	ok(is(ci, "/" CRI_B, CT_CONTAINERD, ID_B) && !strcmp(ci->name.pod, UID),
	   "netns of a pod: its container and pod");
	ci = name_of(0, host_ns);
	ok(is(ci, NULL, CT_HOST, "host"), "the netns of PID 1: host");
	ci = name_of(0, ns_gone);
	ok(!ci->found && !strcmp(ci->key, "4026532999"), "a netns no process is in: the number");
	ci = name_of(nginx, ns_a);
	ok(is(ci, "/" NGINX, CT_SYSTEMD, "nginx.service"), "cgroup and netns: the cgroup names it");
	ci = name_of(gone, ns_b);
	ok(is(ci, "/" CRI_B, CT_CONTAINERD, ID_B), "a cgroup gone, its netns known: the netns names it");
	ci = name_of(gone, ns_gone);
	ok(!ci->found && strtoull(ci->key, NULL, 10) == gone,
	   "neither known: the cgroup number");
	ci = name_of(0, 0);
	ok(!ci->any && !ci->found && !strcmp(ci->key, ""), "no extension fields: nothing");

	/* a cgroup made after the table was read: a miss, found a second later */
	ct_running("", first);	/* the table read now */
	mkdirs("cg/system.slice/docker-" ID_B ".scope");
	later = ino_of("cg/system.slice/docker-" ID_B ".scope");
	ci = name_of(later, 0);
	ok(!ci->found, "a cgroup made just now: not read again within the second");
	usleep(1100000);
	ci = name_of(later, 0);
	ok(ci->found && is(ci, "/system.slice/docker-" ID_B ".scope", CT_DOCKER, ID_B),
	   "a second later: read again, found");

	/* the filters */
	name_of(docker, ns_a);
	f.netns_set = true;
	f.netns = ns_a;
	ok(ct_match(&f, &rec), "--netns %llu: a record of it", (unsigned long long)ns_a);
	f.netns = ns_b;
	ok(!ct_match(&f, &rec), "--netns of another namespace: not");
	name_of(docker, 0);
	f.netns = ns_a;
	ok(!ct_match(&f, &rec), "--netns: a record without netns: not");
	f.netns_set = false;
	f.container = ID_A;
	ok(ct_match(&f, &rec), "--container, the full id");
	f.container = "0123456789ab";
	ok(ct_match(&f, &rec), "--container, 12 digits of it");
	f.container = "0123456789ac";
	ok(!ct_match(&f, &rec), "--container, another prefix: not");
	f.container = "nginx.service";
	ok(!ct_match(&f, &rec), "--container nginx.service: not the Docker record");
	name_of(nginx, 0);
	ok(ct_match(&f, &rec), "--container nginx.service: the service's record");
	f.container = "0123456789ab";
	ok(!ct_match(&f, &rec), "--container an id: not the service's record");
	name_of(0, 0);
	ok(!ct_match(&f, &rec), "--container: a record without extension fields: not");
	name_of(podman, 0);
	f.container = "aaaaaaaaaaaa1";
	ok(ct_match(&f, &rec), "--container: a Podman container by a prefix");

	/* prefixes of the containers running now */
	ok(ct_running("aaaaaaaaaaaa", first) == 2,
	   "two running containers share the prefix aaaaaaaaaaaa: 2 (ambiguous)");
	ok(ct_running("aaaaaaaaaaaa2", first) == 1 && !strcmp(first, ID_D),
	   "one has the prefix aaaaaaaaaaaa2 (libpod-<id>.scope and its container/ count once)");
	ok(ct_running("bbbbbbbbbbbb", first) == 0, "none has bbbbbbbbbbbb");
	ct_free();
	if (system(strcat(strcpy(cg, "rm -rf "), top)) != 0)
		diag("could not remove %s", top);
}

int main(void)
{
	test_shapes();
	test_arg();
	test_tree();
	return done_testing();
}
