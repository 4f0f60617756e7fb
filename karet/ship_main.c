/* karet ship: the command. Options into a ship_config, one lock per state
 * file (cron may start a pass while the last one still runs), then one pass,
 * or a pass every --every until SIGINT or SIGTERM. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ship.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* "64M", "64MB", "1G", "1000": bytes (K/M/G are powers of 1024). */
static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-') return -1;
    uint64_t mul = 1;
    if (*end == 'k' || *end == 'K')
        mul = 1ULL << 10, end++;
    else if (*end == 'm' || *end == 'M')
        mul = 1ULL << 20, end++;
    else if (*end == 'g' || *end == 'G')
        mul = 1ULL << 30, end++;
    if (mul > 1 && (*end == 'B' || *end == 'b')) end++;
    if (*end || v == 0 || v > UINT64_MAX / mul) return -1;
    *out = v * mul;
    return 0;
}

/* "10m", "30s", "1h", "1d", "90" (seconds). */
static int parse_duration(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || v <= 0) return -1;
    long mul = *end == 0 || strcmp(end, "s") == 0 ? 1
               : strcmp(end, "m") == 0            ? 60
               : strcmp(end, "h") == 0            ? 3600
               : strcmp(end, "d") == 0            ? 86400
                                                  : 0;
    if (mul == 0 || v > 366L * 86400 / mul) return -1;
    *out = v * mul;
    return 0;
}

static char *absolute(const char *path)
{
    if (path[0] == '/') return strdup(path);
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) == NULL) return NULL;
    size_t n = strlen(cwd) + strlen(path) + 2;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%s/%s", cwd, path);
    return out;
}

/* The default stem of upload names: the log's base name up to its first dot. */
static char *default_name(const char *log)
{
    const char *base = strrchr(log, '/');
    base = base ? base + 1 : log;
    size_t n = strcspn(base, ".");
    return n ? strndup(base, n) : strdup("log");
}

static bool good_name(const char *s)
{
    if (!*s || strlen(s) > 200) return false;
    for (; *s; s++)
        if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') && !(*s >= '0' && *s <= '9') &&
            *s != '-' && *s != '_' && *s != '.')
            return false;
    return true;
}

static int add_option(ship_config *c, const char *kv, int *n)
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

static void free_config(ship_config *c)
{
    free(c->log), free(c->to), free(c->state_path), free(c->name), free((char *)c->header);
    for (char **o = c->storage_options; o && *o; o++) free(*o);
    free(c->storage_options);
}

static int parse(karet_args *a, ship_config *c, long *every)
{
    const char *v;
    if (a->npos > 0) return karet_usage(a, "unexpected argument %s", a->pos[0]);
    if ((v = karet_opt(a, "log")) == NULL || !*v) return karet_usage(a, "--log FILE is needed");
    if ((c->log = absolute(v)) == NULL) return karet_usage(a, "cannot make %s absolute", v);
    if ((v = karet_opt(a, "to")) == NULL || !*v)
        return karet_usage(a, "--to is needed (s3://, gs://, az:// URL or a folder)");
    /* A folder is kept absolute: the state records where it ships to. */
    if ((c->to = strstr(v, "://") ? strdup(v) : absolute(v)) == NULL)
        return karet_usage(a, "cannot make %s absolute", v);
    const char *const *opts;
    int n = karet_opt_all(a, "storage-option", &opts), k = 0;
    for (int i = 0; i < n; i++)
        if (add_option(c, opts[i], &k) != 0)
            return karet_usage(a, "a storage option is KEY=VALUE, not %s", opts[i]);
    c->run_url = karet_opt(a, "run-url");
    c->token = getenv("KARET_WORKER_TOKEN");
    if (c->run_url && (c->token == NULL || !*c->token))
        return karet_usage(a, "--run-url needs the worker token in KARET_WORKER_TOKEN");
    v = karet_opt(a, "format");
    if (v && strcmp(v, "csv") != 0 && strcmp(v, "ndjson") != 0)
        return karet_usage(a, "--format is ndjson or csv, not %s", v);
    c->csv = v && strcmp(v, "csv") == 0;
    if ((v = karet_opt(a, "header"))) {
        if (!c->csv) return karet_usage(a, "--header goes with --format csv");
        if (!*v || strchr(v, '\n')) return karet_usage(a, "--header is one line of column names");
        size_t len = strlen(v) + 2;
        char *h = malloc(len);
        if (h) snprintf(h, len, "%s\n", v);
        c->header = h;
    }
    c->rotated = karet_opt(a, "rotated");
    v = karet_opt(a, "name");
    if (v && !good_name(v))
        return karet_usage(a, "--name is letters, digits, '-', '_' and '.', not %s", v);
    c->name = v ? strdup(v) : default_name(c->log);
    c->max_file_size = 64ULL << 20;
    if ((v = karet_opt(a, "max-file-size")) && parse_size(v, &c->max_file_size) != 0)
        return karet_usage(a, "--max-file-size is a size such as 64M or 1000000, not %s", v);
    c->gzip = karet_flag(a, "gzip");
    c->quiet = karet_flag(a, "quiet");
    *every = 0;
    if ((v = karet_opt(a, "every")) && parse_duration(v, every) != 0)
        return karet_usage(a, "--every is a duration such as 10m, 30s or 1h, not %s", v);
    v = karet_opt(a, "state");
    c->state_path = v ? absolute(v) : ship_default_state_path(c->log);
    if (c->state_path == NULL || c->name == NULL)
        return karet_fail(a, SHIP_ERR_LOG, "out of memory");
    return -1;
}

/* One ship per state at a time: a second one finds the lock taken. */
static int take_lock(const ship_config *c, int *fd)
{
    char path[4200];
    snprintf(path, sizeof path, "%s.lock", c->state_path);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", c->state_path);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(dir, 0700);
            *p = '/';
        }
    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (*fd < 0) {
        fprintf(stderr, "karet ship: error: cannot create the lock %s: %s\n", path,
                strerror(errno));
        return SHIP_ERR_LOG;
    }
    if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
        fprintf(stderr,
                "karet ship: another karet ship is shipping %s (the lock %s is taken): this call "
                "does nothing\n",
                c->log, path);
        return -1;
    }
    return 0;
}

static void sleep_until(time_t when)
{
    while (!stop_requested && time(NULL) < when) {
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
}

int karet_cmd_ship(karet_args *a)
{
    ship_config c = {0};
    long every = 0;
    int rc = parse(a, &c, &every);
    if (rc >= 0) {
        free_config(&c);
        return rc;
    }
    int lock = -1;
    rc = take_lock(&c, &lock);
    if (rc != 0) {
        if (lock >= 0) close(lock);
        free_config(&c);
        return rc < 0 ? SHIP_OK : rc;
    }
    if (every == 0) {
        rc = ship_pass(&c);
    } else {
        struct sigaction sa = {.sa_handler = on_signal};
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        rc = SHIP_OK;
        while (!stop_requested) {
            time_t start = time(NULL);
            ship_pass(&c); /* a failed pass said why; the next one tries again */
            sleep_until(start + every);
        }
    }
    close(lock);
    free_config(&c);
    return rc;
}
