/* libFuzzer target: the Parquet reader over a file in memory: footer, schema,
 * every row group and the statistics of every column chunk. */
#include <stddef.h>
#include <stdint.h>

#include "arrow/array.h"
#include "formats/parquet/parquet_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tl_parquet_source src;
    tl_parquet_source_from_memory(&src, data, size);
    tl_parquet_reader *r;
    if (tl_parquet_reader_open(&src, &r, NULL) != TL_OK) return 0;
    struct ArrowSchema schema;
    if (tl_parquet_reader_schema(r, &schema, NULL) == TL_OK) schema.release(&schema);
    for (int rg = 0; rg < tl_parquet_reader_num_row_groups(r) && rg < 16; rg++) {
        struct ArrowArray a;
        if (tl_parquet_reader_read_row_group(r, rg, NULL, 0, &a, NULL) == TL_OK) a.release(&a);
        for (int c = 0; c < tl_parquet_reader_num_columns(r) && c < 64; c++) {
            tl_parquet_column_stats st;
            if (tl_parquet_reader_column_stats(r, rg, c, &st, NULL) == TL_OK)
                tl_parquet_column_stats_clear(&st);
        }
    }
    tl_parquet_reader_free(r);
    return 0;
}
