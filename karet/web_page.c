/* The frame every page shares: head, header with the navigation and the
 * signed-in user, the pipeline's tabs; error pages, redirects; the home and
 * sign-in pages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "web.h"

int page_can(const page *p, int role)
{
    return p->rq->authenticated && p->rq->who.role >= role;
}

static void nav_link(page *p, const char *href, const char *tab, const char *label)
{
    int here = p->tab && strcmp(p->tab, tab) == 0;
    html_printf(&p->b, "<a href=\"%s\"%R>%s</a>", href, here ? " aria-current=\"page\"" : "",
                label);
}

static void pipeline_tabs(page *p)
{
    static const char *const tabs[][2] = {{"jobs", "Jobs"}, {"data", "Data"}, {"editor", "Editor"}};
    html_printf(&p->b,
                "<div class=\"subnav\"><nav aria-label=\"Pipeline\"><span class=\"crumb\">"
                "<a href=\"/pipelines\">Pipelines</a><span aria-hidden=\"true\"> / </span>"
                "<strong>%s</strong></span><span class=\"tabs\">",
                p->pipeline ? p->pipeline : p->slug);
    for (size_t i = 0; i < sizeof tabs / sizeof tabs[0]; i++) {
        kbuf href = {0};
        html_printf(&href, "/p/%U/%R", p->slug, tabs[i][0]);
        nav_link(p, kbuf_cstr(&href), tabs[i][0], tabs[i][1]);
        kbuf_free(&href);
    }
    kbuf_puts(&p->b, "</span></nav></div>");
}

static void script_tag(kbuf *b, const char *name)
{
    char url[128];
    html_printf(b, "<script src=\"%s\" defer></script>", asset_url(name, url, sizeof url));
}

void page_begin(page *p)
{
    char css[128], icon[128];
    http_req *rq = p->rq;
    html_printf(&p->b,
                "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                "<title>%s%R%s · Karet</title>"
                "<link rel=\"stylesheet\" href=\"%s\">"
                "<link rel=\"icon\" href=\"%s\" type=\"image/svg+xml\">",
                p->title, p->slug ? " · " : "",
                p->slug ? (p->pipeline ? p->pipeline : p->slug) : "",
                asset_url("app.css", css, sizeof css), asset_url("icon.svg", icon, sizeof icon));
    script_tag(&p->b, "app.js");
    if (p->script) script_tag(&p->b, p->script);
    html_printf(&p->b, "</head><body data-role=\"%s\" data-user=\"%s\" data-slug=\"%s\">",
                role_name(rq->authenticated ? rq->who.role : ROLE_NONE),
                rq->authenticated ? rq->who.username : "", p->slug ? p->slug : "");
    kbuf_puts(&p->b, "<a class=\"skip\" href=\"#main\">Skip to content</a>"
                     "<header class=\"top\"><nav aria-label=\"Main\" class=\"main-nav\">"
                     "<a class=\"brand\" href=\"/pipelines\"><img src=\"");
    html_printf(&p->b, "%s\" alt=\"\" width=\"22\" height=\"22\">Karet</a>", icon);
    if (rq->authenticated) {
        kbuf_puts(&p->b, "<span class=\"links\">");
        nav_link(p, "/pipelines", "pipelines", "Pipelines");
        nav_link(p, "/lake", "lake", "Lake");
        nav_link(p, "/settings", "settings", "Settings");
        html_printf(&p->b,
                    "</span><span class=\"who\"><span class=\"user\">%s</span>"
                    "<span class=\"badge role-%s\">%s</span>"
                    "<button type=\"button\" class=\"quiet\" id=\"sign-out\">Sign out</button>"
                    "</span>",
                    rq->who.username, role_name(rq->who.role), role_name(rq->who.role));
    }
    kbuf_puts(&p->b, "</nav></header>");
    if (p->slug) pipeline_tabs(p);
    kbuf_puts(&p->b, "<main id=\"main\" tabindex=\"-1\">");
}

void page_end(page *p, http_resp *out)
{
    kbuf_puts(&p->b, "</main><div id=\"toasts\" class=\"toasts\" role=\"status\" "
                     "aria-live=\"polite\"></div></body></html>\n");
    reply_html(out, &p->b);
}

void reply_html(http_resp *out, kbuf *b)
{
    out->status = 200;
    out->content_type = "text/html; charset=utf-8";
    out->raw_len = b->len;
    out->raw = kbuf_take(b);
    if (out->raw == NULL) reply_error(out, 500, "internal", "out of memory rendering the page");
}

page pipeline_page(service *svc, http_req *rq, json_t *pipeline, const char *title, const char *tab,
                   const char *script)
{
    return (page){.svc = svc,
                  .rq = rq,
                  .title = title,
                  .slug = json_string_value(json_object_get(pipeline, "slug")),
                  .pipeline = json_string_value(json_object_get(pipeline, "name")),
                  .tab = tab,
                  .script = script};
}

void page_error(service *svc, http_req *rq, http_resp *out, int status, const char *title,
                const char *message)
{
    page p = {.svc = svc, .rq = rq, .title = title};
    page_begin(&p);
    html_printf(&p.b,
                "<section class=\"empty\"><h1>%s</h1><p>%s</p>"
                "<p><a href=\"/pipelines\">Back to the pipelines</a></p></section>",
                title, message);
    page_end(&p, out);
    out->status = status;
}

void reply_redirect(http_resp *out, const char *location)
{
    out->status = 303;
    out->raw = strdup("");
    out->raw_len = 0;
    out->content_type = "text/plain";
    reply_header(out, "Location", location);
}

json_t *web_pipeline(service *svc, http_req *rq, http_resp *out, const char *slug)
{
    http_resp ignored = {0};
    json_t *row = api_pipeline(svc, slug, &ignored);
    json_decref(ignored.json);
    if (row == NULL) {
        char msg[200];
        snprintf(msg, sizeof msg, "There is no pipeline \"%s\".", slug);
        page_error(svc, rq, out, 404, "No such pipeline", msg);
    }
    return row;
}

void web_home(service *svc, http_req *rq, http_resp *out)
{
    (void)svc;
    reply_redirect(out, rq->authenticated ? "/pipelines" : "/sign-in");
}

/* Only a path of this site may follow a sign-in: "/x", never "//host". */
static const char *safe_next(const char *next)
{
    if (next == NULL || next[0] != '/' || next[1] == '/' || next[1] == '\\') return "/pipelines";
    for (const char *s = next; *s; s++)
        if ((unsigned char)*s < 0x20) return "/pipelines";
    return next;
}

