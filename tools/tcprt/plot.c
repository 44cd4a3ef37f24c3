// SPDX-License-Identifier: GPL-2.0
/* gnuplot for the --plot options: see plot.h. */
#include "plot.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "util.h"

/* SIGPIPE's handler before gnuplot_open(); one plot at a time */
static void (*pipe_was)(int);

FILE *gnuplot_open(void)
{
	FILE *gp;

	pipe_was = signal(SIGPIPE, SIG_IGN);
	gp = popen("exec gnuplot >/dev/null", "w");
	if (!gp) {
		warnx_("cannot run gnuplot: %s (apt install gnuplot-nox)",
		       strerror(errno));
		signal(SIGPIPE, pipe_was);
	}
	return gp;
}

int gnuplot_close(FILE *gp, const char *png)
{
	int st = pclose(gp);

	signal(SIGPIPE, pipe_was);
	if (st == 0)
		return 0;
	if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 127)
		warnx_("gnuplot not found (apt install gnuplot-nox): no %s", png);
	else
		warnx_("gnuplot failed (status %d): no %s",
		       st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : st, png);
	return -1;
}
