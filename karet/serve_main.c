/* `karet serve`: flags and environment, the defaults that make a bare
 * `karet serve` work (a data folder and a local lake beside it), the first
 * admin, and the order things start and stop in. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "cli.h"
#include "jobs.h"
#include "json_text.h"
#include "serve_demo.h"
#include "serve_http.h"
#include "serve_lake.h"

#define DEFAULT_PORT 8080
#define DEFAULT_DATA_DIR "karet-data"
#define DEFAULT_LAKE_DIR "karet-lake"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *iso_time(int64_t ms, char *buf, size_t len)
{
    if (ms <= 0) {
        buf[0] = 0;
        return buf;
    }
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%03dZ", base, (int)(ms % 1000));
    return buf;
}

void log_json(json_t *j)
{
    if (j == NULL) return;
    char ts[40];
    json_object_set_new(j, "ts", json_string(iso_time(now_ms(), ts, sizeof ts)));
    char *s = kjson_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (s == NULL) return;
    pthread_mutex_lock(&log_lock);
    fputs(s, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    pthread_mutex_unlock(&log_lock);
    free(s);
}

static int usage_error(karet_args *a, const char *what, const char *value)
{
    return karet_usage(a, "%s \"%s\"", what, value);
}

static char *env_dup(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? strdup(v) : NULL;
}

static int64_t env_int(const char *name, int64_t dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoll(v, NULL, 10) : dflt;
}

static int parse_listen(serve_config *c, const char *v)
{
    const char *colon = strrchr(v, ':');
    const char *port = colon ? colon + 1 : v;
    char *end;
    long p = strtol(port, &end, 10);
    if (*port == 0 || *end || p < 0 || p > 65535) return -1;
    c->port = (int)p;
    if (colon) {
        free(c->listen_host);
        const char *h = v;
        size_t n = (size_t)(colon - v);
        if (n >= 2 && h[0] == '[' && h[n - 1] == ']') h++, n -= 2;
        c->listen_host = strndup(h, n);
    }
    return 0;
}

static int add_option(serve_config *c, const char *kv, int *n)
{
    const char *eq = strchr(kv, '=');
    if (eq == NULL || eq == kv) return -1;
    char **o = realloc(c->storage_options, (size_t)(*n + 3) * sizeof *o);
    if (o == NULL) return -1;
    c->storage_options = o;
    o[(*n)++] = strndup(kv, (size_t)(eq - kv));
    o[(*n)++] = strdup(eq + 1);
    o[*n] = NULL;
    return 0;
}

/* Flags win over the environment, which wins over the defaults. */
static int parse_args(serve_config *c, karet_args *a)
{
    int n_opts = 0;
    const char *v;
    if (a->npos > 0) return usage_error(a, "unexpected argument", a->pos[0]);
    c->data_dir = (v = karet_opt(a, "data-dir")) ? strdup(v) : env_dup("KARET_DATA_DIR");
    c->lake_url = (v = karet_opt(a, "lake")) ? strdup(v) : env_dup("KARET_LAKE");
    c->port = DEFAULT_PORT;
    const char *listen = karet_opt(a, "listen");
    if (listen == NULL) listen = getenv("KARET_LISTEN") ? getenv("KARET_LISTEN") : getenv("PORT");
    if (listen && *listen && parse_listen(c, listen) != 0)
        return usage_error(a, "bad listen address (give [ADDR:]PORT):", listen);
    const char *const *opts;
    int n = karet_opt_all(a, "storage-option", &opts);
    for (int i = 0; i < n; i++)
        if (add_option(c, opts[i], &n_opts) != 0)
            return usage_error(a, "a storage option is KEY=VALUE, not", opts[i]);
    v = karet_opt(a, "workers");
    c->workers = v ? atoi(v) : (int)env_int("KARET_WORKERS", 2);
    if (c->workers < 1 || c->workers > 64)
        return usage_error(a, "--workers must be 1 to 64, not", v ? v : getenv("KARET_WORKERS"));
    if ((v = karet_opt(a, "public-url"))) c->public_url = strdup(v);
    c->demo = karet_flag(a, "demo");
    if ((v = karet_opt(a, "max-upload")) && (c->max_upload = strtoll(v, NULL, 10)) < 1)
        return usage_error(a, "--max-upload must be a positive number of bytes, not", v);
    return 0;
}

