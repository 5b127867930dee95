/* See LICENSE file for copyright and license details. */
/*
 * xunit.c reads the JUnit XML a unit writes (pytest --junitxml, ctest,
 * gotestsum, cargo-nextest, Maven's surefire) into the same counts, names
 * and durations as its TAP would give, with libxml2: every <testcase>
 * under the root, at any depth, is one test.  The parser expands no
 * entity and reads no DTD and nothing from the network, so the file can
 * say nothing about anything but itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "base/base.h"
#include "record/record.h"

/* The node's element name is name. */
static int
is(const xmlNode *x, const char *name)
{
	return x->type == XML_ELEMENT_NODE &&
	    !strcmp((const char *)x->name, name);
}

/* A testcase's "time", seconds, as ms; -1 when it has none. */
static long long
ms_of(xmlNode *x)
{
	xmlChar *v = xmlGetProp(x, (const xmlChar *)"time");
	char *end;
	double s;

	if (!v)
		return -1;
	errno = 0;
	s = strtod((const char *)v, &end);
	xmlFree(v);
	if (errno || end == (char *)v || s < 0 || s > 1e12)
		return -1;
	return (long long)(s * 1000 + 0.5);
}

/*
 * "classname.name", or name, of test number n (from 1), in b; one
 * without a name is "testcase N".
 */
static int
name_of(xmlNode *x, size_t n, struct corral_buf *b)
{
	xmlChar *cls = xmlGetProp(x, (const xmlChar *)"classname");
	xmlChar *name = xmlGetProp(x, (const xmlChar *)"name");
	int rc = 0;

	corral_buf_reset(b);
	if (cls && *cls)
		rc |= corral_buf_addf(b, "%s.", (const char *)cls);
	if (name && *name)
		rc |= corral_buf_addstr(b, (const char *)name);
	else
		rc |= corral_buf_addf(b, "testcase %zu", n);
	xmlFree(cls);
	xmlFree(name);
	return rc;
}

/* What a failure, error or skip says: its message, else its text. */
static int
why_of(xmlNode *res, struct corral_buf *b)
{
	xmlChar *v = xmlGetProp(res, (const xmlChar *)"message");
	int rc;

	if (!v || !*v) {
		xmlFree(v);
		v = xmlNodeGetContent(res);
	}
	corral_buf_reset(b);
	rc = corral_buf_addstr(b, v ? (const char *)v : "");
	xmlFree(v);
	return rc;
}

/* One <testcase>. */
static int
read_case(struct corral_tap *t, xmlNode *x, struct corral_buf *name,
    struct corral_buf *why)
{
	int status = CORRAL_TAP_PASS;
	xmlNode *c, *res = NULL;

	for (c = x->children; c; c = c->next) {
		if (is(c, "failure") || is(c, "error")) {
			status = CORRAL_TAP_FAIL;
			res = c;
			break;
		}
		if (is(c, "skipped")) {
			status = CORRAL_TAP_SKIP;
			res = c;
		}
	}
	if (name_of(x, t->tests + 1, name) < 0 || (res && why_of(res, why) < 0))
		return -1;
	return corral_tap_test(t, name->data, status, ms_of(x),
	    res && why->len ? why->data : NULL);
}

/* Every testcase under x, depth first; depth bounds the walk. */
static int
walk(struct corral_tap *t, xmlNode *x, struct corral_buf *name,
    struct corral_buf *why, int depth)
{
	xmlNode *c;

	for (c = x->children; c; c = c->next) {
		if (is(c, "testcase")) {
			if (read_case(t, c, name, why) < 0)
				return -1;
		} else if (c->type == XML_ELEMENT_NODE && depth < 64 &&
		    walk(t, c, name, why, depth + 1) < 0)
			return -1;
	}
	return 0;
}

/*
 * libxml2 prints some errors (a bad encoding, an I/O error of its
 * encoder) through its generic handler whatever XML_PARSE_NOERROR says:
 * they would land on the agent's stderr.  The error that matters is
 * the one corral_junit_read names.
 */
static void
quiet(void *ctx, const char *fmt, ...)
{
	(void)ctx;
	(void)fmt;
}

int
corral_junit_read(struct corral_tap *t, const char *data, size_t n,
    struct corral_err *err)
{
	struct corral_buf name = CORRAL_BUF_INIT, why = CORRAL_BUF_INIT;
	xmlDoc *doc;
	xmlNode *root;
	int rc = -1;

	if (n > (size_t)CORRAL_JUNIT_MAX || n > (size_t)INT32_MAX)
		return corral_err_set(err, EFBIG, "larger than %lld bytes",
		    CORRAL_JUNIT_MAX);
	xmlSetGenericErrorFunc(NULL, quiet);
	doc = xmlReadMemory(data, (int)n, NULL, NULL, XML_PARSE_NONET |
	    XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc) {
		const xmlError *e = xmlGetLastError();

		return corral_err_set(err, 0, "invalid XML at line %d",
		    e ? e->line : 0);
	}
	root = xmlDocGetRootElement(doc);
	if (!root || (!is(root, "testsuites") && !is(root, "testsuite"))) {
		corral_err_set(err, 0, "no <testsuite> or <testsuites> root");
		goto out;
	}
	t->junit = 1;
	if (t->plan < 0)
		t->plan = 0;
	if (walk(t, root, &name, &why, 0) < 0) {
		corral_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	rc = 0;
out:
	xmlFreeDoc(doc);
	corral_buf_release(&name);
	corral_buf_release(&why);
	return rc;
}
