/* notes-stats.c -- print how many notes a file holds, and the mean
 * length of the last few. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notes.h"

int
main(int argc, char *argv[])
{
	struct ring r;
	char *line;
	FILE *fp;

	if (argc != 2) {
		fprintf(stderr, "usage: notes-stats FILE\n");
		return 2;
	}
	if (!(line = malloc(LINE_LEN)))
		return 2;
	if (!(fp = fopen(argv[1], "r"))) {
		perror(argv[1]);
		free(line);
		return 2;
	}
	ring_clear(&r);
	while (fgets(line, LINE_LEN, fp))
		ring_push(&r, (int)strcspn(line, "\n"));
	fclose(fp);
	free(line);
	printf("%d notes; the last %d are %.1f characters long on average\n",
	    count_lines(argv[1]), r.used, mean_length(r.len, r.used));
	return 0;
}
