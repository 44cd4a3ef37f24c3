// SPDX-License-Identifier: GPL-2.0
/*
 * ship_state.c: the module numbers a line ends with; what a chunk read
 * from a log moves in its slot (first, read, the numbers that never
 * came, numbers going back, lines cut between chunks); slots by (load,
 * CPU); the state file (0600, locked, kept across a kill, the dead
 * epoch taken over, a foreign file started anew).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ship_state.h"
#include "tap.h"

#define R_LINE "V6 R 1795218000 000001 10.0.0.2:1 10.0.0.1:7100 5000 1000 300 0 1 500 100 300 0 1448"

static void test_line_seq(void)
{
	uint64_t v = 7;

	ok(ship_line_seq(R_LINE " seq=0", sizeof(R_LINE " seq=0") - 1, &v) && v == 0,
	   "seq=0 at the end");
	ok(ship_line_seq(R_LINE " netns=5 app=3 seq=18446744073709551614",
			 sizeof(R_LINE " netns=5 app=3 seq=18446744073709551614") - 1, &v) &&
	   v == UINT64_MAX - 1, "seq after other fields, up to 2^64 - 2");
	ok(!ship_line_seq(R_LINE " seq=18446744073709551615",
			  sizeof(R_LINE " seq=18446744073709551615") - 1, &v),
	   "2^64 - 1: no record reaches it (one past would wrap)");
	ok(!ship_line_seq(R_LINE, sizeof(R_LINE) - 1, &v), "no seq");
	ok(!ship_line_seq(R_LINE " seq=5 netns=3", sizeof(R_LINE " seq=5 netns=3") - 1, &v),
	   "seq not last: not the module's");
	ok(!ship_line_seq(R_LINE " xseq=5", sizeof(R_LINE " xseq=5") - 1, &v), "another name");
	ok(!ship_line_seq(R_LINE " seq=", sizeof(R_LINE " seq=") - 1, &v), "no digits");
	ok(!ship_line_seq(R_LINE " seq=18446744073709551616",
			  sizeof(R_LINE " seq=18446744073709551616") - 1, &v), "2^64");
	ok(!ship_line_seq("seq=5", 5, &v), "no space before");
}

/* Lines of seq @from .. @to - 1 appended to @buf. */
static size_t lines(char *buf, size_t at, uint64_t from, uint64_t to)
{
	for (; from < to; from++)
		at += (size_t)sprintf(buf + at, R_LINE " seq=%llu\n",
				      (unsigned long long)from);
	return at;
}

static void test_chunks(void)
{
	static struct ship_epoch e;
	char buf[16384];
	struct ship_slot *s, *t;
	uint64_t back = 0;
	size_t n, cut;

	s = ship_slot_of(&e, 77, 3);
	ok(s && s->used == 1 && s->load_id == 77 && s->cpu == 3, "a new slot, taken");
	ok(ship_slot_of(&e, 77, 3) == s, "the same (load, CPU): the same slot");
	t = ship_slot_of(&e, 78, 3);
	ok(t && t != s, "another load's CPU 3: another slot");

	n = lines(buf, 0, 10, 20);
	ship_chunk(s, buf, n, &back);
	ok(s->used == 2 && s->first == 10 && s->read_next == 20 &&
	   s->sent_next == 10 && s->relay_skipped == 0,
	   "first chunk: first 10, read to 20, nothing handed over yet");
	n = lines(buf, 0, 20, 25);
	n = lines(buf, n, 40, 45);
	ship_chunk(s, buf, n, &back);
	ok(s->read_next == 45 && s->relay_skipped == 15,
	   "20..24 then 40..44: the 15 between never came");
	/* a line without seq, and a malformed one, in between: no number */
	n = (size_t)sprintf(buf, R_LINE "\ngarbage\n");
	n = lines(buf, n, 45, 47);
	ship_chunk(s, buf, n, &back);
	ok(s->read_next == 47 && s->relay_skipped == 15 && s->unsent_skipped == 15 &&
	   back == 0, "lines without a number are not counted");
	/* handed over: 10..24 (15 lines), then 40..46 (7): the skipped leave */
	ship_slot_sent(s, 25, 15);
	ok(s->sent_next == 25 && s->unsent_skipped == 15, "10..24 handed over: none skipped there");
	ship_slot_sent(s, 47, 7);
	ok(s->sent_next == 47 && s->unsent_skipped == 0 && s->relay_skipped == 15,
	   "40..46 handed over: the 15 skipped before them are below sent_next now");
	ship_slot_sent(s, 40, 1);
	ok(s->sent_next == 47, "sent_next never goes back");
	n = lines(buf, 0, 30, 31);
	ship_chunk(s, buf, n, &back);
	ok(back == 1 && s->read_next == 47, "a number that goes back: counted aside");

	/* a line cut between two chunks, anywhere, even in its seq */
	n = lines(buf, 0, 47, 49);
	for (cut = 1; cut < n; cut++) {
		struct ship_slot c = *s;

		ship_chunk(&c, buf, cut, &back);
		ship_chunk(&c, buf + cut, n - cut, &back);
		if (c.read_next != 49 || c.relay_skipped != 15 || back != 1) {
			diag("cut at %zu: read_next %llu skipped %llu", cut,
			     (unsigned long long)c.read_next,
			     (unsigned long long)c.relay_skipped);
			break;
		}
	}
	ok(cut == n, "two lines cut at each of their %zu bytes: read to 49", n - 1);
	/* cut into three: a tiny middle piece */
	{
		struct ship_slot c = *s;
		size_t a = n - 5, b = n - 3;

		ship_chunk(&c, buf, a, &back);
		ship_chunk(&c, buf + a, b - a, &back);
		ship_chunk(&c, buf + b, n - b, &back);
		ok(c.read_next == 49 && c.relay_skipped == 15, "a line in three pieces");
	}
}

