/* The handlers of the HTTP API, one per route of api_routes.c. Paths,
 * bodies, status and error codes follow the published Karet (KARET.md §1);
 * errors are {"error": "<code>", "message": "..."}. */
#ifndef KARET_API_H
#define KARET_API_H

#include "serve_http.h"

/* The pipeline's row ({slug, name, created_at, live_version}, caller owns),
 * or NULL after replying 404 pipeline_not_found. */
json_t *api_pipeline(service *svc, const char *slug, http_resp *out);
/* The live config of a pipeline (caller owns) and its version, or NULL. */
json_t *api_live_config(service *svc, const char *slug, int64_t *version);
/* The config of a template ("blank", "csv_events") for a pipeline (caller
 * owns), or NULL for an unknown name. */
json_t *api_template(const char *name, const char *slug);
/* Registers a pipeline with config (borrowed, already validated) as its
 * version 1. Returns 0 (*version set), 1 when the slug is taken, -1. */
int api_create_pipeline(service *svc, const char *slug, const char *name, json_t *config,
                        const char *author, int64_t *version);
/* 1 when key may name a lake object from a request: relative, no "." or
 * ".." or empty segment, no control character or backslash. */
int api_key_ok(const char *key);
/* 1 when s is a slug: 1 to 63 of [a-z0-9_-], starting with a letter or digit. */
int api_slug_ok(const char *s);

#define H(name) void name(service *svc, http_req *rq, http_resp *out)
H(api_health);
H(api_sign_in);
H(api_sign_out);
H(api_me);
H(api_account);
H(api_users_list);
H(api_users_create);
H(api_user_get);
H(api_user_patch);
H(api_user_delete);
H(api_pipelines_list);
H(api_pipelines_create);
H(api_pipeline_get);
H(api_pipeline_patch);
H(api_pipeline_delete);
H(api_config_get);
H(api_config_put);
H(api_config_history);
H(api_config_version);
H(api_config_revert);
H(api_validate);
H(api_expr_parse);
H(api_expr_format);
H(api_jobs_list);
H(api_jobs_create);
H(api_jobs_events);
H(api_job_get);
H(api_job_cancel);
H(api_events_s3);
H(api_tables_list);
H(api_table_rows);
H(api_query);
H(api_queries_list);
H(api_queries_create);
H(api_query_get);
H(api_query_delete);
H(api_lake_list);
H(api_lake_put);
H(api_lake_delete);
H(api_lake_object);
#undef H

int api_lake_put_body(service *svc, http_req *rq, const char *data, size_t len, http_resp *out);

#endif
