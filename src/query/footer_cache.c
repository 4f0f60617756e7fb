#include "query/footer_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arrow/array.h"
#include "core/buf.h"

struct tl_footer_cache {
    tl_footer_entry **e;
    size_t n;
    uint64_t generation;
};

/* Reads through the entry's descriptor, opened on first use in a query. */
static tl_status fd_read(void *ctx, uint64_t offset, size_t len, uint8_t *dst, tl_error *err)
{
    tl_footer_entry *fe = ctx;
    if (fe->fd < 0 && (fe->fd = open(fe->path, O_RDONLY | O_CLOEXEC)) < 0)
        return tl_error_set(err, TL_ERR_STORAGE, "opening %s: %s", fe->path, strerror(errno));
    for (size_t done = 0; done < len;) {
        ssize_t n = pread(fe->fd, dst + done, len - done, (off_t)(offset + done));
        if (n <= 0)
            return tl_error_set(err, TL_ERR_STORAGE, "reading %s: %s", fe->path,
                                n == 0 ? "unexpected end of file" : strerror(errno));
        done += (size_t)n;
    }
    return TL_OK;
}

static void entry_free(tl_footer_entry *fe)
{
    if (fe == NULL) return;
    tl_parquet_reader_free(fe->reader);
    tl_schema_release(&fe->schema);
    if (fe->fd >= 0) close(fe->fd);
    free(fe->path);
    free(fe);
}

static int64_t mtime_of(const struct stat *sb)
{
    return (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
}

static tl_status entry_open(const char *path, const struct stat *sb, tl_footer_entry **out,
                            tl_error *err)
{
    tl_footer_entry *fe = calloc(1, sizeof *fe);
    if (fe == NULL || (fe->path = strdup(path)) == NULL) {
        free(fe);
        return tl_error_nomem(err);
    }
    fe->ino = (uint64_t)sb->st_ino;
    fe->size = (uint64_t)sb->st_size;
    fe->mtime_ns = mtime_of(sb);
    fe->fd = -1;
    uint8_t tail[8] = {0};
    tl_status st = fe->size >= 8 ? fd_read(fe, fe->size - 8, 8, tail, err) : TL_OK;
    if (st == TL_OK) {
        tl_parquet_source src = {fe, fe->size, fd_read};
        st = tl_parquet_reader_open(&src, &fe->reader, err);
    }
    if (st == TL_OK) st = tl_parquet_reader_schema(fe->reader, &fe->schema, err);
    if (st != TL_OK) {
        entry_free(fe);
        return tl_error_prefix(err, "reading the footer of %s", path);
    }
    fe->footer_bytes = (int64_t)tl_load_le32(tail) + 8;
    *out = fe;
    return TL_OK;
}

void tl_footer_cache_end(tl_query_engine *e)
{
    for (size_t i = 0; e->footers && i < e->footers->n; i++)
        if (e->footers->e[i]->fd >= 0) {
            close(e->footers->e[i]->fd);
            e->footers->e[i]->fd = -1;
        }
}

void tl_footer_cache_begin(tl_query_engine *e)
{
    if (e->footers) e->footers->generation++;
}

/* Drops the least recently used entry not used by this query, if any. */
static void evict_one(struct tl_footer_cache *c)
{
    size_t victim = c->n;
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i]->used != c->generation &&
            (victim == c->n || c->e[i]->used < c->e[victim]->used))
            victim = i;
    if (victim == c->n) return;
    entry_free(c->e[victim]);
    c->e[victim] = c->e[--c->n];
}

tl_status tl_footer_get(tl_query_engine *e, const char *path, tl_footer_entry **out, tl_error *err)
{
    if (e->footers == NULL && (e->footers = calloc(1, sizeof *e->footers)) == NULL)
        return tl_error_nomem(err);
    struct tl_footer_cache *c = e->footers;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return tl_error_set(err, TL_ERR_STORAGE, "reading %s: %s", path, strerror(errno));
    for (size_t i = 0; i < c->n; i++) {
        tl_footer_entry *fe = c->e[i];
        if (strcmp(fe->path, path) != 0) continue;
        if (fe->ino == (uint64_t)sb.st_ino && fe->size == (uint64_t)sb.st_size &&
            fe->mtime_ns == mtime_of(&sb)) {
            fe->used = c->generation;
            *out = fe;
            return TL_OK;
        }
        if (fe->used == c->generation) break; /* replaced during this query: keep both */
        entry_free(fe);
        c->e[i] = c->e[--c->n];
        break;
    }
    if (c->n >= TL_FOOTER_CACHE_MAX) evict_one(c);
    tl_footer_entry **grown = realloc(c->e, (c->n + 1) * sizeof *grown);
    if (grown == NULL) return tl_error_nomem(err);
    c->e = grown;
    TL_TRY(entry_open(path, &sb, &c->e[c->n], err));
    c->e[c->n]->used = c->generation;
    *out = c->e[c->n++];
    return TL_OK;
}

tl_status tl_footer_reader(tl_footer_entry *fe, tl_parquet_reader **out, tl_error *err)
{
    tl_parquet_source src = {fe, fe->size, fd_read};
    return tl_parquet_reader_share(fe->reader, &src, out, err);
}

void tl_footer_cache_free(tl_query_engine *e)
{
    if (e->footers == NULL) return;
    for (size_t i = 0; i < e->footers->n; i++) entry_free(e->footers->e[i]);
    free(e->footers->e);
    free(e->footers);
    e->footers = NULL;
}
