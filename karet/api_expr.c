/* Expressions as the editor shows them: text to syntax tree and back
 * (expr_text.h), several at a time so a page converts a whole config in one
 * request. Reading only: any signed-in role may call them. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "expr_text.h"

#define MAX_ITEMS 5000

/* The request's list under key, or NULL after replying 422. */
static json_t *items(http_req *rq, http_resp *out, const char *key, json_t **body)
{
    *body = req_json_object(rq, out);
    if (*body == NULL) return NULL;
    json_t *list = json_object_get(*body, key);
    if (!json_is_array(list)) {
        reply_error(out, 422, "invalid_request", "send {\"%s\": [...]}", key);
        return NULL;
    }
    if (json_array_size(list) > MAX_ITEMS) {
        reply_error(out, 422, "invalid_request", "at most %d %s a request", MAX_ITEMS, key);
        return NULL;
    }
    return list;
}

void api_expr_parse(service *svc, http_req *rq, http_resp *out)
{
    (void)svc;
    json_t *body, *list = items(rq, out, "texts", &body), *results = json_array();
    size_t i;
    json_t *t;
    json_array_foreach(list, i, t)
    {
        char err[512];
        size_t pos = 0;
        json_t *expr =
            json_is_string(t) ? kexpr_from_text(json_string_value(t), err, sizeof err, &pos) : NULL;
        if (!json_is_string(t)) snprintf(err, sizeof err, "each text must be a string");
        json_array_append_new(
            results, expr ? json_pack("{s:o}", "expr", expr)
                          : json_pack("{s:s,s:I}", "error", err, "position", (json_int_t)pos));
    }
    if (list) reply_json(out, 200, json_pack("{s:O}", "results", results));
    json_decref(results);
    json_decref(body);
}

void api_expr_format(service *svc, http_req *rq, http_resp *out)
{
    (void)svc;
    json_t *body, *list = items(rq, out, "exprs", &body), *results = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        char err[512];
        char *text = kexpr_to_text(e, err, sizeof err);
        json_array_append_new(results, text ? json_pack("{s:s}", "text", text)
                                            : json_pack("{s:s}", "error", err));
        free(text);
    }
    if (list) reply_json(out, 200, json_pack("{s:O}", "results", results));
    json_decref(results);
    json_decref(body);
}
