/* See LICENSE file for copyright and license details. */
/*
 * base.h: what every area of libcorral builds on -- errors and messages,
 * buffers, string vectors, hash sets, lines, time, option values, atomic
 * files, a tree removed, SHA-256, reading a population, starting
 * children, the run lock and small JSON objects.  The library reports and
 * the tool decides: nothing declared here exits but corral_child_exit,
 * which ends a forked child (what exits is tools/tool/tool.h's), and only
 * the corral_warn family, for tools/, prints (and corral_units_load when
 * asked to warn).  Functions that can fail return 0 or a pointer on
 * success and -1 or NULL on failure, filling a caller-supplied struct
 * corral_err with a one-line message.
 */
#ifndef CORRAL_BASE_H
#define CORRAL_BASE_H

#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#define CORRAL_VERSION "0.1.0"
/*
 * What --version prints after "PROGRAM VERSION", as GNU programs do; the
 * programs in sh get the same lines from build-aux/mkscript.
 */
#define CORRAL_VERSION_NOTICE \
	"Copyright (C) 2026 the corral authors.\n" \
	"License MIT: <https://opensource.org/licenses/MIT>.\n" \
	"This is free software: you are free to change and redistribute it.\n" \
	"There is NO WARRANTY, to the extent permitted by law.\n"

/*
 * Where an install keeps the test helpers (corral-marker-find and
 * corral-marker-patch, the example finder and patcher that corral fix
 * defaults to and the doctor and the proving ground use), relative to
 * its bindir: libexecdir/corral, not bindir.  A build keeps them in bin/
 * with the rest.
 */
#define CORRAL_HELPER_DIR	"../libexec/corral"

/* Exit statuses, the contract of every program (README "Exit status"). */
enum {
	CORRAL_EXIT_OK = 0,	/* success */
	CORRAL_EXIT_NO = 1,	/* ran, and the answer is "no" (failures) */
	CORRAL_EXIT_ERR = 2	/* usage error, bad input, or I/O failure */
};

/* ------------------------------------------------------------------ */
/* err.c: messages, in one format: "progname: what went wrong"         */

/*
 * A library error: the message, and the errno that caused it (0 if none).
 * The tool prints it; a message ends without strerror, which the printer
 * appends when errnum is set.
 */
struct corral_err {
	char msg[1024];
	int errnum;
};

