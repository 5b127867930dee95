/* See LICENSE file for copyright and license details. */
/*
 * time.c: the two clocks a record needs, wall time for "at" (UTC, ISO
 * 8601) and a monotonic clock for durations, which must not jump.
 */
#include <stdio.h>
#include <time.h>

#include "base/base.h"

void
corral_time_iso(char out[CORRAL_TIME_ISO_SIZE])
{
	struct timespec ts;
	struct tm tm;
	unsigned ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(out, CORRAL_TIME_ISO_SIZE, "%Y-%m-%dT%H:%M:%S", &tm);
	ms = (unsigned)(ts.tv_nsec / 1000000) % 1000;
	out[19] = '.';
	out[20] = (char)('0' + ms / 100);
	out[21] = (char)('0' + ms / 10 % 10);
	out[22] = (char)('0' + ms % 10);
	out[23] = 'Z';
	out[24] = '\0';
}

long long
corral_time_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long
corral_time_epoch_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
corral_duration_format(long long ms, char out[32])
{
	if (ms < 0)
		snprintf(out, 32, "?");
	else if (ms < 60000)
		snprintf(out, 32, "%lld.%llds", ms / 1000, ms % 1000 / 100);
	else if (ms < 3600000)
		snprintf(out, 32, "%lldm%02llds", ms / 60000, ms / 1000 % 60);
	else
		snprintf(out, 32, "%lldh%02lldm", ms / 3600000,
		    ms / 60000 % 60);
}