static void defaults(serve_config *c)
{
    if (c->data_dir == NULL) c->data_dir = strdup(DEFAULT_DATA_DIR);
    if (c->lake_url == NULL) {
        /* A local lake beside the data folder. */
        char *slash = strrchr(c->data_dir, '/');
        size_t n = slash ? (size_t)(slash - c->data_dir + 1) : 0;
        size_t len = n + sizeof DEFAULT_LAKE_DIR;
        c->lake_url = malloc(len);
        snprintf(c->lake_url, len, "%.*s%s", (int)n, c->data_dir, DEFAULT_LAKE_DIR);
    }
    c->worker_token = env_dup("KARET_WORKER_TOKEN");
    c->webhook_secret = env_dup("KARET_WEBHOOK_SECRET");
    c->admin_username = env_dup("KARET_ADMIN_USERNAME");
    c->admin_password_hash = env_dup("KARET_ADMIN_PASSWORD_HASH");
    if (c->public_url == NULL) c->public_url = env_dup("KARET_PUBLIC_URL");
    if (c->max_upload == 0) c->max_upload = env_int("KARET_MAX_UPLOAD", 100 << 20);
    c->session_ttl_s = env_int("KARET_SESSION_TTL_S", 7 * 24 * 3600);
    c->debounce_quiet_ms = env_int("KARET_DEBOUNCE_QUIET_MS", 5000);
    c->debounce_max_ms = env_int("KARET_DEBOUNCE_MAX_MS", 30000);
    c->sse_ping_ms = env_int("KARET_SSE_PING_MS", 25000);
    c->retry_backoff_ms = env_int("KARET_RETRY_BACKOFF_MS", 2000);
}

static void free_config(serve_config *c)
{
    free(c->data_dir), free(c->lake_url), free(c->listen_host), free(c->worker_token);
    free(c->webhook_secret), free(c->admin_username), free(c->admin_password_hash);
    free(c->public_url);
    for (char **o = c->storage_options; o && *o; o++) free(*o);
    free(c->storage_options);
}

