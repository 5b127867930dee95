/* See LICENSE file for copyright and license details. */
/*
 * corral-parts answers two questions about parts.  With -k: does every
 * PART exist in SRC?  Each one that does not is named on one line, with
 * the nearest existing path when one is a slip away, and the answer is
 * exit 1; corral.mk asks before any unit runs.  With -H: which parts did
 * corral learn the units read (CORRAL_PARTS = auto)?  It prints them from
 * HISTORY, the union of the named units' (or of every unit's) sets, one
 * a line, sorted, each once, ready to copy into CORRAL_PARTS; -u prints
 * each unit's instead, "UNIT<TAB>PART".  Exit 2 on a usage or I/O error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral.h"
#include "tool/tool.h"

static const struct corral_usage use = {
	"corral-parts -k [-C SRC] [PART...]\n"
	"corral-parts [-u] -H HISTORY [UNIT...]",
	"-C SRC\tthe tree the parts are in (default .)\n"
	"-H HISTORY\tprint the parts learned there\n"
	"-k\tcheck that each PART exists; exit 1 naming those that do not\n"
	"-u\tone line per unit and part: UNIT, a tab, PART",
	NULL
};

static int
check_parts(const char *src, char **parts, int n)
{
	struct corral_err err;
	char *near;
	int i, st = CORRAL_EXIT_OK, found;

	if (access(src, X_OK) < 0)
		corral_die(CORRAL_EXIT_ERR, "cannot open '%s':", src);
	for (i = 0; i < n; i++) {
		if ((found = corral_part_nearest(src, parts[i], &near,
		    &err)) < 0)
			corral_die_err(CORRAL_EXIT_ERR, &err);
		if (found)
			continue;
		if (near)
			corral_warn("part '%s' not found in '%s'; nearest is "
			    "'%s'", parts[i], src, near);
		else
			corral_warn("part '%s' not found in '%s'", parts[i],
			    src);
		free(near);
		st = CORRAL_EXIT_NO;
	}
	return st;
}

static void
add_set(struct corral_strv *out, const char *unit,
    const struct corral_strv *set, int per_unit)
{
	struct corral_buf b = CORRAL_BUF_INIT;
	size_t i;

	for (i = 0; i < set->n; i++) {
		corral_buf_reset(&b);
		if ((per_unit ? corral_buf_addf(&b, "%s\t%s", unit,
		    set->v[i]) : corral_buf_addstr(&b, set->v[i])) < 0 ||
		    corral_strv_add(out, b.data) < 0)
			corral_die(CORRAL_EXIT_ERR, "out of memory:");
	}
	corral_buf_release(&b);
}

static int
print_learned(const char *history, char **units, int n, int per_unit)
{
	struct corral_strv out = CORRAL_STRV_INIT;
	const struct corral_strv *set;
	struct corral_learned l;
	struct corral_err err;
	size_t i;
	int k;

	if (corral_learned_read(&l, history, &err) < 0)
		corral_die_err(CORRAL_EXIT_ERR, &err);
	for (i = 0; i < l.dropped.n; i++)
		corral_warn("%s", l.dropped.v[i]);
	for (k = 0; k < n; k++)
		if ((set = corral_learned_of(&l, units[k])))
			add_set(&out, units[k], set, per_unit);
		else
			corral_warn("nothing learned for unit '%s' in '%s'",
			    units[k], history);
	for (i = 0; n == 0 && i < l.n; i++)
		add_set(&out, l.units.v[i], &l.sets[i], per_unit);
	corral_strv_sort_unique(&out);
	for (i = 0; i < out.n; i++)
		printf("%s\n", out.v[i]);
	corral_strv_release(&out);
	corral_learned_release(&l);
	xflush_stdout();
	return CORRAL_EXIT_OK;
}

int
main(int argc, char *argv[])
{
	const char *src = NULL, *history = NULL;
	int c, check = 0, per_unit = 0;

	corral_setprogname(argv[0]);
	corral_usage_check(&use, argc, argv);
	while ((c = getopt(argc, argv, "C:H:hku")) != -1) {
		switch (c) {
		case 'C': src = optarg; break;
		case 'H': history = optarg; break;
		case 'h': corral_usage(&use, CORRAL_EXIT_OK); break;
		case 'k': check = 1; break;
		case 'u': per_unit = 1; break;
		default: corral_usage(&use, CORRAL_EXIT_ERR);
		}
	}
	if (check == !!history || (check && per_unit) || (!check && src))
		corral_usage(&use, CORRAL_EXIT_ERR);
	if (check)
		return check_parts(src ? src : ".", argv + optind,
		    argc - optind);
	return print_learned(history, argv + optind, argc - optind, per_unit);
}
