/* See LICENSE file for copyright and license details. */
/*
 * http.h: a store's files over HTTP -- GET and PUT of whole bodies
 * (libcurl), so that any server that keeps what is PUT and returns it on
 * GET (nginx's WebDAV module, a bucket, a Bazel or ccache HTTP cache)
 * serves CORRAL_CACHE = http://HOST:PORT/PATH.
 */
#ifndef CORRAL_CACHE_HTTP_H
#define CORRAL_CACHE_HTTP_H

#include <stddef.h>

#include "base/base.h"

/* The largest body a GET takes: an entry is a record and a tail. */
#define CORRAL_HTTP_MAX_BODY (8u << 20)

/* 1 when s names an HTTP store (http:// or https://); in url.c, which
 * needs no libcurl. */
int corral_http_is_url(const char *s);
/*
 * GET base/rel into out (replacing what it held): 1 got it (200); 0 not
 * there (404 or 410); -1 anything else -- the server unreachable, another
 * status, a body over CORRAL_HTTP_MAX_BODY -- with err saying which.
 */
int corral_http_get(const char *base, const char *rel, struct corral_buf *out,
    struct corral_err *err);
/* PUT the n bytes at p as base/rel: 0 (a 2xx answer), or -1 with err set. */
int corral_http_put(const char *base, const char *rel, const void *p,
    size_t n, struct corral_err *err);
/* DELETE base/rel: 0 (2xx, or not there), or -1 with err set. */
int corral_http_delete(const char *base, const char *rel,
    struct corral_err *err);
/* Close the connection kept between requests (none: nothing to do). */
void corral_http_close(void);

#endif /* CORRAL_CACHE_HTTP_H */
