/* libFuzzer target: tl_reader (typed columns of CSV, TSV or NDJSON, lenient
 * or strict) over inputs split into small reads. The first byte picks the
 * format, leniency, batch size and read size. Checks that every batch is
 * well formed and that the report agrees with what was streamed. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "formats/input/column_reader.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const tl_read_column columns[] = {
    {"a", NULL, "int64"},   {"b", "b.c[1]", "string"}, {"c", "x[0][2]", "float64"},
    {"d", NULL, "bool"},    {"e", NULL, "date"},       {"f", "a", "string"},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t mode = data[0];
    static const char *const formats[] = {"csv", "tsv", "ndjson", "ndjson"};
    tl_text_input *in;
    if (tl_text_input_open_memory(data + 1, size - 1, "fuzz", &in, NULL) != TL_OK) return 0;
    tl_text_input_set_read_limit(in, 1 + (mode >> 5));
    tl_read_options o = {.format = formats[mode & 3],
                         .columns = columns,
                         .columns_len = sizeof columns / sizeof *columns,
                         .lenient = mode >> 2 & 1,
                         .batch_rows = 1 + (mode >> 3 & 3)};
    tl_reader *r;
    if (tl_reader_open_input(in, &o, &r, NULL) != TL_OK) return 0;
    struct ArrowArrayStream s;
    if (tl_reader_stream(r, &s, NULL) != TL_OK) abort();
    int64_t rows = fuzz_drain(&s);
    tl_read_report rep;
    tl_reader_report(r, &rep);
    if (rows >= 0 && rep.rows != rows) abort(); /* a whole read streams every row it counts */
    if (rep.problems_len > TL_READ_PROBLEMS_KEPT) abort();
    if (rep.problems_len < TL_READ_PROBLEMS_KEPT &&
        rep.problems_len != (size_t)(rep.lines_skipped + rep.values_nulled))
        abort();
    tl_reader_close(r);
    return 0;
}
