#include "notify_tables.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/load.h"

typedef struct notify_table {
    char *name;
    tl_lake *lake; /* its own handle, so tables share no state but the storage */
    tl_table *table;
    cli_loader loader; /* the table's columns, to read files straight into their types */
    bool loader_ready;
    pthread_mutex_t lock;
} notify_table;

struct tl_notify_tables {
    notify_table *items;
    int n;
};

static tl_status open_one(notify_table *t, const char *lake, const char *name, tl_error *err)
{
    pthread_mutex_init(&t->lock, NULL);
    t->name = strdup(name);
    if (t->name == NULL) return tl_error_nomem(err);
    TL_TRY(tl_lake_open(lake, NULL, &t->lake, err));
    TL_TRY(tl_lake_open_table(t->lake, name, &t->table, err));
    TL_TRY(cli_loader_init(&t->loader, t->table, TL_INPUT_AUTO, err));
    t->loader_ready = true;
    return TL_OK;
}

static notify_table *find(tl_notify_tables *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->items[i].name, name) == 0) return &t->items[i];
    return NULL;
}

tl_status tl_notify_tables_open(const char *lake, const char *const *names, int n,
                                tl_notify_tables **out, tl_error *err)
{
    tl_notify_tables *t = calloc(1, sizeof *t);
    if (t == NULL || (t->items = calloc(n ? (size_t)n : 1, sizeof *t->items)) == NULL) {
        free(t);
        return tl_error_nomem(err);
    }
    tl_status st = TL_OK;
    for (int i = 0; i < n && st == TL_OK; i++) {
        if (find(t, names[i])) continue;
        st = open_one(&t->items[t->n++], lake, names[i], err);
        if (st != TL_OK) tl_error_prefix(err, "table %s: ", names[i]);
    }
    if (st != TL_OK) {
        tl_notify_tables_free(t);
        return st;
    }
    *out = t;
    return TL_OK;
}

void tl_notify_tables_free(tl_notify_tables *t)
{
    if (t == NULL) return;
    for (int i = 0; i < t->n; i++) {
        notify_table *x = &t->items[i];
        if (x->loader_ready) cli_loader_free(&x->loader);
        tl_table_close(x->table);
        tl_lake_close(x->lake);
        free(x->name);
        pthread_mutex_destroy(&x->lock);
    }
    free(t->items);
    free(t);
}

tl_status tl_notify_tables_append(tl_notify_tables *t, const char *name, const char *path,
                                  tl_input_format format, const char *batch_id,
                                  tl_append_result *out, tl_error *err)
{
    notify_table *x = find(t, name);
    if (x == NULL) return tl_error_set(err, TL_ERR_INTERNAL, "table %s was not opened", name);
    pthread_mutex_lock(&x->lock);
    x->loader.format = format;
    tl_status st = cli_loader_append(&x->loader, &path, 1, batch_id, out, err);
    pthread_mutex_unlock(&x->lock);
    return st;
}
