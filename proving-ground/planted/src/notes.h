/* notes.h -- notes-stats: statistics over a notes file. */
#ifndef NOTES_H
#define NOTES_H

#define RING_SIZE 8
#define LINE_LEN 4096

/* The lengths of the last RING_SIZE notes. */
struct ring {
	int len[RING_SIZE];
	int next;
	int used;
};

int count_lines(const char *path);
void ring_clear(struct ring *r);
void ring_push(struct ring *r, int v);
double mean_length(const int *len, int n);

#endif
