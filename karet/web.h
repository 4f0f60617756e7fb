/* The web pages of `karet serve` (issue 17): HTML rendered here, from the
 * same control plane and lake the API reads, with CSS and a little plain
 * JavaScript from karet/web/ compiled into the binary. Every value that
 * comes from a user or a file goes through html_printf's %s, which escapes
 * it; page scripts build the DOM with textContent for the same reason.
 * What the caller's role may not do is left out of the page (and the API
 * refuses it anyway). */
#ifndef KARET_WEB_H
#define KARET_WEB_H

#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>

#include "serve_http.h"
#include "strbuf.h"

/* Appends s escaped for HTML text and quoted attribute values. */
void html_esc(kbuf *b, const char *s);
/* Appends s percent-encoded as one URL query or path component. */
void url_esc(kbuf *b, const char *s);

/* printf for HTML. Conversions: %s text (escaped; NULL is ""), %R raw HTML
 * (trusted: only literals and what this code built), %U a URL component
 * (percent-encoded), %J a json_t * for a <script type="application/json">
 * block ('<', '>', '&' written as \u escapes so it cannot end the block),
 * %d int, %L long long, %%. */
void html_printf(kbuf *b, const char *fmt, ...);
void html_vprintf(kbuf *b, const char *fmt, va_list ap);

/* "/static/<name>?v=<content hash>": a URL that changes with the file, so
 * browsers may keep it for good. */
const char *asset_url(const char *name, char *buf, size_t len);

typedef struct page {
    service *svc;
    http_req *rq;
    const char *title;
    const char *slug;     /* a pipeline's pages: its slug */
    const char *pipeline; /* ... and its name */
    const char *tab;      /* the highlighted entry of the navigation */
    const char *script;   /* the page's own script in karet/web/, or NULL */
    kbuf b;
} page;

/* A page of a pipeline: its name and tabs in the frame (pipeline: the row
 * web_pipeline gave, borrowed for the page's life). */
page pipeline_page(service *svc, http_req *rq, json_t *pipeline, const char *title, const char *tab,
                   const char *script);

/* The document head, header and navigation, up to the opening of <main>. */
void page_begin(page *p);
/* Closes the page and makes it the reply (200, text/html). */
void page_end(page *p, http_resp *out);
/* 1 when the caller's role is at least `role`. */
int page_can(const page *p, int role);

/* Makes b's text the reply (200, text/html): a whole page or a fragment. */
void reply_html(http_resp *out, kbuf *b);
/* An HTML reply for problems met while rendering a page (404, 403, 502...). */
void page_error(service *svc, http_req *rq, http_resp *out, int status, const char *title,
                const char *message);
/* A 303 redirect. */
void reply_redirect(http_resp *out, const char *location);

/* Times as the pages show them: <time datetime=ISO>UTC text</time>, which
 * the page script turns into local time. Nothing for 0. */
void html_time(kbuf *b, int64_t ms);
/* The same, shown by the page script as how long ago ("3 min ago"). */
void html_time_ago(kbuf *b, int64_t ms);
/* A byte count as "1.2 MB". */
void html_bytes(kbuf *b, int64_t n);
/* A number with thin-space thousands separators ("12 345"). */
void html_count(kbuf *b, int64_t n);
/* Adds data-sig="<hash of its markup>" to the element written into b from
 * `start` on: a page script that fetches a live list again puts in only
 * the elements whose signature changed and keeps the others as they are
 * (what the reader has open, selected or is pointing at). */
void html_sign(kbuf *b, size_t start);
/* The same in two steps: the hash of what b holds from `start` on, and
 * data-sig="<sig>" put into the opening tag written at `start`. */
uint64_t html_hash(const kbuf *b, size_t start);
void html_sign_as(kbuf *b, size_t start, uint64_t sig);

/* The pipeline's row as api_pipeline gives it, or NULL after a 404 page. */
json_t *web_pipeline(service *svc, http_req *rq, http_resp *out, const char *slug);

#define H(name) void name(service *svc, http_req *rq, http_resp *out)
H(web_home);
H(web_static);
H(web_sign_in);
H(web_pipelines);
H(web_pipeline_home);
H(web_jobs);
H(web_job);
H(web_data);
H(web_editor);
H(web_lake);
H(web_settings);
#undef H

#endif
