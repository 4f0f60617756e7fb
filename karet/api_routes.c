/* Every route of the service and the least role that may call it: viewers
 * read, editors change pipelines, configs, files and start runs, admins
 * manage users and delete or rename pipelines. The worker token is an admin.
 * A POST that only reads (a query, a validation) needs a viewer. */
#include "api.h"

#define R(m, p, role, flags, fn)                                                                   \
    {                                                                                              \
        m, p, role, flags, fn, NULL                                                                \
    }

const route ROUTES[] = {
    R("GET", "/health", ROLE_NONE, ROUTE_PUBLIC, api_health),
    R("POST", "/api/auth/sign-in/username", ROLE_NONE, ROUTE_PUBLIC, api_sign_in),
    R("POST", "/api/auth/sign-out", ROLE_NONE, ROUTE_PUBLIC, api_sign_out),
    R("GET", "/api/auth/me", ROLE_NONE, ROUTE_PUBLIC, api_me),
    R("PATCH", "/api/account", ROLE_VIEWER, 0, api_account),
    R("POST", "/events/s3", ROLE_NONE, ROUTE_WEBHOOK, api_events_s3),

    R("GET", "/api/users", ROLE_ADMIN, 0, api_users_list),
    R("POST", "/api/users", ROLE_ADMIN, 0, api_users_create),
    R("GET", "/api/users/:username", ROLE_ADMIN, 0, api_user_get),
    R("PATCH", "/api/users/:username", ROLE_ADMIN, 0, api_user_patch),
    R("DELETE", "/api/users/:username", ROLE_ADMIN, 0, api_user_delete),

    R("GET", "/api/pipelines", ROLE_VIEWER, 0, api_pipelines_list),
    R("POST", "/api/pipelines", ROLE_EDITOR, 0, api_pipelines_create),
    R("GET", "/api/pipelines/:slug", ROLE_VIEWER, 0, api_pipeline_get),
    R("PATCH", "/api/pipelines/:slug", ROLE_ADMIN, 0, api_pipeline_patch),
    R("DELETE", "/api/pipelines/:slug", ROLE_ADMIN, 0, api_pipeline_delete),

    R("GET", "/api/p/:slug/config", ROLE_VIEWER, 0, api_config_get),
    R("PUT", "/api/p/:slug/config", ROLE_EDITOR, 0, api_config_put),
    R("GET", "/api/p/:slug/config/history", ROLE_VIEWER, 0, api_config_history),
    R("GET", "/api/p/:slug/config/history/:version", ROLE_VIEWER, 0, api_config_version),
    R("POST", "/api/p/:slug/config/history/:version/revert", ROLE_EDITOR, 0, api_config_revert),
    R("POST", "/api/p/:slug/validate", ROLE_VIEWER, 0, api_validate),
    R("POST", "/api/expressions/parse", ROLE_VIEWER, 0, api_expr_parse),
    R("POST", "/api/expressions/format", ROLE_VIEWER, 0, api_expr_format),

    R("GET", "/api/p/:slug/jobs", ROLE_VIEWER, 0, api_jobs_list),
    R("POST", "/api/p/:slug/jobs", ROLE_EDITOR, 0, api_jobs_create),
    R("GET", "/api/p/:slug/jobs/events", ROLE_VIEWER, 0, api_jobs_events),
    R("GET", "/api/p/:slug/jobs/:id", ROLE_VIEWER, 0, api_job_get),
    R("POST", "/api/p/:slug/jobs/:id/cancel", ROLE_EDITOR, 0, api_job_cancel),

    R("GET", "/api/p/:slug/tables", ROLE_VIEWER, 0, api_tables_list),
    R("GET", "/api/p/:slug/tables/:table/rows", ROLE_VIEWER, 0, api_table_rows),
    R("POST", "/api/p/:slug/query", ROLE_VIEWER, 0, api_query),
    R("GET", "/api/p/:slug/queries", ROLE_VIEWER, 0, api_queries_list),
    R("POST", "/api/p/:slug/queries", ROLE_EDITOR, 0, api_queries_create),
    R("GET", "/api/p/:slug/queries/:name", ROLE_VIEWER, 0, api_query_get),
    R("DELETE", "/api/p/:slug/queries/:name", ROLE_EDITOR, 0, api_query_delete),

    R("GET", "/api/lake", ROLE_VIEWER, 0, api_lake_list),
    {"PUT", "/api/lake", ROLE_EDITOR, ROUTE_STREAM, api_lake_put, api_lake_put_body},
    R("DELETE", "/api/lake", ROLE_EDITOR, 0, api_lake_delete),
    R("GET", "/api/lake/object", ROLE_VIEWER, 0, api_lake_object),

};

const size_t N_ROUTES = sizeof ROUTES / sizeof ROUTES[0];