static void test_full(void)
{
	static struct ship_epoch e;
	unsigned int i, got = 0;

	for (i = 0; i < SHIP_STATE_SLOTS + 1; i++)
		got += ship_slot_of(&e, 1, (int)i) != NULL;
	ok(got == SHIP_STATE_SLOTS, "the table holds %d slots, then none", SHIP_STATE_SLOTS);
	ok(ship_slot_of(&e, 1, 5) != NULL, "a full table still finds its slots");
}

static void test_file(void)
{
	char dir[] = "/tmp/tcprt-shipstate.XXXXXX", path[256], dir2[300], err[512];
	struct ship_state *st;
	struct stat sb;
	uint64_t dropped = 9;
	pid_t pid;
	int status, fd;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/ship.state", dir);
	st = ship_state_open(path, &dropped, err, sizeof(err));
	ok(st && dropped == 0 && stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600,
	   "a new state file, 0600");
	ship_state_close(st);

	/* a ship that dies with its epoch open: the file keeps its stores */
	pid = fork();
	if (pid == 0) {
		uint64_t d;
		struct ship_state *c = ship_state_open(path, &d, err, sizeof(err));
		struct ship_slot *s;

		strcpy(c->cur.host, "web-1");
		c->cur.epoch = 4242;
		c->cur.next_seq = 100;
		c->cur.sent_seq = 90;
		s = ship_slot_of(&c->cur, 7, 1);
		s->used = 2;
		s->read_next = 60;
		s->sent_next = 55;
		kill(getpid(), SIGKILL);
	}
	waitpid(pid, &status, 0);
	ok(WIFSIGNALED(status), "a ship killed with its epoch open");
	st = ship_state_open(path, &dropped, err, sizeof(err));
	ok(st->dead.epoch == 4242 && !st->dead.closed && st->dead.next_seq == 100 &&
	   st->dead.sent_seq == 90 && !strcmp(st->dead.host, "web-1") &&
	   st->cur.epoch == 0 && dropped == 0,
	   "the next one finds it as the dead epoch to close, and starts clean");
	ok(ship_slot_of(&st->dead, 7, 1)->read_next == 60, "its slots as the kill left them");

	/* a second ship in the same file: refused */
	pid = fork();
	if (pid == 0) {
		uint64_t d;

		fclose(stderr);
		_exit(ship_state_open(path, &d, err, sizeof(err)) ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) != 0, "a second ship on a locked file: refused");

	/* it dies too before closing, having read: the older dead one is
	 * dropped, counted */
	st->cur.epoch = 5000;
	st->cur.next_seq = 10;
	strcpy(st->cur.host, "web-1");
	ship_state_close(st);
	st = ship_state_open(path, &dropped, err, sizeof(err));
	ok(st->dead.epoch == 5000 && dropped == 1, "two dead epochs: the newer kept, the older counted");
	st->dead.closed = 1;
	st->cur.epoch = 6000;
	st->cur.closed = 1;
	ship_state_close(st);
	st = ship_state_open(path, &dropped, err, sizeof(err));
	ok(st->dead.epoch == 5000 && st->dead.closed && st->cur.epoch == 0 && dropped == 0,
	   "an epoch closed by its final is not taken over");
	ship_state_close(st);

	/* a successor that dies having read nothing: the dead one stays */
	st = ship_state_open(path, &dropped, err, sizeof(err));
	st->dead.closed = 0;
	st->cur.epoch = 7000;
	strcpy(st->cur.host, "web-1");
	ship_state_close(st);
	st = ship_state_open(path, &dropped, err, sizeof(err));
	ok(st->dead.epoch == 5000 && !st->dead.closed && dropped == 0,
	   "a successor that read nothing, killed: the dead epoch it had to close stays");
	ship_state_close(st);

	/* of another version: started anew */
	fd = open(path, O_WRONLY);
	ok(pwrite(fd, "\x09\0\0\0", 4, 8) == 4, "a state file of another version");
	close(fd);
	fclose(stderr);
	stderr = fopen("/dev/null", "w");
	st = ship_state_open(path, &dropped, err, sizeof(err));
	ok(st->cur.epoch == 0 && st->dead.epoch == 0, "another version: started anew");
	ship_state_close(st);

	/* not a state file: refused, left as it is */
	fd = open(path, O_WRONLY | O_TRUNC);
	ok(write(fd, "hello", 5) == 5, "a file of something else");
	close(fd);
	pid = fork();
	if (pid == 0) {
		uint64_t d;

		_exit(ship_state_open(path, &d, err, sizeof(err)) ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) != 0 && stat(path, &sb) == 0 &&
	   sb.st_size == 5, "a file that is not a state file: refused, untouched");
	/* another name of it */
	snprintf(dir2, sizeof(dir2), "%s/link", dir);
	unlink(path);
	st = ship_state_open(path, &dropped, err, sizeof(err));
	ship_state_close(st);
	ok(link(path, dir2) == 0, "a hard link to the state file");
	pid = fork();
	if (pid == 0) {
		uint64_t d;

		_exit(ship_state_open(path, &d, err, sizeof(err)) ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) != 0, "a state file with two names: refused");
	unlink(dir2);

	unlink(path);
	rmdir(dir);
}

int main(void)
{
	test_line_seq();
	test_chunks();
	test_full();
	test_file();
	return done_testing();
}
