/* count.c -- the number of notes in a file. */
#include <stdio.h>
#include <stdlib.h>

#include "notes.h"

/* The number of lines of path, or -1 when it cannot be read. */
int
count_lines(const char *path)
{
	char *buf;
	FILE *fp;
	int n = 0;

	if (!(buf = malloc(LINE_LEN)))
		return -1;
	if (!(fp = fopen(path, "r"))) {
		free(buf);
		return -1;
	}
	while (fgets(buf, LINE_LEN, fp))
		n++;
	fclose(fp);
	free(buf);
	return n;
}
