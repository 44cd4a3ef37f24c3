// SPDX-License-Identifier: GPL-2.0
/*
 * bin2text: a binary log (rt-network-bin<cpu>, log_format=both) on
 * standard input, its records as text lines on standard output, made by
 * the module's own formatter (include/tcp_rt_fmt.h, through tcprt's
 * kcompat.h) - the lines rt-network-log<cpu> must hold, byte for byte
 * (selftests/tcp_rt_binary.sh).  On standard error: "records N first F
 * last L gaps G", the records' indexes (G: numbers missing between F and
 * L).  Exits 1 at a record that does not check (tcp_rt_bin_check()),
 * saying where.
 */
#include "../tools/tcprt/kcompat.h"
#include "../include/tcp_rt_fmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	size_t len = 0, size = 1 << 20, off, n;
	unsigned long long count = 0, first = 0, last = 0, gaps = 0;
	char line[TCP_RT_FMT_MAX];
	uint64_t *buf = malloc(size);
	ssize_t got;

	if (!buf)
		return 2;
	/* relay reads hand out whole records; a record is 8-byte aligned */
	for (;;) {
		if (size - len < TCP_RT_BIN_LEN_MAX * 64) {
			size *= 2;
			buf = realloc(buf, size);
			if (!buf)
				return 2;
		}
		got = read(0, (char *)buf + len, size - len);
		if (got < 0) {
			perror("bin2text: read");
			return 2;
		}
		if (!got)
			break;
		len += got;
	}
	for (off = 0; off < len; off += n) {
		const struct tcp_rt_bin *rec = (const void *)((char *)buf + off);

		n = tcp_rt_bin_check(rec, len - off);
		if (!n || n % 8) {
			fprintf(stderr, "bin2text: no record at byte %zu of %zu\n",
				off, len);
			return 1;
		}
		if (count && rec->idx != last + 1)
			gaps += rec->idx > last ? rec->idx - last - 1 : 1;
		if (!count)
			first = rec->idx;
		last = rec->idx;
		count++;
		fwrite(line, 1, tcp_rt_fmt_bin(line, rec), stdout);
	}
	fprintf(stderr, "records %llu first %llu last %llu gaps %llu\n", count,
		first, last, gaps);
	free(buf);
	return 0;
}
