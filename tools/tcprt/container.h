/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Naming what a record's extension fields point at (tcp_rt's log_ext:
 * netns and cgroup, docs/records.md): the cgroup v2 path of the socket,
 * and from it the container runtime and the container's id (Docker,
 * containerd and CRI-O under Kubernetes with the pod's UID, Podman), or
 * the systemd service.
 *
 * A cgroup id is the inode number of its directory under the cgroup2
 * mount: tcprt walks the mount and keeps a table of number -> path.  A
 * network namespace is named through a process in it: the lowest PID
 * whose /proc/PID/ns/net is net:[N], and the "0::<path>" line of its
 * /proc/PID/cgroup; the namespace of PID 1 is the host's.  Both tables
 * are read again when a number is not in them (at most once a second)
 * and when they are a minute old.  A number that names nothing (its
 * container has exited) stays a number.
 *
 * The roots are /sys/fs/cgroup (or its "unified" folder on a hybrid
 * host) and /proc; the tests give others in TCPRT_CGROUP_ROOT and
 * TCPRT_PROC_ROOT (docs/tcprt-internals.md).
 */
#ifndef TCPRT_CONTAINER_H
#define TCPRT_CONTAINER_H

#include <stdbool.h>
#include <stdint.h>

#include "record.h"

enum ct_runtime {
	CT_NONE,	/* a cgroup path, nothing recognised in it */
	CT_DOCKER, CT_CONTAINERD, CT_CRIO, CT_PODMAN,
	CT_KUBERNETES,	/* under kubepods, the runtime not in the path */
	CT_SYSTEMD,	/* a systemd service, no container */
	CT_HOST,	/* (netns alone) the host's network namespace */
};

#define CT_ID_LEN	64	/* a container id: 64 hex digits */
#define CT_ID_MIN	12	/* the shortest prefix --container takes */
#define CT_ID_MAX	255	/* a container id, or a systemd unit's name */
#define CT_POD_MAX	64

struct ct_name {
	enum ct_runtime runtime;
	char id[CT_ID_MAX + 1];		/* container id; systemd: the unit; or "" */
	char pod[CT_POD_MAX + 1];	/* the pod's UID (kubepods), or "" */
};

/* "docker", "containerd", "cri-o", "podman", "kubernetes", "systemd",
 * "host"; NULL for CT_NONE. */
const char *ct_runtime_name(enum ct_runtime rt);

/* True for the runtimes whose id is a container's. */
bool ct_is_container(enum ct_runtime rt);

/*
 * What a cgroup v2 path says: the deepest component that is a container
 * (docker-<id>.scope, /docker/<id>, cri-containerd-<id>.scope,
 * crio-<id>[.scope], libpod-<id>.scope, kubepods/.../pod<uid>/<id>; <id>
 * 64 hex digits; libpod-conmon- and crio-conmon- are not containers),
 * the pod's UID of kubepods[-<qos>]-pod<uid>.slice or kubepods/.../pod<uid>
 * (underscores turned into dashes), else the deepest <name>.service.
 */
void ct_parse_path(const char *path, struct ct_name *n);

/* What a record's netns and cgroup fields resolve to. */
struct ct_info {
	bool any;		/* the record has netns or cgroup */
	bool found;		/* a path (or the host's namespace) was found */
	const char *path;	/* the cgroup path, or NULL */
	struct ct_name name;
	/*
	 * What tcprt calls it (summary --by container, export's container
	 * label, read's "container"): the container id, the systemd unit,
	 * "host", the cgroup path, or - nothing found - the cgroup number
	 * (the netns number when the record has no cgroup).
	 */
	const char *key;
};

/*
 * Resolve the record's cgroup (else its netns).  The result and its
 * strings are valid until the next call.
 */
const struct ct_info *ct_of_record(const struct record *r);

/*
 * The containers running now whose id starts with @prefix (a fresh walk
 * of the cgroup tree): 0, 1 (its id in @first) or 2 (two or more).
 */
unsigned int ct_running(const char *prefix, char first[CT_ID_MAX + 1]);

/* --netns, --container: which records to keep. */
struct ct_filter {
	bool netns_set;
	uint64_t netns;
	const char *container;	/* a container id or its prefix, a unit; NULL */
};

/* True when @r passes @f (always, when @f filters nothing). */
bool ct_match(const struct ct_filter *f, const struct record *r);

/*
 * A --container value: 12 to 64 lower-case hex digits (a container's id,
 * or a prefix of it) or a systemd service's name (NAME.service).  False
 * with @why set otherwise.
 */
bool ct_container_arg_ok(const char *arg, const char **why);

/* Free the tables (they are read again when needed). */
void ct_free(void);

#endif
