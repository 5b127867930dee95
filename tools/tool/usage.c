/* See LICENSE file for copyright and license details. */
/*
 * usage.c is what every program says about itself: the synopsis and one
 * line per option for -h and --help (on stdout, exit 0), the synopsis
 * alone for a usage error (on stderr, exit 2), and "PROGRAM VERSION" with
 * the copyright and licence lines for --version.  --help and --version count anywhere among the options, as
 * with GNU's getopt_long, and the option lines say which options take a
 * value, so that "-t --help" stays a value.  It prints and exits: it is
 * the programs' (tools/tool/), and the library never calls it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

/* Each form of the synopsis on a line: "usage: " first, then indented. */
static void
print_synopsis(FILE *fp, const char *synopsis)
{
	const char *p = synopsis, *nl;
	const char *lead = "usage: ";

	for (; *p; p = nl + (*nl == '\n'), lead = "       ") {
		nl = p + strcspn(p, "\n");
		fprintf(fp, "%s%.*s\n", lead, (int)(nl - p), p);
	}
}

/* Each "OPTION\tWHAT" line of options as "  OPTION      WHAT". */
static void
print_options(FILE *fp, const char *options)
{
	const char *p = options, *nl, *tab;

	for (; *p; p = nl + (*nl == '\n')) {
		nl = p + strcspn(p, "\n");
		tab = memchr(p, '\t', (size_t)(nl - p));
		if (!tab)
			tab = nl;
		fprintf(fp, "  %-14.*s %.*s\n", (int)(tab - p), p,
		    (int)(nl - tab - (tab < nl)), tab + (tab < nl));
	}
}

/* Flush stdout and exit status, or 2 when standard output took no write. */
static void __attribute__((noreturn))
finish(int status)
{
	xflush_stdout();
	exit(status);
}

void
corral_usage(const struct corral_usage *u, int status)
{
	FILE *fp = status == CORRAL_EXIT_OK ? stdout : stderr;

	print_synopsis(fp, u->synopsis);
	if (fp == stdout) {
		print_options(stdout, "-h, --help\tprint this help and exit");
		print_options(stdout, "--version\tprint the version and exit");
		if (u->options)
			print_options(stdout, u->options);
		if (u->more)
			u->more(stdout);
	}
	finish(status);
}

void
corral_usage_version(const struct corral_usage *u)
{
	/* the synopsis's first word: corral-lock names itself corral */
	printf("%.*s %s\n%s", (int)strcspn(u->synopsis, " \n"), u->synopsis,
	    CORRAL_VERSION, CORRAL_VERSION_NOTICE);
	finish(CORRAL_EXIT_OK);
}

/*
 * Whether the option line head p (up to its tab: "-C DIR", "-j, --junit
 * FILE") names the option name (n bytes: one letter, or a long name
 * without its "--") and a value after it.
 */
static int
line_takes_value(const char *p, const char *name, size_t n)
{
	size_t len;
	int named = 0;

	for (; *p && *p != '\t' && *p != '\n'; p += strspn(p, " ,")) {
		len = strcspn(p, " ,\t\n");
		if (len > 2 && p[0] == '-' && p[1] == '-')
			named |= len - 2 == n && !strncmp(p + 2, name, n);
		else if (len == 2 && p[0] == '-')
			named |= n == 1 && p[1] == *name;
		else
			return named;
		p += len;
	}
	return 0;
}

/* Whether an option of u takes a value, by its lines; one none names, not. */
static int
takes_value(const struct corral_usage *u, const char *name, size_t n)
{
	const char *p;

	for (p = u->options; p && *p; p += *p == '\n') {
		if (line_takes_value(p, name, n))
			return 1;
		p += strcspn(p, "\n");
	}
	return 0;
}

/* corral_usage_check's walk; with command, the first operand ends it. */
static void
check(const struct corral_usage *u, int argc, char *argv[], int command)
{
	const char *a;
	int i, j;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		a = argv[i];
		if (!strcmp(a, "--help"))
			corral_usage(u, CORRAL_EXIT_OK);
		if (!strcmp(a, "--version"))
			corral_usage_version(u);
		if (a[0] != '-' || !a[1]) {
			if (command)
				return;
		} else if (a[1] == '-') {
			if (!strchr(a, '=') && takes_value(u, a + 2, strlen(a + 2)))
				i++;
		} else {
			for (j = 1; a[j]; j++)
				if (takes_value(u, a + j, 1)) {
					i += !a[j + 1];
					break;
				}
		}
	}
}

void
corral_usage_check(const struct corral_usage *u, int argc, char *argv[])
{
	check(u, argc, argv, 0);
}

void
corral_usage_check_command(const struct corral_usage *u, int argc,
    char *argv[])
{
	check(u, argc, argv, 1);
}

int
corral_usage_only_h(const struct corral_usage *u, int argc, char *argv[],
    int most)
{
	int c;

	corral_usage_check(u, argc, argv);
	while ((c = getopt(argc, argv, "h")) != -1)
		corral_usage(u, c == 'h' ? CORRAL_EXIT_OK : CORRAL_EXIT_ERR);
	if (argc - optind > most)
		corral_usage(u, CORRAL_EXIT_ERR);
	return optind;
}
