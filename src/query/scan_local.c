#include "query/scan_local.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/arena.h"
#include "query/row_group_prune.h"

static tl_status read_at(int fd, uint64_t off, uint8_t *buf, size_t len, const char *path,
                         tl_error *err)
{
    for (size_t done = 0; done < len;) {
        ssize_t n = pread(fd, buf + done, len - done, (off_t)(off + done));
        if (n <= 0)
            return tl_error_set(err, TL_ERR_STORAGE, "reading %s: %s", path,
                                n == 0 ? "unexpected end of file" : strerror(errno));
        done += (size_t)n;
    }
    return TL_OK;
}

/* The footer of the file at fd (size bytes) into m (allocated in arena);
 * *footer_bytes: its length with the 8 bytes after it. */
static tl_status read_footer(int fd, uint64_t size, const char *path, tl_arena *arena,
                             tl_pq_file_meta *m, uint64_t *footer_bytes, tl_error *err)
{
    uint8_t tail[8];
    uint64_t len;
    if (size < 12) return tl_error_set(err, TL_ERR_STORAGE, "%s: not a Parquet file", path);
    TL_TRY(read_at(fd, size - 8, tail, 8, path, err));
    TL_TRY(tl_pq_footer_len(tail, size, &len, err));
    uint8_t *meta = tl_arena_alloc(arena, len ? len : 1);
    if (meta == NULL) return tl_error_nomem(err);
    TL_TRY(read_at(fd, size - 8 - len, meta, len, path, err));
    *footer_bytes = len + 8;
    tl_status st = tl_pq_parse_file_meta(meta, len, arena, m, err);
    return st == TL_OK ? TL_OK : tl_error_prefix(err, "reading the footer of %s", path);
}

static tl_status count(const tl_table *t, const tl_pq_file_meta *m, const bool *fields,
                       const tl_scan_filter *filters, size_t n_filters, tl_scan_local_read *out,
                       tl_error *err)
{
    size_t n_keep = 0;
    bool *keep = tl_pq_leaves_read(t, m, fields, &n_keep);
    if (keep == NULL) return tl_error_nomem(err);
    out->row_groups_total = (int64_t)m->n_row_groups;
    for (size_t g = 0; g < m->n_row_groups; g++) {
        if (!m->encrypted && n_filters > 0 && !tl_row_group_needed(t, m, g, filters, n_filters))
            continue;
        out->row_groups_read++;
        const tl_pq_row_group *rg = &m->row_groups[g];
        for (size_t c = 0; c < rg->n_columns; c++) {
            if (c < n_keep && !keep[c]) continue;
            uint64_t off, len;
            tl_pq_chunk_range(&rg->columns[c], &off, &len);
            out->bytes_read += (int64_t)len;
        }
    }
    free(keep);
    return TL_OK;
}

tl_status tl_scan_local_read_of(const tl_table *t, const char *path, const bool *fields,
                                const tl_scan_filter *filters, size_t n_filters,
                                tl_scan_local_read *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return tl_error_set(err, TL_ERR_STORAGE, "opening %s: %s", path, strerror(errno));
    struct stat sb;
    tl_arena arena = {0};
    tl_pq_file_meta m;
    uint64_t footer = 0;
    tl_status st = fstat(fd, &sb) == 0
                       ? TL_OK
                       : tl_error_set(err, TL_ERR_STORAGE, "reading %s: %s", path, strerror(errno));
    if (st == TL_OK) st = read_footer(fd, (uint64_t)sb.st_size, path, &arena, &m, &footer, err);
    close(fd);
    if (st == TL_OK) st = count(t, &m, fields, filters, n_filters, out, err);
    if (st == TL_OK && (out->row_groups_read > 0 || m.n_row_groups == 0))
        out->bytes_read += (int64_t)footer;
    tl_arena_free(&arena);
    return st;
}
