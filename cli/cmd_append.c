/* timelake append */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int open_table(cli_args *a, tl_lake **lake, tl_table **t, cli_loader *l)
{
    const char *name = cli_table_name(a, false);
    if (name == NULL) return cli_no_table(a);
    const char *format = NULL;
    tl_error err;
    const char *f = cli_opt(a, "format");
    if (f && tl_data_format(f, NULL, &format, &err) != TL_OK)
        return cli_usage(a, "%s", err.message);
    int rc = cli_open_lake(a, lake);
    if (rc != EXIT_OK) return rc;
    if ((rc = cli_open_table(a, *lake, name, t)) != EXIT_OK) return rc;
    if (cli_loader_init(l, *t, format, &err) != TL_OK) return cli_fail(a, &err);
    return EXIT_OK;
}

/* What the commits of a chunked append are reported as. */
typedef struct chunk_report {
    const cli_args *a;
    const char *what;
    cli_loader *l;
} chunk_report;

static void report_commit(void *ctx, int commit, const tl_append_result *r)
{
    chunk_report *c = ctx;
    cli_progress_end(&c->l->progress);
    char what[1100];
    snprintf(what, sizeof what, "%s (commit %d)", c->what, commit);
    if (c->a->json) {
        void *j = cli_append_json(c->what, r);
        json_object_set_new(j, "commit", json_integer(commit));
        cli_print_json(j);
    } else {
        cli_append_print(what, r);
    }
}

/* files as commits of rows_per_commit rows; batch ids ID#k when `batch_id`. */
static int append_chunked(cli_args *a, cli_loader *l, const char *const *files, int n,
                          const char *what, const char *batch_id, int64_t rows_per_commit)
{
    chunk_report c = {a, what, l};
    tl_error err;
    tl_status st =
        cli_loader_append_chunked(l, files, n, batch_id, rows_per_commit, report_commit, &c, &err);
    cli_progress_end(&l->progress);
    return st == TL_OK ? EXIT_OK : cli_fail(a, &err);
}

/* One commit per file, each with its file name as batch id. */
static int append_each(cli_args *a, cli_loader *l, int64_t rows_per_commit)
{
    for (int i = 0; i < a->npos; i++) {
        const char *file = a->pos[i];
        if (strcmp(file, "-") == 0)
            return cli_usage(a, "--batch-id-from-name needs files, not stdin");
        if (rows_per_commit > 0) {
            int rc = append_chunked(a, l, &a->pos[i], 1, file, base_name(file), rows_per_commit);
            if (rc != EXIT_OK) return rc;
            continue;
        }
        tl_append_result r;
        tl_error err;
        if (cli_loader_append(l, &a->pos[i], 1, base_name(file), &r, &err) != TL_OK) {
            cli_progress_end(&l->progress);
            return cli_fail(a, &err);
        }
        cli_progress_end(&l->progress);
        if (a->json)
            cli_print_json(cli_append_json(file, &r));
        else
            cli_append_print(file, &r);
    }
    return EXIT_OK;
}

static int append_all(cli_args *a, cli_loader *l, int64_t rows_per_commit)
{
    const char *what = a->npos == 1 ? a->pos[0] : "files";
    if (a->npos == 1 && strcmp(what, "-") == 0) what = "stdin";
    if (rows_per_commit > 0)
        return append_chunked(a, l, a->pos, a->npos, what, cli_opt(a, "batch-id"), rows_per_commit);
    tl_append_result r;
    tl_error err;
    tl_status st = cli_loader_append(l, a->pos, a->npos, cli_opt(a, "batch-id"), &r, &err);
    cli_progress_end(&l->progress);
    if (st != TL_OK) return cli_fail(a, &err);
    if (a->json)
        cli_print_json(cli_append_json(what, &r));
    else
        cli_append_print(what, &r);
    return EXIT_OK;
}

int cmd_append(cli_args *a)
{
    tl_lake *lake = NULL;
    tl_table *t = NULL;
    cli_loader l = {0};
    bool each = cli_flag(a, "batch-id-from-name");
    int rc = EXIT_OK;
    if (each && cli_opt(a, "batch-id"))
        return cli_usage(a, "give --batch-id or --batch-id-from-name, not both");
    int stdin_count = 0;
    for (int i = 0; i < a->npos; i++) stdin_count += strcmp(a->pos[i], "-") == 0;
    if (stdin_count > 1) return cli_usage(a, "stdin (-) can be read only once");
    if (a->npos == 0) return cli_usage(a, "no input: give one or more files, or - for stdin");
    int64_t rows_per_commit = 0;
    const char *rpc = cli_opt(a, "rows-per-commit");
    if (rpc) {
        char *end = NULL;
        long long v = strtoll(rpc, &end, 10);
        if (*rpc == '\0' || *end != '\0' || v <= 0)
            return cli_usage(a, "--rows-per-commit wants a positive number, not \"%s\"", rpc);
        rows_per_commit = v;
    }
    rc = open_table(a, &lake, &t, &l);
    if (rc == EXIT_OK) {
        if (cli_flag(a, "no-maintain")) l.maintain = 0;
        uint64_t total = 0;
        for (int i = 0; i < a->npos; i++) total += cli_file_size(a->pos[i]);
        cli_progress_start(&l.progress, total, a->npos, !cli_flag(a, "no-progress"));
        rc = each ? append_each(a, &l, rows_per_commit) : append_all(a, &l, rows_per_commit);
    }
    cli_loader_free(&l);
    tl_table_close(t);
    tl_lake_close(lake);
    return rc;
}