static int mkdirs(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int is_local(const char *url)
{
    return strstr(url, "://") == NULL || strncmp(url, "file://", 7) == 0;
}

/* The environment's admin is (re)asserted on every start; with no account
 * at all and none from the environment, an admin with a fresh password is
 * made and the password printed once. */
static int bootstrap_admin(service *svc, char *generated, size_t len)
{
    serve_config *c = &svc->cfg;
    generated[0] = 0;
    if (c->admin_username || c->admin_password_hash) {
        char why[160];
        if (!c->admin_username || !c->admin_password_hash) {
            fprintf(stderr, "karet serve: set both KARET_ADMIN_USERNAME and "
                            "KARET_ADMIN_PASSWORD_HASH, or neither\n");
            return -1;
        }
        if (password_hash_check(c->admin_password_hash, why, sizeof why) != 0) {
            fprintf(stderr,
                    "karet serve: KARET_ADMIN_PASSWORD_HASH is not a scrypt hash (%s); make one "
                    "with `karet hash-password`\n",
                    why);
            return -1;
        }
        json_t *old = db_query_one(svc->db,
                                   "SELECT password_hash, role FROM users WHERE "
                                   "username = ?",
                                   "s", c->admin_username);
        int changed = old && strcmp(json_string_value(json_object_get(old, "password_hash")),
                                    c->admin_password_hash) != 0;
        json_decref(old);
        db_exec(svc->db, NULL,
                "INSERT INTO users (username, role, password_hash, created_at, bootstrap) "
                "VALUES (?, 'admin', ?, ?, 1) ON CONFLICT (username) DO UPDATE SET "
                "role = 'admin', password_hash = excluded.password_hash, bootstrap = 1",
                "ssi", c->admin_username, c->admin_password_hash, now_ms());
        db_exec(svc->db, NULL, "UPDATE users SET bootstrap = 0 WHERE username <> ?", "s",
                c->admin_username);
        if (changed)
            db_exec(svc->db, NULL, "DELETE FROM sessions WHERE username = ?", "s",
                    c->admin_username);
        return 0;
    }
    db_exec(svc->db, NULL, "UPDATE users SET bootstrap = 0", "");
    json_t *any = db_query_one(svc->db, "SELECT username FROM users LIMIT 1", "");
    if (any) return json_decref(any), 0;
    char pw[20], hash[256];
    random_alnum(pw, 16);
    if (password_hash(pw, hash, sizeof hash) != 0) return -1;
    db_exec(svc->db, NULL,
            "INSERT INTO users (username, role, password_hash, created_at) "
            "VALUES ('admin', 'admin', ?, ?)",
            "si", hash, now_ms());
    snprintf(generated, len, "%s", pw);
    return 0;
}

static char generated_password[32];

void serve_started(service *svc)
{
    serve_config *c = &svc->cfg;
    const char *host = c->listen_host ? c->listen_host : "127.0.0.1";
    char url[512];
    if (c->public_url)
        snprintf(url, sizeof url, "%s", c->public_url);
    else
        snprintf(url, sizeof url, strchr(host, ':') ? "http://[%s]:%d" : "http://%s:%d",
                 strcmp(host, "0.0.0.0") == 0 ? "127.0.0.1" : host, c->port);
    fprintf(stderr, "Karet is serving %s\n", url);
    fprintf(stderr, "  data: %s/karet.db\n  lake: %s\n", c->data_dir, c->lake_url);
    if (generated_password[0])
        fprintf(stderr,
                "  sign in at %s as \"admin\" with password %s (shown once; choose your own with "
                "KARET_ADMIN_USERNAME and KARET_ADMIN_PASSWORD_HASH from `karet hash-password`)\n",
                url, generated_password);
    else if (c->admin_username)
        fprintf(stderr, "  sign in at %s as \"%s\" (KARET_ADMIN_USERNAME)\n", url,
                c->admin_username);
    else
        fprintf(stderr, "  sign in at %s with an account of this data folder\n", url);
    fprintf(stderr, "  API token: %s\n  upload events: POST %s/events/s3 %s\n",
            c->worker_token ? "Authorization: Bearer $KARET_WORKER_TOKEN"
                            : "none (set KARET_WORKER_TOKEN)",
            url, c->webhook_secret ? "(KARET_WEBHOOK_SECRET)" : "(off: set KARET_WEBHOOK_SECRET)");
    log_json(json_pack("{s:s,s:s,s:i,s:i}", "event", "listening", "url", url, "port", c->port,
                       "workers", c->workers));
}

void serve_stopping(service *svc)
{
    bus_close(svc->events);
}

static int run_service(service *svc)
{
    serve_config *c = &svc->cfg;
    char err[1024], dbpath[PATH_MAX];
    http_block_signals();
    if (mkdirs(c->data_dir) != 0) {
        fprintf(stderr, "karet serve: cannot create the data folder %s: %s\n", c->data_dir,
                strerror(errno));
        return 1;
    }
    if (is_local(c->lake_url) && strncmp(c->lake_url, "file://", 7) != 0 &&
        mkdirs(c->lake_url) != 0) {
        fprintf(stderr, "karet serve: cannot create the lake folder %s: %s\n", c->lake_url,
                strerror(errno));
        return 1;
    }
    tl_lake *probe = lake_open_objects(svc, err, sizeof err);
    if (probe == NULL) {
        fprintf(stderr, "karet serve: cannot open the lake %s: %s\n", c->lake_url, err);
        return 1;
    }
    tl_lake_close(probe);
    lake_bucket_of(c->lake_url, &svc->lake_bucket, &svc->lake_prefix);
    snprintf(dbpath, sizeof dbpath, "%s/karet.db", c->data_dir);
    if (db_open(dbpath, &svc->db, err, sizeof err) != DB_OK) {
        fprintf(stderr, "karet serve: %s\n", err);
        return 1;
    }
    if (bootstrap_admin(svc, generated_password, sizeof generated_password) != 0) return 1;
    svc->events = bus_new();
    svc->throttle = throttle_new();
    if (svc->events == NULL || svc->throttle == NULL) return 1;
    if ((svc->jobs = jobs_start(svc, err, sizeof err)) == NULL ||
        (svc->debounce = debouncer_start(svc)) == NULL) {
        fprintf(stderr, "karet serve: %s\n", err);
        return 1;
    }
    if (c->demo && serve_demo_seed(svc, err, sizeof err) != 0) {
        fprintf(stderr, "karet serve: the demo: %s\n", err);
        return 1;
    }
    int rc = http_serve(svc, err, sizeof err);
    if (rc != 0) fprintf(stderr, "karet serve: %s\n", err);
    /* Pending upload batches become queued jobs, then running ones stop
     * before their next commit and are queued again. */
    debouncer_stop(svc->debounce);
    svc->debounce = NULL;
    jobs_stop(svc->jobs);
    svc->jobs = NULL;
    log_json(json_pack("{s:s}", "event", "stopped"));
    return rc;
}

int karet_cmd_serve(karet_args *a)
{
    service svc;
    memset(&svc, 0, sizeof svc);
    int rc = parse_args(&svc.cfg, a);
    if (rc == 0) {
        defaults(&svc.cfg);
        rc = run_service(&svc);
    }
    debouncer_stop(svc.debounce);
    jobs_stop(svc.jobs);
    db_close(svc.db);
    bus_free(svc.events);
    throttle_free(svc.throttle);
    free(svc.lake_bucket);
    free(svc.lake_prefix);
    free_config(&svc.cfg);
    return rc;
}
