/* stats.c -- the mean length of some notes. */
#include "notes.h"

double
mean_length(const int *len, int n)
{
	int i, sum;

	for (i = 0; i < n; i++)
		sum += len[i];
	return n > 0 ? (double)sum / n : 0;
}
