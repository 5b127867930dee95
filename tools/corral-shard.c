/* See LICENSE file for copyright and license details. */
/*
 * corral-shard says which units are this host's.  With -k K -n N it
 * prints shard K of N of the population UNITS (standard input when
 * absent), one unit a line: a cut every host computes alike, by a digest
 * of each unit's name, or by the durations of a history file every host
 * is given (-H).  With -m it also writes the shard's manifest, which
 * names every sealed log of the directory it is in (logs/ and each
 * rerun/N/logs/): those a merge of the shards takes.  With -e
 * it reads CORRAL_SHARD's value, K/N or auto (then from the variables of
 * the engine that started the job; for Bazel it touches
 * TEST_SHARD_STATUS_FILE), and prints "K N".  Exit 0, or 2 with one line
 * saying what is wrong.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

static const struct corral_usage use = {
	"corral-shard [-H HISTORY] [-m MANIFEST] [-r RUN] [-s HOST] "
	"-k K -n N [UNITS]\n"
	"corral-shard [-t TOTAL] -e SPEC",
	"-e SPEC\tprint the shard SPEC (K/N or auto) names, as \"K N\"\n"
	"-H HISTORY\tcut by the durations in HISTORY\n"
	"-k K\tthe shard to print, from 1\n"
	"-m MANIFEST\twrite the shard's manifest there\n"
	"-n N\tthe number of shards\n"
	"-r RUN\tthe run id the manifest names\n"
	"-s HOST\tthe host the manifest names (default: this one)\n"
	"-t TOTAL\tthe total for auto when the engine gives none",
	NULL
};

static const char *total;	/* -t: CORRAL_SHARD_TOTAL's value */

static const char *
env(const char *name)
{
	if (total && *total && !strcmp(name, "CORRAL_SHARD_TOTAL"))
		return total;
	return getenv(name);
}

/* -e: the shard spec names; Bazel wants its status file touched. */
static int
resolve(const char *spec)
{
	struct corral_shard sh;
	struct corral_err err;
	FILE *fp;

	if (corral_shard_parse(spec, env, &sh, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	if (sh.status_file && *sh.status_file) {
		if (!(fp = fopen(sh.status_file, "a")) || fclose(fp) == EOF)
			corral_die(CORRAL_EXIT_ERR, "cannot touch '%s':",
			    sh.status_file);
	}
	printf("%ld %ld\n", sh.k, sh.n);
	return CORRAL_EXIT_OK;
}

static long
number(const char *opt, const char *s)
{
	struct corral_err err;
	long long v;

	if (corral_strtonum(s, 1, 999999999, &v, opt, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	return (long)v;
}

static void
write_manifest(const char *path, struct corral_shard_manifest *m,
    const struct corral_strv *units)
{
	struct corral_strv skipped = CORRAL_STRV_INIT;
	struct corral_buf b = CORRAL_BUF_INIT;
	struct corral_err err;
	char *dir;
	size_t i;

	m->population_units = units->n;
	m->version = CORRAL_VERSION;
	if (corral_shard_population(units, m->population, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	/* The logs beside the manifest: those it vouches for. */
	dir = corral_path_dir(path);
	if (!dir)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (corral_shard_manifest_logs(m, dir, &skipped, &err) < 0 ||
	    corral_shard_manifest_notes(m, dir, &skipped, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	for (i = 0; i < skipped.n; i++)
		corral_warn("%s; the manifest does not vouch for it",
		    skipped.v[i]);
	free(dir);
	corral_strv_release(&skipped);
	if (corral_shard_manifest_format(m, &b) < 0)
		corral_die(CORRAL_EXIT_ERR, "out of memory:");
	if (corral_atomic_file(path, b.data, b.len, CORRAL_ATOMIC_KEEP_SAME,
	    &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	corral_buf_release(&b);
	for (i = 0; i < m->nlogs; i++)
		corral_shard_log_release(&m->logs[i]);
	free(m->logs);
	for (i = 0; i < m->nnotes; i++)
		free(m->notes[i].path);
	free(m->notes);
}

/* Print shard m->k of m->n of the population in file; -m's manifest. */
static int
run_cut(const char *file, const char *history, const char *manifest,
    struct corral_shard_manifest *m)
{
	struct corral_strv units = CORRAL_STRV_INIT;
	struct corral_err err;
	size_t *bin, i;

	if (corral_units_load(file, '\n', &units, 0, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	bin = xcalloc(units.n + 1, sizeof(*bin));
	if (corral_shard_assign(&units, history, m->n, bin, m->plan, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	for (i = 0; i < units.n; i++)
		if (bin[i] == (size_t)(m->k - 1)) {
			printf("%s\n", units.v[i]);
			m->units++;
		}
	if (manifest)
		write_manifest(manifest, m, &units);
	free(bin);
	corral_strv_release(&units);
	return CORRAL_EXIT_OK;
}

int
main(int argc, char *argv[])
{
	struct corral_shard_manifest m;
	const char *spec = NULL, *history = NULL, *manifest = NULL;
	const char *kstr = NULL, *nstr = NULL;
	char host[HOST_NAME_MAX + 1] = "unknown";
	int c, status;

	corral_setprogname(argv[0]);
	corral_usage_check(&use, argc, argv);
	memset(&m, 0, sizeof(m));
	m.run = "none";
	while ((c = getopt(argc, argv, "e:hH:k:m:n:r:s:t:")) != -1) {
		switch (c) {
		case 'e': spec = optarg; break;
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		case 'H': history = optarg; break;
		case 'k': kstr = optarg; break;
		case 'm': manifest = optarg; break;
		case 'n': nstr = optarg; break;
		case 'r': m.run = optarg; break;
		case 's': m.host = optarg; break;
		case 't': total = optarg; break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
	if (spec ? kstr || nstr || optind < argc : !kstr || !nstr ||
	    argc - optind > 1)
		corral_usage(&use, CORRAL_EXIT_ERR);
	if (spec)
		status = resolve(spec);
	else {
		m.k = number("-k", kstr);
		m.n = number("-n", nstr);
		if (m.k > m.n)
			corral_die(CORRAL_EXIT_ERR, "-k %ld: there are only "
			    "%ld shards", m.k, m.n);
		if (!m.host || !*m.host)
			m.host = gethostname(host, sizeof(host) - 1) == 0 ?
			    host : "unknown";
		status = run_cut(optind < argc ? argv[optind] : "-", history,
		    manifest, &m);
	}
	if (fflush(stdout) == EOF || ferror(stdout))
		corral_die(CORRAL_EXIT_ERR, "cannot write standard output:");
	return status;
}
