/* Pieces every command uses: options, errors and exit codes, the lake and
 * table from the command line or the environment, and output helpers. */
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static int option_index(const cli_args *a, const char *name)
{
    for (int i = 0; i < CLI_MAX_OPTIONS && a->cmd->options[i].name; i++)
        if (strcmp(a->cmd->options[i].name, name) == 0) return i;
    return -1;
}

const char *cli_opt(const cli_args *a, const char *name)
{
    int i = option_index(a, name);
    return i >= 0 && a->counts[i] ? a->values[i][a->counts[i] - 1] : NULL;
}

bool cli_flag(const cli_args *a, const char *name)
{
    int i = option_index(a, name);
    return i >= 0 && a->counts[i] > 0;
}

int cli_opt_all(const cli_args *a, const char *name, const char *const **out)
{
    int i = option_index(a, name);
    if (i < 0) return 0;
    *out = a->values[i];
    return a->counts[i];
}

bool cli_color(FILE *f)
{
    const char *no = getenv("NO_COLOR");
    return isatty(fileno(f)) && (no == NULL || no[0] == 0);
}

int cli_exit_code(tl_status st)
{
    switch (st) {
    case TL_OK:
        return EXIT_OK;
    case TL_ERR_NOT_FOUND:
    case TL_ERR_EXISTS:
    case TL_ERR_INVALID:
    case TL_ERR_QUERY: /* a query that does not plan or run is bad input */
        return EXIT_INPUT;
    default:
        return EXIT_STORAGE;
    }
}

static void print_error(const cli_args *a, const char *message)
{
    bool color = cli_color(stderr);
    fprintf(stderr, "%stimelake %s: error:%s %s\n", color ? "\033[1;31m" : "",
            a && a->cmd ? a->cmd->name : "", color ? "\033[0m" : "", message);
}

int cli_fail(const cli_args *a, const tl_error *err)
{
    print_error(a, err->message);
    return cli_exit_code(err->code);
}

int cli_usage(const cli_args *a, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    print_error(a, msg);
    fprintf(stderr, "usage: timelake %s %s (see --help)\n", a->cmd->name, a->cmd->usage);
    return EXIT_USAGE;
}

const char *cli_lake_location(const cli_args *a)
{
    const char *lake = cli_opt(a, "lake");
    if (lake == NULL) lake = a->warehouse;
    if (lake == NULL) lake = getenv("TIMELAKE_WAREHOUSE");
    return lake && lake[0] ? lake : NULL;
}

const char *cli_table_name(cli_args *a, bool positional)
{
    const char *name = cli_opt(a, "table");
    if (name == NULL && positional && a->npos > 0) {
        name = a->pos[0];
        memmove(a->pos, a->pos + 1, (size_t)--a->npos * sizeof *a->pos);
    }
    if (name == NULL) name = getenv("TIMELAKE_TABLE");
    return name && name[0] ? name : NULL;
}

int cli_no_table(const cli_args *a)
{
    /* "timelake append m.cpu x.csv": the table written where a file goes. */
    const char *first = a->npos > 0 ? a->pos[0] : NULL;
    struct stat st;
    if (first && strcmp(first, "-") != 0 && !strchr(first, '/') && stat(first, &st) != 0)
        return cli_usage(a,
                         "no table: give --table or set TIMELAKE_TABLE (\"%s\" is not a file; "
                         "if it is the table, write --table %s)",
                         first, first);
    return cli_usage(a, "no table: give --table or set TIMELAKE_TABLE");
}

int cli_open_table(cli_args *a, tl_lake *lake, const char *name, tl_table **out)
{
    tl_error err;
    tl_status st = tl_lake_open_table(lake, name, out, &err);
    return st == TL_OK ? EXIT_OK : cli_fail(a, &err);
}

