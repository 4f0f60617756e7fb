/* timelake append */
#include <jansson.h>
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
    if (name == NULL) return cli_usage(a, "no table: give --table or set TIMELAKE_TABLE");
    tl_input_format format = TL_INPUT_AUTO;
    tl_error err;
    const char *f = cli_opt(a, "format");
    if (f && tl_input_format_parse(f, &format, &err) != TL_OK)
        return cli_usage(a, "%s", err.message);
    int rc = cli_open_lake(a, lake);
    if (rc != EXIT_OK) return rc;
    if ((rc = cli_open_table(a, *lake, name, t)) != EXIT_OK) return rc;
    if (cli_loader_init(l, *t, format, &err) != TL_OK) return cli_fail(a, &err);
    return EXIT_OK;
}

/* One commit per file, each with its file name as batch id. */
static int append_each(cli_args *a, cli_loader *l)
{
    for (int i = 0; i < a->npos; i++) {
        const char *file = a->pos[i];
        if (strcmp(file, "-") == 0)
            return cli_usage(a, "--batch-id-from-name needs files, not stdin");
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

static int append_all(cli_args *a, cli_loader *l)
{
    tl_append_result r;
    tl_error err;
    tl_status st = cli_loader_append(l, a->pos, a->npos, cli_opt(a, "batch-id"), &r, &err);
    cli_progress_end(&l->progress);
    if (st != TL_OK) return cli_fail(a, &err);
    const char *what = a->npos == 1 ? a->pos[0] : "files";
    if (a->npos == 1 && strcmp(what, "-") == 0) what = "stdin";
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
    rc = open_table(a, &lake, &t, &l);
    if (rc == EXIT_OK) {
        uint64_t total = 0;
        for (int i = 0; i < a->npos; i++) total += cli_file_size(a->pos[i]);
        cli_progress_start(&l.progress, total, a->npos, !cli_flag(a, "no-progress"));
        rc = each ? append_each(a, &l) : append_all(a, &l);
    }
    cli_loader_free(&l);
    tl_table_close(t);
    tl_lake_close(lake);
    return rc;
}
