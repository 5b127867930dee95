/* See LICENSE file for copyright and license details. */
/*
 * cjson-parse.c -- the reference of bench/table.sh's merge ratio: read
 * every line of the files named and parse it with cJSON as corral does
 * (cJSON_ParseWithLengthOpts over len + 1, the NUL required to end the
 * value), then free it; print the number of lines parsed.  Nothing is
 * routed or written: this is the parser's own rate, the ceiling of any
 * merge built on it.  Built by table.sh, never installed.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

int
main(int argc, char *argv[])
{
	char *line = NULL;
	size_t cap = 0, n = 0;
	ssize_t len;
	const char *end;
	cJSON *doc;
	FILE *fp;
	int i;

	for (i = 1; i < argc; i++) {
		if (!(fp = fopen(argv[i], "r"))) {
			perror(argv[i]);
			return 2;
		}
		while ((len = getline(&line, &cap, fp)) > 0) {
			if (line[len - 1] == '\n')
				line[--len] = '\0';
			if ((doc = cJSON_ParseWithLengthOpts(line,
			    (size_t)len + 1, &end, 1)))
				n++;
			cJSON_Delete(doc);
		}
		fclose(fp);
	}
	free(line);
	printf("%zu\n", n);
	return 0;
}
