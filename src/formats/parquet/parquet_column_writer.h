/* Encodes one column's values into the pages of a column chunk: staging a
 * page at a time (levels, PLAIN values or dictionary indices, statistics),
 * compressing it and appending it to the chunk. The file writer collects the
 * finished chunks into row groups. */
#ifndef TL_PARQUET_COLUMN_WRITER_H
#define TL_PARQUET_COLUMN_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "arrow/array.h"
#include "core/buf.h"
#include "formats/parquet/parquet_compress.h"
#include "formats/parquet/parquet_dict.h"
#include "formats/parquet/parquet_schema.h"

/* Longest min/max kept in statistics; longer ones are left out (never truncated). */
#define TL_PQ_STATS_MAX_LEN 4096

typedef struct tl_pq_minmax {
    bool has;
    uint8_t *min, *max; /* malloc'd */
    size_t min_len, max_len;
} tl_pq_minmax;

typedef struct tl_pq_page_info {
    int64_t offset;    /* of the page header, from the start of the data pages */
    int32_t size;      /* header + body */
    int64_t first_row; /* within the chunk */
    int64_t null_count;
    int64_t rows;
    int64_t values; /* level entries: rows, unless the column is nested */
    tl_pq_minmax mm;
} tl_pq_page_info;

typedef struct tl_pq_column_writer {
    const tl_pq_column_desc *desc;
    tl_pq_encoding value_encoding;         /* of pages that are not dictionary-encoded */
    bool float_trial, float_trial_default; /* the next page picks PLAIN or BYTE_STREAM_SPLIT */
    tl_pq_codec_id codec;                  /* of the chunk being built */
    tl_pq_codec_id codec_default;          /* what each chunk starts from */
    int level;
    int min_saving_pct;
    bool codec_trial; /* the chunk's first page keeps or drops the codec */
    int64_t page_rows_max;
    tl_pq_codec_ctx *cctx; /* shared, borrowed */

    /* The page being built. */
    int64_t page_rows, page_nulls, page_nans, page_bools;
    uint8_t *page_valid; /* definition levels as a bitmap */
    /* Levels of a desc->levels column: page_levels entries. */
    int64_t page_levels;
    uint32_t *page_def, *page_rep;
    size_t page_levels_cap;
    tl_buf page_values; /* PLAIN values (a bitmap for BOOLEAN) */
    uint32_t *page_idx; /* dictionary indices */
    size_t page_idx_n, page_idx_cap;
    uint32_t *page_distinct; /* dictionary entries this page uses, for its min/max */
    size_t page_distinct_n, page_distinct_cap;
    tl_pq_minmax page_mm;

    /* Dictionary state of the chunk. */
    bool dict_on;   /* new pages are dictionary-encoded */
    bool dict_used; /* some page of the chunk is */
    bool dict_allowed;
    tl_pq_dict dict;
    uint32_t *stamp; /* page number that last used each entry */
    size_t stamp_cap;
    uint32_t page_no;

    /* The chunk. */
    tl_buf chunk;                                    /* data pages */
    tl_buf dict_page;                                /* header + body, built by finish */
    int64_t rows, values, nulls, nans, uncompressed; /* values: level entries */
    tl_pq_minmax mm;
    tl_pq_page_info *pages;
    size_t n_pages, pages_cap;
    int32_t n_plain_pages, n_dict_pages; /* n_plain_pages: pages in value_encoding */
    tl_buf scratch, comp, header;
    tl_buf trial; /* a sample of the page, encoded for the float trial */
    /* The float trial left the page in scratch, and compressed with the
     * chunk's codec in comp: flush_page and emit_page use them as they are. */
    bool page_ready, comp_ready;
} tl_pq_column_writer;

typedef struct tl_pq_colw_options {
    bool compact; /* DELTA_BINARY_PACKED / BYTE_STREAM_SPLIT where they apply, else PLAIN */
    tl_pq_codec_id codec;
    int level;
    /* 0: every chunk uses codec. Else a chunk whose first data page the codec
     * shrinks by less than this percentage is stored uncompressed (floats
     * PLAIN): readers then copy it instead of decompressing it. */
    int min_saving_pct;
    int64_t page_rows;
} tl_pq_colw_options;

/* desc and cctx are borrowed and must outlive the writer; opts is copied. */
tl_status tl_pq_colw_init(tl_pq_column_writer *w, const tl_pq_column_desc *desc,
                          const tl_pq_colw_options *opts, tl_pq_codec_ctx *cctx, tl_error *err);
/* Appends rows [start, start + n) of the view (logical rows: the view adds its own offset). */
tl_status tl_pq_colw_write(tl_pq_column_writer *w, const tl_array_view *v, int64_t start, int64_t n,
                           tl_error *err);
/* Appends the level entries [0, n) of whole rows of a desc->levels column: def
 * (and rep when max_rep > 0) per entry, and slots[k], the index in v of the k-th
 * entry whose def is max_def (its value). Pages end on row boundaries. */
tl_status tl_pq_colw_write_levels(tl_pq_column_writer *w, const tl_array_view *v,
                                  const uint32_t *def, const uint32_t *rep, const int64_t *slots,
                                  size_t n, tl_error *err);
/* Flushes the last page and builds the dictionary page: the chunk is then complete. */
tl_status tl_pq_colw_finish(tl_pq_column_writer *w, tl_error *err);
/* Forgets the finished chunk, ready for the next row group (memory is kept). */
void tl_pq_colw_reset(tl_pq_column_writer *w);
void tl_pq_colw_free(tl_pq_column_writer *w);

void tl_pq_minmax_clear(tl_pq_minmax *m);
/* Widens m to cover [lo, hi]. 0, or -1 when out of memory. */
int tl_pq_minmax_update(tl_pq_minmax *m, tl_pq_order order, const uint8_t *lo, size_t lo_len,
                        const uint8_t *hi, size_t hi_len);

#endif
