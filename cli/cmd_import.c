/* timelake import: many files or directories, one commit per group of files.
 * Every file is its own batch id (its path relative to the directory given),
 * a group's commit carries all of its files' ids, and files already committed
 * are skipped before grouping: so a re-run after an interruption, or with
 * files added or another --files-per-commit, loads each file exactly once. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load.h"

typedef struct file_list {
    char **paths; /* as opened */
    char **names; /* batch-id names: relative to the directory given, or the base name */
    int n, cap;
} file_list;

static void list_free(file_list *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->paths[i]);
        free(l->names[i]);
    }
    free(l->paths);
    free(l->names);
}

static int list_add(file_list *l, const char *path, const char *name)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        char **p = realloc(l->paths, (size_t)cap * sizeof *p);
        if (p) l->paths = p;
        char **q = realloc(l->names, (size_t)cap * sizeof *q);
        if (q) l->names = q;
        if (!p || !q) return -1;
        l->cap = cap;
    }
    l->paths[l->n] = strdup(path);
    l->names[l->n] = strdup(name);
    if (!l->paths[l->n] || !l->names[l->n]) return -1;
    l->n++;
    return 0;
}

static int by_name(const struct dirent **x, const struct dirent **y)
{
    return strcmp((*x)->d_name, (*y)->d_name);
}

/* Adds the data files under dir (recursively, sorted by name). */
static int scan_dir(file_list *l, const char *dir, const char *rel, const char *format)
{
    struct dirent **ents;
    int n = scandir(dir, &ents, NULL, by_name);
    if (n < 0) return -1;
    int rc = 0;
    for (int i = 0; i < n; i++) {
        const char *e = ents[i]->d_name;
        char path[4096], name[4096];
        if (e[0] != '.' && rc == 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e);
            snprintf(name, sizeof name, "%s%s%s", rel, rel[0] ? "/" : "", e);
            struct stat st;
            const char *f;
            if (stat(path, &st) != 0)
                rc = -1;
            else if (S_ISDIR(st.st_mode))
                rc = scan_dir(l, path, name, format);
            else if (format || tl_data_format(NULL, path, &f, NULL) == TL_OK)
                rc = list_add(l, path, name);
        }
        free(ents[i]);
    }
    free(ents);
    return rc;
}

static int collect(cli_args *a, file_list *l, const char *format)
{
    for (int i = 0; i < a->npos; i++) {
        const char *p = a->pos[i], *slash = strrchr(p, '/');
        struct stat st;
        bool ok = stat(p, &st) == 0;
        if (ok && S_ISDIR(st.st_mode))
            ok = scan_dir(l, p, "", format) == 0;
        else if (ok)
            ok = list_add(l, p, slash ? slash + 1 : p) == 0;
        if (!ok) {
            tl_error err = {.code = TL_ERR_NOT_FOUND};
            char target[512];
            int e = errno;
            ssize_t n = readlink(p, target, sizeof target - 1);
            if (n >= 0) {
                target[n] = 0;
                snprintf(err.message, sizeof err.message,
                         "cannot read %s: it is a symbolic link to %s, which does not exist "
                         "(fix or remove the link)",
                         p, target);
            } else {
                snprintf(err.message, sizeof err.message, "cannot read %s: %s", p, strerror(e));
            }
            return cli_fail(a, &err);
        }
    }
    return EXIT_OK;
}

/* "a.csv" for one file, "a.csv..c.csv" for a group: how results name it. */
static void group_label(const file_list *l, const int *idx, int n, char *buf, size_t size)
{
    if (n == 1)
        snprintf(buf, size, "%s", l->names[idx[0]]);
    else
        snprintf(buf, size, "%s..%s", l->names[idx[0]], l->names[idx[n - 1]]);
}

typedef struct totals {
    int64_t rows, commits, duplicates, files;
} totals;

static void report(cli_args *a, const char *what, const tl_append_result *r)
{
    if (a->json)
        cli_print_json(cli_append_json(what, r));
    else
        cli_append_print(what, r);
}

