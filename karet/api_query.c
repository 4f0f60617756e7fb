/* SQL over a pipeline's tables: read-only, only that pipeline's namespace,
 * no file, network or extension access (tl_lake_query enforces all three),
 * at most 10,000 rows back and 30 s of work. */
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "api_arrow_json.h"
#include "serve_lake.h"

#define SQL_MAX 10000
#define QUERY_ROWS 10000
#define QUERY_MS 30000

void api_query(service *svc, http_req *rq, http_resp *out)
{
    const char *slug = rq->params[0];
    json_t *p = api_pipeline(svc, slug, out);
    if (p == NULL) return;
    json_decref(p);
    json_t *body = req_json_object(rq, out);
    if (body == NULL) return;
    const char *sql = json_string_value(json_object_get(body, "sql"));
    while (sql && (*sql == ' ' || *sql == '\n' || *sql == '\t' || *sql == '\r')) sql++;
    char err[1024];
    tl_lake *wh = NULL;
    if (sql == NULL || *sql == 0) {
        reply_error(out, 422, "missing_sql", "Request body must include a `sql` field.");
    } else if (strlen(sql) > SQL_MAX) {
        reply_error(out, 422, "query_too_long", "SQL query exceeds 10 000 character limit.");
    } else if ((wh = lake_open_warehouse(svc, err, sizeof err)) == NULL) {
        reply_error(out, 502, "storage_error", "%s", err);
    } else {
        tl_sql_options opts = {.namespace_ = slug,
                               .only_namespace = 1,
                               .max_rows = QUERY_ROWS,
                               .timeout_ms = QUERY_MS};
        struct ArrowArrayStream stream = {0};
        tl_error e = {0};
        json_t *res = NULL;
        if (tl_lake_query(wh, sql, &opts, &stream, NULL, &e) != TL_OK) {
            reply_error(out, 400, "query_error", "%s", e.message);
        } else {
            if (arrow_stream_to_json(&stream, QUERY_ROWS, &res, err, sizeof err) != 0)
                reply_error(out, 400, "query_error", "%s", err);
            else
                reply_json(out, 200, res);
            stream.release(&stream);
        }
    }
    tl_lake_close(wh);
    json_decref(body);
}
