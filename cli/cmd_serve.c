/* timelake serve-notifications: the notification ingest server (server/),
 * configured from flags, or from the environment like the documented
 * notify.py (NOTIFY_TOKEN, TIMELAKE_WAREHOUSE, TIMELAKE_TABLE, PORT, AWS_*). */
#include <stdlib.h>
#include <string.h>

#include "../server/notify.h"
#include "cli.h"

#define MAX_LANDING_OPTIONS 64

static const char *flag_or_env(const cli_args *a, const char *flag, const char *env)
{
    const char *v = cli_opt(a, flag);
    if (v == NULL) v = getenv(env);
    return v && v[0] ? v : NULL;
}

static int parse_number(cli_args *a, const char *flag, const char *env, double min, double max,
                        double *out)
{
    const char *v = flag_or_env(a, flag, env ? env : "");
    if (v == NULL) return EXIT_OK;
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || d < min || d > max)
        return cli_usage(a, "--%s: \"%s\" is not a number from %g to %g", flag, v, min, max);
    *out = d;
    return EXIT_OK;
}

/* --route PREFIX=TABLE, repeatable. The routes point into argv. */
static int parse_routes(cli_args *a, tl_notify_route *routes, char **owned, int *n)
{
    const char *const *v;
    int count = cli_opt_all(a, "route", &v);
    for (int i = 0; i < count; i++) {
        const char *eq = strrchr(v[i], '=');
        if (eq == NULL || eq[1] == 0)
            return cli_usage(a, "--route \"%s\": expected PREFIX=NAMESPACE.TABLE", v[i]);
        owned[i] = strndup(v[i], (size_t)(eq - v[i]));
        if (owned[i] == NULL) return EXIT_STORAGE;
        routes[i] = (tl_notify_route){owned[i], eq + 1};
        *n = i + 1;
    }
    return EXIT_OK;
}

/* The landing buckets' storage options: --landing-option KEY=VALUE, plus
 * --s3-endpoint / --s3-region; an http:// endpoint (a flag or AWS_ENDPOINT_URL*)
 * is allowed as such, as boto3 does for notify.py. */
static int landing_options(cli_args *a, const char **opts, char **owned)
{
    int n = 0, k = 0;
    const char *const *v;
    int count = cli_opt_all(a, "landing-option", &v);
    for (int i = 0; i < count && i < MAX_LANDING_OPTIONS; i++) {
        const char *eq = strchr(v[i], '=');
        if (eq == NULL) return cli_usage(a, "--landing-option \"%s\": expected KEY=VALUE", v[i]);
        if ((owned[k] = strndup(v[i], (size_t)(eq - v[i]))) == NULL) return EXIT_STORAGE;
        opts[n++] = owned[k++];
        opts[n++] = eq + 1;
    }
    const char *endpoint = cli_opt(a, "s3-endpoint"), *region = cli_opt(a, "s3-region");
    if (endpoint) opts[n++] = "aws_endpoint", opts[n++] = endpoint;
    if (region) opts[n++] = "aws_region", opts[n++] = region;
    if (endpoint == NULL) endpoint = flag_or_env(a, "s3-endpoint", "AWS_ENDPOINT_URL_S3");
    if (endpoint == NULL) endpoint = flag_or_env(a, "s3-endpoint", "AWS_ENDPOINT_URL");
    if (endpoint && strncmp(endpoint, "http://", 7) == 0)
        opts[n++] = "aws_allow_http", opts[n++] = "true";
    opts[n] = NULL;
    return EXIT_OK;
}

static int configure(cli_args *a, tl_notify_config *c, tl_notify_route *routes, char **owned,
                     const char **opts)
{
    c->lake = cli_lake_location(a);
    c->lake_options = a->n_storage ? a->storage : NULL;
    c->default_table = cli_table_name(a, false);
    c->token = flag_or_env(a, "token", "NOTIFY_TOKEN");
    c->bind = cli_opt(a, "bind");
    if (c->lake == NULL) return cli_usage(a, "no lake: give --lake or set TIMELAKE_WAREHOUSE");
    if (c->token == NULL) return cli_usage(a, "no token: set NOTIFY_TOKEN or give --token");
    double port = 8080, body = 1 << 20, events = 1000, idle = 30, deadline = 8, conns = 64,
           per_client = 16, header = 10;
    int rc = parse_number(a, "port", "PORT", 1, 65535, &port);
    if (rc == EXIT_OK) rc = parse_number(a, "max-body", NULL, 64, 1 << 30, &body);
    if (rc == EXIT_OK) rc = parse_number(a, "max-events", NULL, 1, 100000, &events);
    if (rc == EXIT_OK) rc = parse_number(a, "idle-timeout", NULL, 1, 3600, &idle);
    if (rc == EXIT_OK) rc = parse_number(a, "deadline", NULL, 0, 3600, &deadline);
    if (rc == EXIT_OK) rc = parse_number(a, "max-connections", NULL, 1, 10000, &conns);
    if (rc == EXIT_OK) rc = parse_number(a, "max-per-client", NULL, 1, 10000, &per_client);
    if (rc == EXIT_OK) rc = parse_number(a, "header-timeout", NULL, 1, 3600, &header);
    if (rc == EXIT_OK) rc = parse_routes(a, routes, owned, &c->n_routes);
    if (rc == EXIT_OK) rc = landing_options(a, opts, owned + 64);
    c->routes = routes;
    c->landing_options = opts;
    c->port = (int)port;
    c->max_body = (size_t)body;
    c->max_events = (int)events;
    c->idle_timeout_s = (int)idle;
    c->deadline_s = deadline;
    c->max_connections = (int)conns;
    c->max_per_client = (int)per_client;
    c->header_timeout_s = header;
    return rc;
}

int cmd_serve_notifications(cli_args *a)
{
    tl_notify_config c = {0};
    tl_notify_route routes[64];
    char *owned[64 + MAX_LANDING_OPTIONS] = {0};
    const char *opts[2 * MAX_LANDING_OPTIONS + 8];
    int rc = configure(a, &c, routes, owned, opts);
    if (rc == EXIT_OK) {
        tl_error err = {0};
        if (tl_notify_serve(&c, &err) != TL_OK) rc = cli_fail(a, &err);
    }
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++) free(owned[i]);
    return rc;
}
