/* See LICENSE file for copyright and license details. */
/*
 * corral-cache looks after a result cache: the local one in CORRAL_OUT
 * (OUT/cache, the default) or a CORRAL_CACHE directory.  stats counts its
 * entries and bytes; prune removes the oldest results until the rest fit
 * a size; verify removes every entry that does not parse or whose recorded
 * key is not its own, and lists the units that hit in the last run;
 * explain says why a unit hit or missed in the last run, part by part.
 * Exit 0, 1 when explain knows nothing of the unit, 2 on a usage or I/O
 * error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

static const struct corral_usage use = {
	"corral-cache [-h] [-d DIR] stats | prune -s SIZE | verify | "
	"explain UNIT",
	"-d DIR\tthe store (default .corral/cache, the local one)\n"
	"-s SIZE\tprune: keep at most SIZE bytes of results (K, M, G; also "
	"--max-size)",
	NULL
};

static int
cmd_stats(const char *dir)
{
	struct corral_cache_stats st;
	struct corral_err err;

	if (corral_cache_stats(dir, &st, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	printf("%lld results, %lld bytes, %lld units known\n", st.entries,
	    st.bytes, st.manifests);
	return CORRAL_EXIT_OK;
}

static int
cmd_prune(const char *dir, int argc, char *argv[])
{
	struct corral_err err;
	long long max, removed;

	if (argc != 2 || (strcmp(argv[0], "-s") &&
	    strcmp(argv[0], "--max-size")))
		corral_usage(&use, CORRAL_EXIT_ERR);
	if (corral_size_parse(argv[1], &max, "-s", &err) < 0 ||
	    corral_cache_prune(dir, max, &removed, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	printf("removed %lld results\n", removed);
	return CORRAL_EXIT_OK;
}

static int
cmd_verify(const char *dir)
{
	struct corral_strv hits = CORRAL_STRV_INIT;
	struct corral_err err;
	long long removed;
	size_t i;

	if (corral_cache_verify(dir, &removed, &hits, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	printf("removed %lld unreadable results\n", removed);
	for (i = 0; i < hits.n; i++)
		corral_showf(stdout, "hit %s\n", hits.v[i]);
	corral_strv_release(&hits);
	return CORRAL_EXIT_OK;
}

static int
cmd_explain(const char *dir, const char *unit)
{
	struct corral_buf out = CORRAL_BUF_INIT;
	struct corral_err err;
	int rc = corral_cache_explain(dir, unit, &out, &err);

	if (rc < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (rc == 1) {
		corral_warn("the cache '%s' knows nothing of '%s'", dir, unit);
		return CORRAL_EXIT_NO;
	}
	corral_showf(stdout, "%s", out.data);
	corral_buf_release(&out);
	return CORRAL_EXIT_OK;
}

int
main(int argc, char *argv[])
{
	const char *dir = ".corral/cache", *cmd;
	int c, rc;

	corral_setprogname(argv[0]);
	corral_usage_check_command(&use, argc, argv);
	while ((c = getopt(argc, argv, "+d:h")) != -1) {
		switch (c) {
		case 'd': dir = optarg; break;
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
	if (optind >= argc)
		corral_usage(&use, CORRAL_EXIT_ERR);
	cmd = argv[optind++];
	/* The server keeps (and prunes) an HTTP store: nothing here lists it. */
	if (!strncmp(dir, "http://", 7) || !strncmp(dir, "https://", 8))
		corral_die(CORRAL_EXIT_ERR, "'%s' is an HTTP store: corral-cache "
		    "reads a directory (the local one, or a CORRAL_CACHE "
		    "directory)", dir);
	if (!strcmp(cmd, "stats") && optind == argc)
		rc = cmd_stats(dir);
	else if (!strcmp(cmd, "prune"))
		rc = cmd_prune(dir, argc - optind, argv + optind);
	else if (!strcmp(cmd, "verify") && optind == argc)
		rc = cmd_verify(dir);
	else if (!strcmp(cmd, "explain") && optind + 1 == argc)
		rc = cmd_explain(dir, argv[optind]);
	else
		corral_usage(&use, CORRAL_EXIT_ERR);
	if (fflush(stdout) != 0 || ferror(stdout))
		corral_die(CORRAL_EXIT_ERR, "cannot write to stdout:");
	return rc;
}
