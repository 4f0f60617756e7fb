/* Every page of the service and the least role that may see it. Pages are
 * GETs only: what they change, they change through the API (api_routes.c),
 * which checks the role again. */
#include "web.h"

#define P(p, role, fn)                                                                             \
    {                                                                                              \
        "GET", p, role, ROUTE_PAGE, fn, NULL                                                       \
    }

const route WEB_ROUTES[] = {
    {"GET", "/", ROLE_NONE, ROUTE_PUBLIC, web_home, NULL},
    {"GET", "/sign-in", ROLE_NONE, ROUTE_PUBLIC, web_sign_in, NULL},
    {"GET", "/static/:name", ROLE_NONE, ROUTE_PUBLIC, web_static, NULL},
    P("/pipelines", ROLE_VIEWER, web_pipelines),
    P("/p/:slug", ROLE_VIEWER, web_pipeline_home),
    P("/p/:slug/jobs", ROLE_VIEWER, web_jobs),
    P("/p/:slug/jobs/:id", ROLE_VIEWER, web_job),
    P("/p/:slug/data", ROLE_VIEWER, web_data),
    P("/p/:slug/editor", ROLE_VIEWER, web_editor),
    P("/lake", ROLE_VIEWER, web_lake),
    P("/settings", ROLE_VIEWER, web_settings),
};

const size_t N_WEB_ROUTES = sizeof WEB_ROUTES / sizeof WEB_ROUTES[0];