/* Set err (if not NULL) and return -1.  errnum 0 means "no errno". */
int corral_err_set(struct corral_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Set the program name printed before every message (argv[0]'s base). */
void corral_setprogname(const char *argv0);
const char *corral_progname(void);

/*
 * Print "progname: message" to stderr.  A format ending in ':' appends
 * " strerror(errno)".  corral_error returns -1.  corral_vwarn is
 * corral_warn of a va_list (for the programs' corral_die).
 */
void corral_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int corral_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void corral_vwarn(const char *fmt, va_list ap)
	__attribute__((format(printf, 1, 0)));
/* Print a library error as "progname: msg[: strerror]". */
void corral_warn_err(const struct corral_err *err);
/*
 * Every one of these prints through corral_buf_add_shown: the messages
 * above as one line; corral_show and corral_showf text of many lines to
 * fp (stdout: a summary, a report a person reads).  Output that a
 * program reads (a list of units, JSON) is written as it is.
 */
void corral_show(FILE *fp, const char *s, size_t n);
void corral_showf(FILE *fp, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * _exit(2) from a forked child (never a vfork one).  A coverage build
 * (-DCORRAL_COVERAGE) first writes the child's gcov counters, which
 * _exit would drop, so the work done in fix workers and the watchdog
 * counts.
 */
void corral_child_exit(int status) __attribute__((noreturn));

/*
 * Every program carries CORRAL_VERSION_TAG CORRAL_VERSION, NUL-ended, in
 * its read-only data (err.c), where corral-doctor and what(1) find it.
 */
#define CORRAL_VERSION_TAG "@(#)corral "
extern const char corral_version_tag[];

/* ------------------------------------------------------------------ */
/* parse.c: option values that are numbers, durations and sizes        */

/*
 * Parse a decimal integer in [min, max] the way OpenBSD strtonum does.
 * Returns 0 and sets *out, or -1 with a message in err naming `what`.
 */
int corral_strtonum(const char *s, long long min, long long max,
    long long *out, const char *what, struct corral_err *err);

/*
 * Seconds, a fraction allowed ("2", "0.25", "5."; past the third decimal
 * its digits count for nothing), as milliseconds in *ms.  0, or -1 with a message naming `what` in err.
 */
int corral_seconds_parse(const char *s, long long *ms, const char *what,
    struct corral_err *err);
/*
 * A size in bytes, with an optional K, M or G suffix (powers of 1024).
 * 0, or -1 with a message naming `what` in err.
 */
int corral_size_parse(const char *s, long long *bytes, const char *what,
    struct corral_err *err);
/* ms as seconds for a message: "2s", "0.25s", "1.5s". */
void corral_seconds_format(long long ms, char out[32]);

/* Limits set on each unit with setrlimit(2) before it starts; 0: none. */
struct corral_limits {
	long long cpu;		/* RLIMIT_CPU, seconds (hard limit one more) */
	long long mem;		/* RLIMIT_AS, bytes */
	long long fsize;	/* RLIMIT_FSIZE, bytes */
};

/*
 * One limit as corral-run-slice's -L takes it: cpu=SECS, mem=SIZE or
 * fsize=SIZE, into l.  0, or -1 with a message in err.
 */
int corral_limit_parse(struct corral_limits *l, const char *arg,
    struct corral_err *err);
/*
 * Exit codes separated by commas ("23,66"): codes[c] = 1 for each.  0,
 * or -1 with a message naming `what` in err.
 */
int corral_codes_parse(unsigned char codes[256], const char *arg,
    const char *what, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* buf.c: a growable byte buffer (sds-like), always NUL-terminated     */

struct corral_buf {
	char *data;	/* NULL until the first append */
	size_t len;
	size_t cap;
};

#define CORRAL_BUF_INIT { NULL, 0, 0 }

/* Each returns 0, or -1 with errno ENOMEM (the buffer is then unchanged). */
int corral_buf_add(struct corral_buf *b, const void *p, size_t n);
int corral_buf_addstr(struct corral_buf *b, const char *s);
int corral_buf_addch(struct corral_buf *b, int c);
int corral_buf_addf(struct corral_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* corral_buf_addf with a va_list, which it consumes (the caller va_ends). */
int corral_buf_vaddf(struct corral_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Append s (n bytes) as a JSON string literal, quotes included. */
int corral_buf_addjson(struct corral_buf *b, const char *s, size_t n);
/*
 * The one rule for a line a person reads on a terminal (messages, the
 * scoreboard, progress, corral-status, reports in text): append s (n
 * bytes) with every byte that could drive the terminal shown as '?' --
 * C0 controls, DEL, C1 controls (U+0080..U+009F), and each byte of a
 * sequence that is not well-formed UTF-8 -- so that a unit's name or
 * note cannot retitle, clear or rewrite the screen.  With
 * CORRAL_SHOWN_LINES, newline and tab are kept (text of many lines);
 * without, they too are '?' (one line).  0, or -1 (ENOMEM; b unchanged).
 */
#define CORRAL_SHOWN_LINES	1
int corral_buf_add_shown(struct corral_buf *b, const char *s, size_t n,
    int flags);
void corral_buf_reset(struct corral_buf *b);		/* len = 0, keeps memory */
void corral_buf_release(struct corral_buf *b);		/* frees data */

/* ------------------------------------------------------------------ */
/* strv.c: a vector of NUL-terminated strings                          */

struct corral_strv {
	char **v;	/* v[n] is NULL */
	size_t n;
	size_t cap;
};

#define CORRAL_STRV_INIT { NULL, 0, 0 }

/* Append a copy of s (n bytes).  0, or -1 with errno ENOMEM. */
int corral_strv_addn(struct corral_strv *sv, const char *s, size_t n);
int corral_strv_add(struct corral_strv *sv, const char *s);
void corral_strv_release(struct corral_strv *sv);	/* frees every string */
/* Sort sv bytewise (strcmp) and free repeats, keeping each string once. */
void corral_strv_sort_unique(struct corral_strv *sv);
/* The words of text (split at spaces, tabs and newlines), appended. */
int corral_words(const char *text, struct corral_strv *words);
/* Whether s is one of sv's strings (sv may be NULL: none). */
int corral_strv_has(const struct corral_strv *sv, const char *s);
/* Append sv as a JSON array of strings: 0, or -1 (ENOMEM). */
int corral_strv_json(struct corral_buf *b, const struct corral_strv *sv);

/* ------------------------------------------------------------------ */
/* line.c: where a line ends                                           */

/*
 * The length of line[0..len) without its line ending: a final '\n', then
 * one '\r' just before it (CR LF and LF end a line alike; the last line of
 * a file may lack the '\n', and its final '\r' is still the ending).  Each
 * byte cut is made NUL.  Every reader of lines uses this, so a CR means
 * one thing everywhere.
 */
size_t corral_line_chomp(char *line, size_t len);
/*
 * 1 when s[0..n) is empty or only spaces, tabs and CRs: a blank line of a
 * JSON lines file, which readers skip (JSON's whitespace around a value).
 */
int corral_line_blank(const char *s, size_t n);
/*
 * One step through a stream that comes in pieces cut anywhere, as lines
 * of at most max bytes: the bytes of *p (*n of them) up to the first
 * '\n' join the line being read in cur (as many as keep it within max;
 * the rest of a longer line is dropped), and *p and *n move past them
 * and that '\n'.  *whole: 1 when the '\n' was reached (cur is the whole
 * line, without it; the caller empties cur), 0 when the piece ran out
 * first.  0, or -1 on ENOMEM (cur lacks the bytes, which are passed over
 * all the same).
 */
int corral_line_take(struct corral_buf *cur, size_t max, const char **p,
    size_t *n, int *whole);

/* ------------------------------------------------------------------ */
/* reader.c: a file read one line at a time                            */

/* A file being read one line at a time, from a buffer of its own. */
struct corral_reader {
	int fd;
	const char *path;
	char *buf;	/* buf[b..e) is read and not yet handed out */
	size_t cap, b, e;
	char *line;	/* in buf */
	size_t len;
	size_t raw;	/* bytes read, '\n' and '\r' included */
	size_t lineno;
	off_t off;	/* where the line starts in the file */
	off_t end;	/* where it ends, its ending included */
	int torn;	/* the line had no '\n' */
	struct stat st;
};

/*
 * Open path for reading (corral_fopen_input) with a large buffer, and
 * fstat it into rd->st.  0, or -1 with err (may be NULL) set.  rd keeps
 * path; release with corral_reader_close.
 */
int corral_reader_open(struct corral_reader *rd, const char *path,
    struct corral_err *err);
void corral_reader_close(struct corral_reader *rd);
/*
 * The next line, without its ending (corral_line_chomp: '\n' or "\r\n"),
 * NUL terminated, in rd->line (good until the next call); rd->raw,
 * rd->torn, rd->lineno, rd->off and rd->end follow.
 * 1: a line; 0: end of file; -1: read error (err set).
 */
int corral_reader_next(struct corral_reader *rd, struct corral_err *err);
/* Back to the first line.  0, or -1 with err set. */
int corral_reader_rewind(struct corral_reader *rd, struct corral_err *err);
/* On from byte off of the file (lineno goes on).  0, or -1 with err set. */
int corral_reader_seek(struct corral_reader *rd, off_t off,
    struct corral_err *err);
/*
 * Up to n bytes from where the lines have got to, into p: how many (0 at
 * the end of the file), or -1 with err set.
 */
ssize_t corral_reader_read(struct corral_reader *rd, char *p, size_t n,
    struct corral_err *err);
/* 1 when the file is not the one first opened (size or mtime moved). */
int corral_reader_changed(struct corral_reader *rd);

/* ------------------------------------------------------------------ */
/* set.c: a hash set of strings mapping each to an integer             */

struct corral_set;

/* NULL with errno ENOMEM.  Free with corral_set_free. */
struct corral_set *corral_set_new(void);
void corral_set_free(struct corral_set *s);
/*
 * Insert the key key[0..len) with value if absent; keys are compared whole,
 * every byte (a NUL too) and the length.  Returns 1 if inserted, 0 if it
 * was already there (its value left alone), -1 on ENOMEM.  When vp is not
 * NULL it is pointed at the stored value (new or old), valid until the
 * next insertion.  The set keeps its own copy of key.
 */
int corral_set_putn(struct corral_set *s, const char *key, size_t len,
    long value, long **vp);
/* corral_set_putn of the string key. */
int corral_set_put(struct corral_set *s, const char *key, long value,
    long **vp);
/* The stored value's address, or NULL when key[0..len) is absent. */
long *corral_set_getn(const struct corral_set *s, const char *key,
    size_t len);
long *corral_set_get(const struct corral_set *s, const char *key);
size_t corral_set_size(const struct corral_set *s);

/* ------------------------------------------------------------------ */
/* fpset.c: 64-bit fingerprints, each with a 32-bit value              */

struct corral_fpset;

/* The fingerprint of key[0..len): a 64-bit hash, never 0. */
uint64_t corral_fingerprint(const char *key, size_t len);
/* NULL with errno ENOMEM.  Free with corral_fpset_free. */
struct corral_fpset *corral_fpset_new(void);
void corral_fpset_free(struct corral_fpset *s);
/*
 * Add value under fp (not 0), beside any values fp holds already: a
 * fingerprint is not a key, the caller settles which value is its own.
 * 0, or -1 on ENOMEM.  Addresses from corral_fpset_next go stale.
 */
int corral_fpset_add(struct corral_fpset *s, uint64_t fp, uint32_t value);
/*
 * The address of the next value stored under fp, or NULL when there is no
 * other: set *pos to 0, then call again with the same pos to walk them
 * all.  Valid until the next corral_fpset_add.
 */
uint32_t *corral_fpset_next(const struct corral_fpset *s, uint64_t fp,
    size_t *pos);
/* Ask the CPU to fetch fp's first slot now, for a walk soon after. */
void corral_fpset_prefetch(const struct corral_fpset *s, uint64_t fp);
size_t corral_fpset_size(const struct corral_fpset *s);
/*
 * Every value in turn, in no useful order: start with *pos = 0; NULL
 * after the last.  Valid until the next corral_fpset_add.
 */
uint32_t *corral_fpset_each(const struct corral_fpset *s, size_t *pos);

/* ------------------------------------------------------------------ */
/* units.c: reading a population                                       */

/*
 * A population read one line at a time, for a reader that keeps less than
 * the names (the merge): every line, empty ones too, as corral_units_read
 * cuts it.  Release with corral_units_stream_release.
 */
struct corral_units_stream {
	FILE *fp;
	int sep;
	const char *name;	/* for messages */
	char *line;		/* the current line, chomped, NUL terminated */
	size_t cap;
	size_t len;		/* its length: 0 for an empty line */
	size_t lineno;		/* 1 for the first line */
	off_t off;		/* where the current line starts */
	off_t next;		/* where the next one starts */
};
void corral_units_stream_init(struct corral_units_stream *s, FILE *fp,
    int sep, const char *name);
/*
 * The next line into s: 1, 0 at the end, -1 with err set (a read error,
 * ENOMEM, a line holding a NUL byte, as corral_units_read says them).
 */
int corral_units_next(struct corral_units_stream *s, struct corral_err *err);
void corral_units_stream_release(struct corral_units_stream *s);

/*
 * Read units from fp, one per line (sep '\n': a line ends as
 * corral_line_chomp says, so CR LF is a line ending) or NUL-terminated
 * (sep '\0').  Empty entries are skipped.  A unit seen twice (every byte
 * the same) is kept once, at its first position; each later copy is
 * appended to dups (if not NULL) so the caller can warn.  A missing final
 * separator is accepted.  Returns 0, or -1 with err set (read error,
 * ENOMEM, a line holding a NUL byte: "'NAME' line 3: unit 'c\0zz' holds a
 * NUL byte").  name is used in messages.
 */
int corral_units_read(FILE *fp, int sep, const char *name,
    struct corral_strv *units, struct corral_strv *dups,
    struct corral_err *err);

/*
 * corral_units_read on the file named file ("-" is standard input),
 * appending to units; with warn, each unit listed twice is named on
 * stderr.  0, or -1 with err set (naming file).
 */
int corral_units_load(const char *file, int sep, struct corral_strv *units,
    int warn, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* path.c: paths as text                                               */

/*
 * "a/b" in fresh memory; a when b is empty, b when a is empty, so a
 * relative path joins a root without a stray slash, and no slash doubled
 * after an a that ends in one ("/" and "x" give "/x").  NULL on ENOMEM.
 */
char *corral_path_join(const char *a, const char *b);
/* The directory part of path, malloc'd: "." when none, "/" for "/x". */
char *corral_path_dir(const char *path);
/* The last component of path: a pointer into it. */
const char *corral_path_base(const char *path);
/*
 * A relative path folded lexically, malloc'd: no empty or "."
 * components, ".." folded into its parent, "" for the root itself.
 * NULL with errno EINVAL when ".." climbs above the root, ENOMEM.
 */
char *corral_path_normalise(const char *path);

/*
 * A part written "DIR/" (and "./" for the root) is a directory listed: a
 * clone holds the names in it, each entry a placeholder, and a manifest
 * one line of them (corral_checkout).  corral_path_is_listing: 1 when
 * part is one (it ends in '/' after something else).
 * corral_path_trim_slashes: drop the '/'s that end path, in place, all
 * but a lone one, so that a path a user gave ("lib/", the whole of lib)
 * never reads as a listing.
 */
int corral_path_is_listing(const char *part);
void corral_path_trim_slashes(char *path);

/* For corral_path_lexical: refuse "", "." and ".." components too. */
#define CORRAL_PATH_CANONICAL	1

/*
 * The one lexical check of a relative path that must stay inside its
 * tree; what names it in the refusal ("part", "path").  -1 with err set
 * to "WHAT '' is empty", "WHAT 'P' is absolute" or "WHAT 'P' leaves the
 * tree" (a ".." above the start; with CORRAL_PATH_CANONICAL, any ".."),
 * and with CORRAL_PATH_CANONICAL also "WHAT 'P' is not canonical" and
 * "WHAT 'P' holds a newline".  0 when it passes.
 */
int corral_path_lexical(const char *what, const char *path, int flags,
    struct corral_err *err);
/* mkdir -p of the directory that holds path.  0, or -1 with err set. */
int corral_mkdir_parent(const char *path, mode_t mode,
    struct corral_err *err);

/* ------------------------------------------------------------------ */
/* io.c: files, atomically                                             */

/* Write all n bytes, retrying on EINTR and short writes.  0 or -1/errno. */
int corral_write_all(int fd, const void *p, size_t n);
/*
 * Open a file to read where a regular file is expected: a FIFO, device,
 * directory or socket is refused ("'x' is a FIFO, not a regular file")
 * without blocking on it.  A path that names a descriptor the caller
 * handed over (/dev/stdin, /dev/fd/N, /proc/self/fd/N) is a stream the
 * user chose and is read as it is.  The descriptor (close it), or -1
 * with err set.  fopen_input is the same as a stdio stream (fclose it),
 * NULL with err set.
 */
int corral_open_input(const char *path, struct corral_err *err);
FILE *corral_fopen_input(const char *path, struct corral_err *err);
/*
 * The one way corral opens a file of its own state (a lock, a stamp, a
 * log, the history, a status file, a mark): open(2) with flags and mode,
 * never through a symbolic link (O_NOFOLLOW), never waiting on a FIFO,
 * close-on-exec, and only when what was opened is a regular file.  A
 * link, directory, FIFO, device or socket planted at path is refused
 * ("'x' is a symbolic link, not a regular file"; errnum 0); another
 * failure keeps its errno in err->errnum ("cannot open 'x'": ENOENT when
 * there is nothing and no O_CREAT).  The descriptor (blocking again),
 * or -1.  _at opens path relative to dirfd; fopen_state is the same as
 * a stdio stream of mode how ("r", "a"; fclose it), NULL with err set.
 */
int corral_open_state(const char *path, int flags, mode_t mode,
    struct corral_err *err);
int corral_open_state_at(int dirfd, const char *path, int flags, mode_t mode,
    struct corral_err *err);
FILE *corral_fopen_state(const char *path, int flags, const char *how,
    struct corral_err *err);
/*
 * The directory that holds rel's last component, rel's components split
 * at '/' under the directory dirfd, each opened O_NOFOLLOW | O_DIRECTORY:
 * a link planted as a directory of rel leads nowhere outside (ELOOP or
 * ENOTDIR).  Its descriptor (dirfd itself when rel has no '/': close it
 * only when it is not), *last pointing at that component; or -1 with
 * errno (EINVAL: an empty or overlong component).
 */
int corral_dir_beneath(int dirfd, const char *rel, const char **last);
/*
 * rel under dirfd as corral_dir_beneath walks it, its last component
 * opened with flags | O_NOFOLLOW | O_CLOEXEC: a descriptor, or -1 with
 * errno.
 */
int corral_open_beneath(int dirfd, const char *rel, int flags);
/*
 * Whether path may be made or replaced as a file of corral's state:
 * 0 when nothing is there or a regular file is, -1 with err set as
 * open_state says when anything else is (a link is not followed).
 */
int corral_state_check(const char *path, struct corral_err *err);
/*
 * Read fd to its end (retrying on EINTR), each chunk read passed to eat,
 * which returns 0, or -1 to stop.  0, or -1 when a read failed (errno
 * set) or eat stopped (errno as eat left it).  corral_buf_eat appends
 * to the struct corral_buf ctx (NULL: the bytes are dropped).
 */
int corral_fd_chunks(int fd, int (*eat)(void *ctx, const char *p, size_t n),
    void *ctx);
int corral_buf_eat(void *b, const char *p, size_t n);
/*
 * Read the regular file at path into b (appending) in as few system calls
 * as its size allows: open, fstat, and one read when the file is no
 * larger than fstat said (a read short of it reads on, to the end).  For
 * what is read by the thousand, the result cache's entries.  Refuses
 * what corral_open_input refuses.  0, or -1 with err set.
 */
int corral_read_regular(const char *path, struct corral_buf *b,
    struct corral_err *err);
/* Read a whole file into b (appending), by open_input.  0, or -1/err. */
int corral_read_file(const char *path, struct corral_buf *b,
    struct corral_err *err);
/* The same for a file of corral's own state, by open_state. */
int corral_read_state(const char *path, struct corral_buf *b,
    struct corral_err *err);
/* mkdir -p.  0, or -1 with err set. */
int corral_mkdir_p(const char *path, mode_t mode, struct corral_err *err);
/*
 * mkdir -p, and when path itself was made by this call, mark it the top
 * of a directory hierarchy (ext4's T attribute, chattr(1)): ext4 then
 * puts each directory made in it in a block group of its own choosing,
 * not near path.  For corral's own directories of many files made and
 * deleted (CORRAL_OUT, the clones' work root); one that was there
 * already, or another file system, stays as it was.  0, or -1 with err.
 */
int corral_mkdir_top(const char *path, mode_t mode, struct corral_err *err);
/* The process's umask (read without changing it for good). */
mode_t corral_umask(void);
/* fsync the directory that holds path.  0, or -1 with err set. */
int corral_fsync_parent(const char *path, struct corral_err *err);
/*
 * Every file written on the file system that holds path made durable, by
 * one syncfs(2): what stands for the fsyncs of many files and their
 * directory.  0, or -1 with err set.
 */
int corral_sync_fs(const char *path, struct corral_err *err);

/*
 * Atomic replacement of one file (RELIABILITY 4.2): data goes to a
 * temporary file beside the target, which commit fsyncs and renames over
 * it, then fsyncs the directory.  A crash leaves the old file or the new
 * one, never a mix; leftover temporaries are named .NAME.tmp.XXXXXX.
 */
struct corral_atomic {
	int fd;
	char *path;	/* the target */
	char *tmp;	/* the temporary beside it */
};

enum corral_atomic_flags {
	/* Keep the old file (and its mtime) when the content is the same. */
	CORRAL_ATOMIC_KEEP_SAME = 1 << 0,
	/*
	 * The user named this output: when it is a descriptor's name
	 * (/dev/stdout, /dev/fd/N), a character device or a FIFO, write
	 * it in place, with no temporary (tmp stays NULL) and no rename.
	 */
	CORRAL_ATOMIC_IN_PLACE = 1 << 1,
	/*
	 * A file made again from others whenever it is missing or stale (a
	 * plan's slice files, a manifest): renamed into place all the same,
	 * so that no reader sees half of it, but never fsynced -- a crash
	 * may lose it, and the next run makes it again.
	 */
	CORRAL_ATOMIC_NO_SYNC = 1 << 2
};

/*
 * Open a temporary for path.  A path that exists and is not a regular
 * file is never replaced: a FIFO or device is written in place under
 * CORRAL_ATOMIC_IN_PLACE (see there), anything else refused ("'x' is a
 * FIFO, not a regular file"), a symbolic link always (it is neither
 * followed nor replaced).  0, or -1 with err set.
 */
int corral_atomic_open(struct corral_atomic *a, const char *path,
    struct corral_err *err);
/*
 * The same with the temporary at tmp, a name the caller chose and can
 * find again after a crash (a journal's): created with O_EXCL, so a file
 * already there is refused ("'tmp' is in the way: ...") and left alone.
 * The target is not looked at.  0, or -1 with err set.
 */
int corral_atomic_open_as(struct corral_atomic *a, const char *path,
    const char *tmp, struct corral_err *err);
int corral_atomic_write(struct corral_atomic *a, const void *p, size_t n,
    struct corral_err *err);
/*
 * fsync, close, rename into place and fsync the directory.  Returns 1 if
 * the target changed, 0 if it was kept (KEEP_SAME), -1 with err set; the
 * temporary is removed on failure.  The struct is released either way.
 */
int corral_atomic_commit(struct corral_atomic *a, int flags,
    struct corral_err *err);
/*
 * The two halves of a commit, for a caller that renames several files
 * together (commit.c).  prepare fsyncs and closes the temporary; it returns
 * 1 when it is ready to rename, 0 when KEEP_SAME found the target equal
 * (the temporary is then removed and the struct released), -1 with err
 * set (removed and released too).  rename puts a prepared temporary in
 * place without syncing the directory: 0, releasing the struct, or -1
 * with err set, leaving the temporary and the struct for abort.
 */
int corral_atomic_prepare(struct corral_atomic *a, int flags,
    struct corral_err *err);
int corral_atomic_rename(struct corral_atomic *a, struct corral_err *err);
/* Remove the temporary and release the struct; for error paths. */
void corral_atomic_abort(struct corral_atomic *a);
/*
 * Write a whole file atomically: open + write + commit; flags for both.
 * Under KEEP_SAME a regular file that already holds exactly p[0..n) is
 * left as it is without writing anything (0).
 */
int corral_atomic_file(const char *path, const void *p, size_t n, int flags,
    struct corral_err *err);
/* corral_atomic_file of text at dir/rel, making its directories first. */
int corral_atomic_file_at(const char *dir, const char *rel, const char *text,
    struct corral_err *err);

/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* tree.c: a tree removed, never through a symbolic link               */

/*
 * name under dirfd (AT_FDCWD: a path) opened as a directory, never
 * through a symlink, its descriptor in *fd (closedir closes both).  NULL
 * with err set.
 */
DIR *corral_dir_open(int dirfd, const char *name, int *fd,
    struct corral_err *err);
/*
 * Remove the directory entry name under dirfd and, for a directory,
 * everything below it.  Symlinks are removed, never followed.  A directory
 * a unit made unreadable is given u+rwx back first.  A name that does not
 * exist is fine.  0, or -1 with err set.
 */
int corral_remove_at(int dirfd, const char *name, struct corral_err *err);
/* corral_remove_at of path (relative to the working directory). */
int corral_remove_tree(const char *path, struct corral_err *err);

/* ------------------------------------------------------------------ */
/* time.c                                                              */

/*
 * Wall-clock time as ISO 8601 UTC with milliseconds,
 * "2026-11-29T10:32:13.042Z", into out.  Equal-length strings sort by time,
 * which is how the merge tells the latest attempt of a unit.
 */
#define CORRAL_TIME_ISO_SIZE 25
void corral_time_iso(char out[CORRAL_TIME_ISO_SIZE]);
/* Monotonic milliseconds, for durations. */
long long corral_time_ms(void);
/* Wall-clock milliseconds since the Epoch, for what other processes read. */
long long corral_time_epoch_ms(void);
/* ms for people: "3.2s", "1m05s", "2h03m"; "?" when ms < 0. */
void corral_duration_format(long long ms, char out[32]);

/* ------------------------------------------------------------------ */
/* lock.c: one run at a time on a CORRAL_OUT                           */

#define CORRAL_MARK_FILE ".corral-out"	/* corral made this directory */
#define CORRAL_LOCK_FILE ".lock"	/* flocked by the run holding it */

/* A held lock: the descriptor, and whether a parent passed it down. */
struct corral_lock {
	int fd;		/* -1 when not held */
	int inherited;
};

enum corral_lock_flags {
	CORRAL_LOCK_CREATE = 1 << 0,	/* make DIR and its mark if need be */
	CORRAL_LOCK_SHARED = 1 << 1	/* share it (agents started by hand) */
};

void corral_lock_init(struct corral_lock *l);
/* Close a lock taken here (an inherited one stays open); l is reset. */
void corral_lock_release(struct corral_lock *l);
/*
 * Take DIR/.lock, waiting up to wait_ms for its holder (0: not at all,
 * negative: for ever).  With CORRAL_LOCK_CREATE, DIR and its mark are
 * made; a DIR that holds files but no mark is refused.  0 held; 1 another
 * process holds it and the wait ran out (*holder its pid, 0 if unknown);
 * -1 with err set.
 */
int corral_lock_take(struct corral_lock *l, const char *dir, int flags,
    long long wait_ms, pid_t *holder, struct corral_err *err);
/*
 * 1 when the environment passes down a descriptor of DIR's lock that
 * holds it (l then names it), else 0.
 */
int corral_lock_inherit(struct corral_lock *l, const char *dir);
/* Let programs exec'd from here hold l too.  0, or -1 with err set. */
int corral_lock_pass(struct corral_lock *l, struct corral_err *err);
/*
 * Hold l in this process only: no program exec'd from here gets it, nor
 * a lock the environment passes down when l is not held.
 */
void corral_lock_keep(struct corral_lock *l);
/*
 * The nearest directory at or above path (which need not exist) that
 * holds a mark, as a malloc'd absolute path the caller frees; NULL when
 * there is none.
 */
char *corral_lock_find(const char *path);
/* Whether process pid lives; a zombie, reaped or not, is gone. */
int corral_pid_alive(pid_t pid);

/* ------------------------------------------------------------------ */
/* digest.c: SHA-256, from OpenSSL's libcrypto (EVP)                   */

/* A SHA-256 (digest.c) in hex: 64 lowercase hex digits and a NUL. */
#define CORRAL_SHA256_HEX 65

/*
 * A SHA-256 fed piece by piece: _init (0, or -1 with err set), then _add
 * any number of times, _peek for the digest of what was added so far (the
 * digest can go on growing after it), and _release (always, also after a
 * failed _init; s->ctx NULL is fine).  _add and _peek: 0, or -1 with err
 * set if libcrypto failed.
 */
struct corral_sha256 {
	void *ctx;
};

int corral_sha256_init(struct corral_sha256 *s, struct corral_err *err);
int corral_sha256_add(struct corral_sha256 *s, const void *p, size_t n,
    struct corral_err *err);
int corral_sha256_peek(const struct corral_sha256 *s,
    char hex[CORRAL_SHA256_HEX], struct corral_err *err);
void corral_sha256_release(struct corral_sha256 *s);

/* hex = SHA-256 of p[0..n).  0, or -1 with err set if libcrypto failed. */
int corral_sha256_buf(const void *p, size_t n, char hex[CORRAL_SHA256_HEX],
    struct corral_err *err);
/*
 * hex = SHA-256 of everything read from fd to its end; name is used in
 * messages.  0, or -1 with err set.  The caller closes fd.
 */
int corral_sha256_fd(int fd, const char *name, char hex[CORRAL_SHA256_HEX],
    struct corral_err *err);
/* 1 when s is exactly 64 lowercase hex digits, else 0. */
int corral_sha256_valid(const char *s);
/* A digest of 32 bytes as its 64 lowercase hex digits and a NUL. */
void corral_sha256_tohex(const unsigned char md[32],
    char hex[CORRAL_SHA256_HEX]);

/* ------------------------------------------------------------------ */
/* memo.c: content digests remembered by stat, as git's index does     */

/*
 * A memo of SHA-256 digests of files' content, each remembered by the
 * (device, inode, size, mtime, ctime) of the file, so that a file whose
 * stat says the same again costs a stat, not a read.  An entry is
 * believed only when the file's mtime and ctime are older than the memo
 * file's own mtime (git's "racily clean" rule), and a digest is
 * remembered only when the file's times were older than the clock when
 * it was read.
 */
struct corral_memo;
struct stat;

/*
 * The memo of the file memo_path (NULL: one in memory that is never
 * saved).  A missing, planted (a link, never followed), foreign or
 * corrupt file is an empty memo, and a line that does not parse is
 * dropped: never an error.  NULL with errno ENOMEM only.  Free with
 * corral_memo_free.
 */
struct corral_memo *corral_memo_open(const char *memo_path);
/*
 * out = the SHA-256 of the content of the regular file relpath, relative
 * to dirfd (AT_FDCWD: the working directory), from the memo when the
 * file's stat matches an entry, else read (opened with O_NOFOLLOW) and
 * remembered.  0, or -1 with errno: the stat's or the read's, ELOOP for
 * a symbolic link, EISDIR for a directory, EINVAL for anything else not
 * a regular file, ENOMEM.
 */
int corral_memo_digest(struct corral_memo *m, int dirfd, const char *relpath,
    unsigned char out[32]);
/*
 * The same when the caller has just taken relpath's lstat, lst (NULL:
 * take it here), which then serves as the key (one stat less a file).
 */
int corral_memo_digest_stat(struct corral_memo *m, int dirfd,
    const char *relpath, const struct stat *lst, unsigned char out[32]);
/*
 * Write the memo back to its file when it changed (a temporary, fsync,
 * rename: a crash leaves the old memo or the new), keeping the entries
 * used since it was opened and, for a few saves more, those not used.  A
 * link or anything but a regular file at memo_path is neither followed
 * nor replaced (ELOOP, EEXIST).  0 (also for an unchanged memo or one in
 * memory), or -1 with errno.
 */
int corral_memo_save(struct corral_memo *m);
/* Free m (NULL is fine); nothing is saved. */
void corral_memo_free(struct corral_memo *m);

/* ------------------------------------------------------------------ */
/* proc.c: starting a child, waiting for it, saying how it ended       */

/* One setrlimit(2) a child gets before its exec. */
struct corral_proc_limit {
	int res;		/* RLIMIT_CPU, ... */
	long long soft, hard;
};

/*
 * A child to start: path (looked up on PATH when it holds no '/') with
 * argv and envp (NULL: our environment).  stdin is the file in, or
 * /dev/null; stdout is the file out (created or truncated), else the
 * descriptor outfd, else ours; stderr the same from err and errfd, or a
 * copy of stdout when err_is_out.  The files are opened before the
 * change to dir (NULL: ours).  group: a process group of its own;
 * sigdfl: a signal (0: none) set back to its default action, one the
 * parent ignores; limits[0..nlimits): set in the child, which then
 * starts by vfork, not posix_spawn.  Every signal is unblocked in the
 * child.  Start from CORRAL_PROC_INIT; nothing here is freed.
 */
struct corral_proc {
	const char *path;
	char *const *argv;
	char *const *envp;
	const char *dir;
	const char *in;
	const char *out;
	const char *err;
	int outfd;
	int errfd;
	int err_is_out;
	int group;
	int sigdfl;
	const struct corral_proc_limit *limits;
	int nlimits;
	/*
	 * >= 0: the child, in its new group and before it can exec, sends
	 * its pid there as an int32_t (a watchdog that must know the group
	 * even if the parent dies the moment it is started).
	 */
	int tellfd;
	/*
	 * Non-zero: the child joins a new, empty session keyring before it
	 * execs, so that nothing it starts reaches the keys of the parent's
	 * (a kernel or seccomp that refuses keyctl refuses the child too).
	 */
	int keyring;
	/*
	 * Non-NULL: pairs FROM, TO, NULL-ended.  The child gets a mount
	 * namespace of its own, every mount in it made private first (none
	 * reaches the parent's), in which each FROM is bound on TO
	 * (recursively, in order) before it execs: a refusal (EPERM without
	 * CAP_SYS_ADMIN) is the error number of its start.
	 */
	char *const *binds;
	/*
	 * Non-NULL: the child calls enter(enter_arg, errfd) last before its
	 * exec, having forked (not vforked).  It returns 0 in the process
	 * that goes on to the exec, else an error number; a process of its
	 * own that waits instead of going on closes errfd, a descriptor the
	 * exec closes, and exits.
	 */
	int (*enter)(const void *arg, int errfd);
	const void *enter_arg;
};

#define CORRAL_PROC_INIT { NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
	-1, -1, 0, 0, 0, NULL, 0, -1, 0, NULL, NULL, NULL }

/*
 * Start p.  0 with *pid set, or the errno that kept it from starting, a
 * failed exec included (then there is no child to wait for).
 */
int corral_proc_start(const struct corral_proc *p, pid_t *pid);
/*
 * Our environment less every NAME that extra (NAME=VALUE, NULL-ended,
 * may be NULL) sets, then extra, appended to env.  0, or -1 on ENOMEM
 * (env holds a part; the caller releases it either way).
 */
int corral_proc_env(struct corral_strv *env, const char *const *extra);
/* 1 when child pid has ended (not reaped yet), 0 when not, -1 with errno. */
int corral_proc_ended(pid_t pid);
/*
 * Wait until child pid ends or the monotonic ms deadline passes (0:
 * none), without reaping it.  1 when it ended, 0 at the deadline, -1
 * with errno.
 */
int corral_proc_await(pid_t pid, long long deadline);
/*
 * The parent and the process group of process pid, from /proc/PID/stat.
 * 0, or -1 when /proc does not tell (no such process, no /proc).
 */
int corral_proc_stat(pid_t pid, long *ppid, long *pgrp);
/*
 * The next process of d, a listing of /proc (opendir("/proc"); the
 * caller closes it), in *pid, with its parent and group as
 * corral_proc_stat reads them (one /proc no longer tells of is passed
 * over): 1, or 0 at the end of d.
 */
int corral_proc_next(DIR *d, pid_t *pid, long *ppid, long *pgrp);
/* Reap child pid, its wait status in *wstatus (may be NULL).  0, or -1. */
int corral_proc_reap(pid_t pid, int *wstatus);

/*
 * A child subreaper (PR_SET_CHILD_SUBREAPER): every orphan among this
 * process's descendants becomes its child, so a process a child detached
 * (setsid, a double fork out of its group, daemon(3)) stays in reach
 * once its parent ends.  corral_reaper_start makes this process one
 * (where Linux can: before 3.4, how stays 0 and nothing is in reach
 * but the child's group) and remembers the children it has already,
 * which are never strays.  0, or -1 with err set (ENOMEM).  Release
 * with corral_reaper_release; the process stays a subreaper.
 */
struct corral_reaper {
	int how;		/* 0: none; 'c': /proc/self/task/T/children;
				   'p': the parent field of all of /proc */
	pid_t *inherited;	/* children it had when it became one */
	size_t ninherited;
};

#define CORRAL_REAPER_INIT { 0, NULL, 0 }

int corral_reaper_start(struct corral_reaper *rp, struct corral_err *err);
/*
 * SIGKILL and reap every child of this process but the inherited ones
 * and keep[0..nkeep), over and over, since a dying process's children
 * come back as new orphans and a process can fork until its SIGKILL
 * lands.  Returns how many were still running and died of this SIGKILL,
 * not counting those of process group group when group_killed (a
 * SIGKILL reached that group already).  Nothing when rp->how is 0.
 */
long corral_reaper_kill(const struct corral_reaper *rp, const pid_t *keep,
    size_t nkeep, pid_t group, int group_killed);
void corral_reaper_release(struct corral_reaper *rp);

/*
 * A program to run to its end: argv[0] is looked up on PATH (or is a
 * path); dir is its working directory (NULL: ours); env holds NAME=VALUE
 * settings added to our environment, NULL-ended, or is NULL; stdin is
 * /dev/null; stdout and stderr go to the file out (created or truncated),
 * or stdout is read into capture (stderr inherited), or both are
 * inherited.
 */
struct corral_spawn {
	const char *const *argv;
	const char *dir;
	const char *const *env;
	const char *out;
	struct corral_buf *capture;
};

/*
 * Run s and wait for it.  Returns 0 with its wait status in *wstatus, or
 * -1 with err set when it could not be started ("cannot run 'make': No
 * such file or directory") or waited for.
 */
int corral_spawn_run(const struct corral_spawn *s, int *wstatus,
    struct corral_err *err);

/* "SIGSEGV" for sig into out (or "SIG70" for one without a name). */
const char *corral_signal_name(int sig, char out[32]);
/*
 * The signal a shell's exit status 128 + N reports its child killed by,
 * when that signal means a crash: one whose default action is a core dump
 * (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS, SIGQUIT,
 * SIGXCPU, SIGXFSZ), or SIGKILL (the OOM killer).  0 otherwise: after
 * SIGTERM, SIGINT, SIGHUP or SIGPIPE a program often exits 128 + N
 * itself, having cleaned up, and that is an exit code like any other.
 */
int corral_proc_shell_crash(int code);
/*
 * Append how a child ended: "exit 3", "signal 9 (SIGKILL)", or, when the
 * child is a shell (shell != 0) that reports a crash, "signal 11
 * (SIGSEGV), reported by the shell as exit 139".  0, or -1 on ENOMEM.
 */
int corral_proc_describe(struct corral_buf *b, int wstatus, int shell);
/*
 * Append ": LAST", LAST being the last non-blank line of the file open at
 * fd (< 0: none), trimmed and cut to 200 bytes; only its last 4096
 * bytes are read.  Nothing when there is none.  0, or -1 on ENOMEM.
 */
int corral_proc_add_last_line(struct corral_buf *b, int fd);
/*
 * Append text[0..n) cut to at most max bytes on a UTF-8 character
 * boundary (with "..." when cut), NUL bytes shown as '?' and line breaks
 * as spaces, so that an excerpt is one line.  0, or -1.
 */
int corral_add_excerpt(struct corral_buf *b, const char *text, size_t n,
    size_t max);

/* ------------------------------------------------------------------ */
/* json.c: small JSON objects and numbers                             */

/*
 * Any one-line JSON object (line[len] must be NUL), for the small files
 * that are not records (a live agent's status).  0, or -1 with err set as
 * for a record; release o after a 0.
 */
struct corral_json_obj {
	void *doc;
};

int corral_json_obj_parse(const char *line, size_t len,
    struct corral_json_obj *o, struct corral_err *err);
/* The string member key, or NULL when absent or not a string. */
const char *corral_json_obj_str(const struct corral_json_obj *o,
    const char *key);
/* The member key as a non-negative integer, or -1. */
long long corral_json_obj_int(const struct corral_json_obj *o,
    const char *key);
void corral_json_obj_release(struct corral_json_obj *o);
/* Append d as the shortest JSON number that reads back as d. */
int corral_json_number(struct corral_buf *b, double d);

#endif /* CORRAL_BASE_H */
