/* Values of any column a query returns, nested ones included, as text (the
 * aligned table and CSV) or as JSON (JSON lines).
 *
 * Text follows DuckDB's shell: structs {'a': 1, 'b': [1, 2]}, lists
 * [1.5, NULL], maps {k=1}, unions their member's value, intervals
 * "1 year 2 months 3 days 04:05:06.789"; a string inside a nested value is
 * quoted ('b,c') only when it would read ambiguously. Scalars print as
 * tl_value_text prints them. JSON nests as arrays and objects (a map is an
 * object keyed by the keys' text, a union {"member": value} as DuckDB's
 * to_json); NaN and infinities, which JSON cannot hold as numbers, are the
 * strings "NaN", "Infinity" and "-Infinity". */
#ifndef TL_CSV_VALUE_PRINT_H
#define TL_CSV_VALUE_PRINT_H

#include "arrow/array.h"
#include "core/buf.h"

typedef struct tl_value_printer tl_value_printer;

/* Prepares the printing of column `name` (schema and array borrowed: they
 * must outlive the printer). A type it cannot print is TL_ERR_INVALID naming
 * the column and the type. *out is owned by the caller. */
tl_status tl_value_printer_new(const char *name, const struct ArrowSchema *schema,
                               const struct ArrowArray *array, tl_value_printer **out,
                               tl_error *err);
void tl_value_printer_free(tl_value_printer *p);

/* A printer for each column of `batch`, a struct array of `schema` (both
 * borrowed): *out is an owned array of schema->n_children printers, freed
 * with tl_value_printers_free. */
tl_status tl_value_printers_new(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                                tl_value_printer ***out, tl_error *err);
void tl_value_printers_free(tl_value_printer **printers, int64_t n);

/* Whether value i (counting from the array's start, before its offset) is null. */
bool tl_value_printer_is_null(const tl_value_printer *p, int64_t i);

/* Appends the text, or the JSON, of value i to out. A null is "NULL" in text
 * (callers print top-level nulls their own way) and null in JSON. Returns 0,
 * or -1 when memory runs out. */
int tl_value_printer_text(const tl_value_printer *p, int64_t i, tl_buf *out);
int tl_value_printer_json(const tl_value_printer *p, int64_t i, tl_buf *out);

/* Appends s as a JSON string (quoted, escaped). Returns 0, or -1 when memory runs out. */
int tl_value_json_string(const uint8_t *s, size_t len, tl_buf *out);

#endif