void web_sign_in(service *svc, http_req *rq, http_resp *out)
{
    const char *next = safe_next(req_query(rq, "next"));
    if (rq->authenticated) {
        reply_redirect(out, next);
        return;
    }
    page p = {.svc = svc, .rq = rq, .title = "Sign in", .script = "sign-in.js"};
    page_begin(&p);
    html_printf(&p.b,
                "<section class=\"sign-in card\"><h1>Sign in to Karet</h1>"
                "<form id=\"sign-in-form\" data-next=\"%s\" novalidate>"
                "<label for=\"username\">Username</label>"
                "<input id=\"username\" name=\"username\" autocomplete=\"username\" required "
                "autocapitalize=\"none\" spellcheck=\"false\" autofocus>"
                "<label for=\"password\">Password</label>"
                "<input id=\"password\" name=\"password\" type=\"password\" "
                "autocomplete=\"current-password\" required>"
                "<p class=\"error\" id=\"sign-in-error\" role=\"alert\" hidden></p>"
                "<button type=\"submit\" class=\"primary\">Sign in</button></form>"
                "<p class=\"hint\">The first admin's password is printed by <code>karet "
                "serve</code> when it starts with an empty data folder.</p></section>",
                next);
    page_end(&p, out);
}

void web_pipeline_home(service *svc, http_req *rq, http_resp *out)
{
    (void)svc;
    kbuf loc = {0};
    html_printf(&loc, "/p/%U/jobs", rq->params[0]);
    reply_redirect(out, kbuf_cstr(&loc));
    kbuf_free(&loc);
}
