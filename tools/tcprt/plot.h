/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gnuplot for the --plot options (tcprt summary, series, fleet series):
 * its commands written to a pipe, the PNG they name its only output.
 */
#ifndef TCPRT_PLOT_H
#define TCPRT_PLOT_H

#include <stdio.h>

/*
 * gnuplot, its standard output thrown away (a PNG it could not open as
 * asked would otherwise come out on ours), and SIGPIPE ignored until
 * gnuplot_close(), so that a gnuplot missing or dead is told by its
 * status.  NULL, said, when it cannot be started.
 */
FILE *gnuplot_open(void);

/* Its end: 0, or -1 said with @png named (127: the shell did not find it). */
int gnuplot_close(FILE *gp, const char *png);

#endif