int cli_open_lake(cli_args *a, tl_lake **out)
{
    const char *location = cli_lake_location(a);
    if (location == NULL)
        return cli_usage(a, "no warehouse: give -w URL (or --lake) or set TIMELAKE_WAREHOUSE");
    if (cli_opt(a, "lake") && a->warehouse && strcmp(cli_opt(a, "lake"), a->warehouse) != 0)
        return cli_usage(a, "the warehouse is given twice (--lake and -w)");
    tl_error err;
    if (tl_lake_open(location, a->n_storage ? a->storage : NULL, out, &err) != TL_OK)
        return cli_fail(a, &err);
    return EXIT_OK;
}

int cli_key_values(cli_args *a, const char *option, const char **out)
{
    const char *const *v;
    int n = cli_opt_all(a, option, &v);
    for (int i = 0; i < n; i++) {
        char *eq = strchr(v[i], '=');
        if (eq == NULL || eq == v[i])
            return cli_usage(a, "--%s wants KEY=VALUE, not \"%s\"", option, v[i]);
        *eq = 0; /* argv strings are writable */
        out[2 * i] = v[i];
        out[2 * i + 1] = eq + 1;
    }
    out[2 * n] = NULL;
    return -1;
}

void cli_format_bytes(double bytes, char *buf, size_t size)
{
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1000 && u < 4) {
        bytes /= 1000;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%.0f B", bytes);
    else
        snprintf(buf, size, "%.1f %s", bytes, units[u]);
}

/* Set once a result could not be printed: main then fails the command, as it
 * does when stdout itself fails. */
static bool output_lost;

/* The text of a JSON dump, which fails whole: jansson (2.14) leaves out a
 * key it could not write and goes on, so the first failed write fails every
 * later one. */
typedef struct json_text {
    char *data;
    size_t len, cap;
    bool failed;
} json_text;

static int json_text_write(const char *data, size_t size, void *ctx)
{
    json_text *t = ctx;
    if (!t->failed && t->len + size + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + size + 1) cap *= 2;
        char *more = realloc(t->data, cap);
        if (more) t->data = more, t->cap = cap;
        t->failed = more == NULL;
    }
    if (t->failed) return -1;
    memcpy(t->data + t->len, data, size);
    t->len += size;
    t->data[t->len] = 0;
    return 0;
}

/* The dump as a string (the caller frees it), or NULL when it failed. */
static char *json_dumps_whole(const json_t *j)
{
    json_text t = {0};
    if (json_dump_callback(j, json_text_write, &t, JSON_COMPACT | JSON_ENSURE_ASCII) != 0 ||
        t.failed || t.data == NULL) {
        free(t.data);
        return NULL;
    }
    return t.data;
}

void cli_print_json(void *json)
{
    /* json is NULL when building it ran out of memory (json_pack, json_array). */
    char *s = json ? json_dumps_whole(json) : NULL;
    if (s)
        puts(s);
    else {
        fputs("timelake: error: out of memory writing the JSON result\n", stderr);
        output_lost = true;
    }
    free(s);
    json_decref(json);
}

bool cli_output_lost(void)
{
    return output_lost;
}

void cli_print_table(const char *const *cells, int rows, int cols)
{
    cli_print_table_to(stdout, cells, rows, cols);
}

void cli_print_table_to(FILE *f, const char *const *cells, int rows, int cols)
{
    size_t width[64] = {0};
    if (cols > 64) cols = 64;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            size_t w = strlen(cells[r * cols + c]);
            if (w > width[c]) width[c] = w;
        }
    bool color = cli_color(f);
    for (int r = 0; r < rows; r++) {
        if (r == 0 && color) fputs("\033[1m", f);
        for (int c = 0; c < cols; c++) {
            const char *cell = cells[r * cols + c];
            if (c + 1 == cols)
                fputs(cell, f);
            else
                fprintf(f, "%-*s  ", (int)width[c], cell);
        }
        if (r == 0 && color) fputs("\033[0m", f);
        fputc('\n', f);
    }
}
