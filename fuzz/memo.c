/* See LICENSE file for copyright and license details. */
/*
 * memo.c fuzzes a memo of content digests as corral_memo_open reads it
 * (CORRAL_OUT/digests, corral-checkout -D): the bytes are the memo file,
 * whose lines may name the stat of the one file of a small tree, then a
 * digest of that file is asked for, the memo saved and read back, and
 * the digest asked again.  Whatever the memo said, the digest of a file
 * whose times are older than the memo must be the one the memo holds,
 * and a saved memo must read back to the same answer.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

static char dir[4200];

/* What tree made, removed at exit (a tmpfs is memory). */
static void
cleanup(void)
{
	char p[4300];

	snprintf(p, sizeof(p), "%s/f", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/memo", dir);
	unlink(p);
	rmdir(dir);
}

/*
 * dir/f, made once, with times long past; dir on a tmpfs when there is
 * one, as every save fsyncs (a hundred runs a second on a disk).
 */
static const char *
tree(void)
{
	struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	char p[4300];

	if (dir[0])
		return dir;
	snprintf(dir, sizeof(dir), "/dev/shm/corral-fuzz-memo.XXXXXX");
	if (!mkdtemp(dir))
		snprintf(dir, sizeof(dir), "%s", fuzz_dir());
	snprintf(p, sizeof(p), "%s/f", dir);
	fuzz_put(p, "content\n", 8);
	if (utimensat(AT_FDCWD, p, old, 0) < 0)
		abort();
	atexit(cleanup);
	return dir;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = tree();
	unsigned char first[32], again[32];
	struct corral_memo *m;
	char path[4300];
	int dfd;

	snprintf(path, sizeof(path), "%s/memo", dir);
	fuzz_put(path, data, size);
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY)) < 0 ||
	    !(m = corral_memo_open(path)))
		abort();
	if (corral_memo_digest(m, dfd, "f", first) < 0)
		abort();
	(void)corral_memo_save(m);
	corral_memo_free(m);
	if (!(m = corral_memo_open(path)) ||
	    corral_memo_digest(m, dfd, "f", again) < 0)
		abort();
	corral_memo_free(m);
	close(dfd);
	if (memcmp(first, again, 32))
		abort();
	return 0;
}
