/* Helpers for the Parquet tests. Header-only; each test file includes it once. */
#ifndef TEST_PARQUET_HELPERS_H
#define TEST_PARQUET_HELPERS_H

#include "formats/parquet/parquet_reader.h"
#include "formats/parquet/parquet_writer.h"
#include "unit.h"

/* a as one Parquet file in memory, into *file (the caller frees it). */
static inline void tparquet_write_memory(const struct ArrowSchema *s, const struct ArrowArray *a,
                                         const tl_parquet_write_options *o, tl_buf *file)
{
    tl_error err;
    tl_parquet_writer *w;
    CHECK_OK(tl_parquet_writer_open(s, o, &w, &err), &err);
    CHECK_OK(tl_parquet_writer_write(w, a, &err), &err);
    CHECK_OK(tl_parquet_writer_finish(w, file, NULL, &err), &err);
    tl_parquet_writer_free(w);
}

/* A reader of file, through src (both the caller's, and to outlive it). */
static inline tl_parquet_reader *tparquet_open_memory(tl_parquet_source *src, const tl_buf *file)
{
    tl_error err;
    tl_parquet_reader *r = NULL;
    tl_parquet_source_from_memory(src, file->data, file->len);
    CHECK_OK(tl_parquet_reader_open(src, &r, &err), &err);
    return r;
}

#endif