/* Commits the files idx[0..n) as one group, each file's name its batch id. */
static int commit_group(cli_args *a, cli_loader *ld, const file_list *l, const int *idx, int n,
                        totals *t)
{
    const char **paths = malloc((size_t)n * sizeof *paths);
    const char **ids = malloc((size_t)n * sizeof *ids);
    char label[8192];
    group_label(l, idx, n, label, sizeof label);
    tl_append_result r;
    tl_error err;
    tl_status st = paths && ids ? TL_OK : cli_error_nomem(&err);
    for (int i = 0; st == TL_OK && i < n; i++) {
        paths[i] = l->paths[idx[i]];
        ids[i] = l->names[idx[i]];
    }
    if (st == TL_OK) st = cli_loader_append_ids(ld, paths, n, ids, (size_t)n, &r, &err);
    cli_progress_end(&ld->progress);
    free(paths);
    free(ids);
    if (st != TL_OK) {
        fprintf(stderr, "timelake import: stopped at %s; %lld files committed before it\n", label,
                (long long)t->files);
        return cli_fail(a, &err);
    }
    t->files += n;
    t->commits += !r.duplicate;
    t->duplicates += r.duplicate ? n : 0;
    t->rows += r.rows;
    report(a, label, &r);
    cli_progress_draw(&ld->progress, true);
    return EXIT_OK;
}

/* Each file is its own batch: those committed before (by any grouping) are
 * skipped, the others committed `per` at a time, in name order. */
static int import_groups(cli_args *a, cli_loader *ld, const file_list *l, const int *committed,
                         int per, totals *t)
{
    int *group = malloc((size_t)per * sizeof *group), n = 0, rc = EXIT_OK;
    if (group == NULL) return cli_fail(a, &(tl_error){TL_ERR_NOMEM, "out of memory"});
    for (int i = 0; rc == EXIT_OK && i < l->n; i++) {
        if (committed[i]) {
            tl_append_result r = {.duplicate = 1, .version = tl_table_version(ld->table)};
            t->files++;
            t->duplicates++;
            report(a, l->names[i], &r);
            continue;
        }
        group[n++] = i;
        if (n == per) {
            rc = commit_group(a, ld, l, group, n, t);
            n = 0;
        }
    }
    if (rc == EXIT_OK && n > 0) rc = commit_group(a, ld, l, group, n, t);
    free(group);
    return rc;
}

/* Which files the table has committed: one check for all of them, before
 * any is read, so a re-run after an interruption costs little. */
static int find_committed(cli_args *a, tl_table *t, const file_list *l, int **out)
{
    *out = calloc((size_t)l->n + 1, sizeof **out);
    tl_error err;
    if (*out == NULL) return cli_fail(a, &(tl_error){TL_ERR_NOMEM, "out of memory"});
    if (tl_table_batches_committed(t, (const char *const *)l->names, (size_t)l->n, *out, &err) !=
        TL_OK)
        return cli_fail(a, &err);
    return EXIT_OK;
}

int cmd_import(cli_args *a)
{
    if (a->npos == 0) return cli_usage(a, "no input: give files or directories");
    const char *per_s = cli_opt(a, "files-per-commit");
    char *end;
    long per = per_s ? strtol(per_s, &end, 10) : 1;
    if (per_s && (*end || per < 1 || per > 100000))
        return cli_usage(a, "--files-per-commit must be a positive number, not \"%s\"", per_s);
    for (int i = 0; i < a->npos; i++)
        if (strcmp(a->pos[i], "-") == 0) return cli_usage(a, "import reads files, not stdin");
    const char *name = cli_table_name(a, false);
    if (name == NULL) return cli_no_table(a);
    const char *format = NULL;
    tl_error err;
    const char *f = cli_opt(a, "format");
    if (f && tl_data_format(f, NULL, &format, &err) != TL_OK)
        return cli_usage(a, "%s", err.message);
    file_list l = {0};
    int rc = collect(a, &l, format);
    tl_lake *lake = NULL;
    tl_table *t = NULL;
    cli_loader ld = {0};
    if (rc == EXIT_OK) rc = cli_open_lake(a, &lake);
    if (rc == EXIT_OK) rc = cli_open_table(a, lake, name, &t);
    if (rc == EXIT_OK && cli_loader_init(&ld, t, format, &err) != TL_OK) rc = cli_fail(a, &err);
    totals tot = {0};
    int *committed = NULL;
    if (rc == EXIT_OK) rc = find_committed(a, t, &l, &committed);
    if (rc == EXIT_OK) {
        uint64_t total = 0;
        int todo = 0;
        for (int i = 0; i < l.n; i++)
            if (!committed[i]) total += cli_file_size(l.paths[i]), todo++;
        cli_progress_start(&ld.progress, total, todo, !cli_flag(a, "no-progress"));
        rc = import_groups(a, &ld, &l, committed, (int)per, &tot);
    }
    free(committed);
    if (rc == EXIT_OK && !a->json)
        printf("imported %lld files: %lld rows in %lld commits, %lld batches already there\n",
               (long long)tot.files, (long long)tot.rows, (long long)tot.commits,
               (long long)tot.duplicates);
    cli_loader_free(&ld);
    tl_table_close(t);
    tl_lake_close(lake);
    list_free(&l);
    return rc;
}
