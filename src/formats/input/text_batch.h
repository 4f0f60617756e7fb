/* A batch of rows as raw text, column by column: what the CSV and NDJSON
 * parsers produce before values are typed. Typing is a second, per-column
 * pass (tl_text_batch_convert) so that inference can look at whole columns and
 * errors can name the line and the column. */
#ifndef TL_INPUT_TEXT_BATCH_H
#define TL_INPUT_TEXT_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "arrow/arrow_type.h"
#include "core/buf.h"

/* How a value was written: CSV fields and JSON strings are text; JSON numbers
 * and booleans are literals; JSON null and missing keys are null; JSON
 * objects and arrays are kept as their JSON text. */
enum { TL_TEXT_STRING = 0, TL_TEXT_LITERAL = 1, TL_TEXT_NULL = 2, TL_TEXT_JSON = 3 };

typedef struct tl_text_column {
    tl_buf bytes;   /* the values back to back */
    tl_buf offsets; /* int64 start of each value, plus the end */
    tl_buf kinds;   /* one TL_TEXT_* byte per value */
    /* Values typed as they are read (a CSV reader that knows the column is
     * float64, int64 or timestamp: direct_id is that type's id, else 0): the
     * batch's first `direct` values, 8 bytes each in `values`, were parsed
     * from the input as the conversion would have parsed them, and their text
     * is not kept. Once a value does not parse plainly (a null, bad text),
     * the rest of the batch is text (tl_text_column_to_text): rows below
     * `direct` then hold empty text that the conversion skips. */
    int direct_id;
    bool text; /* the column holds text from row `direct` on */
    int64_t direct;
    tl_buf values;
} tl_text_column;

/* Whether the column takes its next value as text. */
static inline bool tl_text_column_is_text(const tl_text_column *c)
{
    return c->direct_id == 0 || c->text;
}

/* Switches a column holding typed values to text for the rest of its batch
 * (the typed rows get empty text); 0, or -1 when memory runs out (nothing
 * changed). */
int tl_text_column_to_text(tl_text_column *c);

typedef struct tl_text_batch {
    int ncols;
    tl_text_column *cols;
    int64_t rows;
    tl_buf lines; /* int64 source line of each row, for messages */
} tl_text_batch;

tl_status tl_text_batch_init(tl_text_batch *b, int ncols, tl_error *err);
void tl_text_batch_free(tl_text_batch *b);
/* Empties the batch, keeping its memory for the next one. */
void tl_text_batch_reset(tl_text_batch *b);

/* Appends one value to column `col` of the row being built. Inline: the
 * parsers call it for every field. */
static inline tl_status tl_text_batch_put(tl_text_batch *b, int col, const void *s, size_t len,
                                          int kind, tl_error *err)
{
    tl_text_column *c = &b->cols[col];
    if (c->offsets.len == 0) return tl_error_nomem(err); /* reset could not allocate */
    if (!tl_text_column_is_text(c) && tl_text_column_to_text(c) != 0) return tl_error_nomem(err);
    if ((len && tl_buf_append(&c->bytes, s, len) != 0) ||
        tl_buf_append_byte(&c->kinds, (uint8_t)kind) != 0)
        return tl_error_nomem(err);
    int64_t end = (int64_t)c->bytes.len;
    if (tl_buf_append(&c->offsets, &end, sizeof end) != 0) return tl_error_nomem(err);
    return TL_OK;
}
/* Ends the row started at `line`; every column must have had one value put. */
tl_status tl_text_batch_end_row(tl_text_batch *b, int64_t line, tl_error *err);

/* Sizes every column's buffers for `rows` rows in all, at the bytes per
 * value seen so far, so that they grow once instead of doubling through
 * copies. A hint: when memory is short nothing is reserved (puts then grow
 * the buffers as they need). */
void tl_text_batch_reserve(tl_text_batch *b, int64_t rows);

/* Adds a column, null in the rows already ended. Returns its index in *out. */
tl_status tl_text_batch_add_column(tl_text_batch *b, int *out, tl_error *err);

/* Bytes of raw text held, to bound batches by size as well as by rows. */
size_t tl_text_batch_bytes(const tl_text_batch *b);

static inline const char *tl_text_value(const tl_text_column *c, int64_t row, size_t *len,
                                        int *kind)
{
    const int64_t *off = (const int64_t *)c->offsets.data;
    *len = (size_t)(off[row + 1] - off[row]);
    *kind = c->kinds.data[row];
    return c->bytes.data ? (const char *)c->bytes.data + off[row] : ""; /* all values empty */
}

/* Where the values came from, for messages and for null handling. */
typedef struct tl_text_source {
    const char *name;     /* file name */
    bool csv_nulls;       /* CSV: pyarrow's null spellings ("", "NA", "null", ...) are nulls
                             in non-string columns */
    const bool *required; /* per column: a null is an error naming its line (NULL: none) */
    /* per column: a nested column, whose values are kept as JSON text (objects,
     * arrays and nulls; anything else is an error naming its line); NULL: none.
     * Elsewhere a JSON object or array is an error. */
    const bool *json;
} tl_text_source;

/* Types the columns: `types[i]` and `names[i]` for column i; fills *out with
 * an owned struct array of b->rows rows. A value that is not of its column's
 * type, or a null in a required column, is TL_ERR_INVALID naming the file,
 * line, column and value. */
tl_status tl_text_batch_convert(const tl_text_batch *b, const tl_text_source *src,
                                const tl_arrow_type *types, const char *const *names,
                                struct ArrowArray *out, tl_error *err);

/* Checks that a type can be read from text (for a target schema). */
tl_status tl_text_type_supported(const tl_arrow_type *type, const char *column, tl_error *err);

/* Infers the type of each column from the values of the batch, in the order
 * int64, bool, date32, timestamp[us] (tz UTC when a value has an offset or Z),
 * float64, string. A column of nulls only is a string. */
void tl_text_batch_infer(const tl_text_batch *b, const tl_text_source *src, tl_arrow_type *types);

/* True for pyarrow's default null spellings in CSV ("", "NA", "NULL", "nan", ...). */
bool tl_text_is_csv_null(const char *s, size_t len);

/* True when s is valid UTF-8. */
bool tl_utf8_valid(const uint8_t *s, size_t len);

#endif
