/* See LICENSE file for copyright and license details. */
/*
 * time.c: the two clocks a record needs, wall time for "at" (UTC, ISO
 * 8601) and a monotonic clock for durations, which must not jump.
 */
#include <time.h>

#include "corral.h"

void
corral_time_iso(char out[21])
{
	struct tm tm;
	time_t now = time(NULL);

	gmtime_r(&now, &tm);
	strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

long long
corral_time_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
