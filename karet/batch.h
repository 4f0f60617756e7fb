/* Arrow record batches as Karet's engine handles them between the reader, the
 * mapping query and the table: owned batches, a stream over a list of them,
 * an added row-number column, and taking chosen rows of chosen columns.
 *
 * Column types handled: utf8 (u), large utf8 (U), int8..int64 (c s i l),
 * float32/64 (f g), bool (b), date32 (tdD), timestamps (ts?:...). */
#ifndef KARET_BATCH_H
#define KARET_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timelake.h"

/* One record batch: a struct array and its schema, both owned. */
typedef struct kbatch {
    struct ArrowSchema schema;
    struct ArrowArray array;
} kbatch;

void kbatch_release(kbatch *b);

/* A growable list of batches (owned). */
typedef struct kbatches {
    kbatch *items;
    size_t len, cap;
    int64_t rows;
} kbatches;

/* Moves *b into the list (b is left empty). Returns false when out of memory
 * (b is released then). */
bool kbatches_push(kbatches *l, kbatch *b);
void kbatches_free(kbatches *l);

/* Reads a stream to its end into *out (appending), then releases the
 * stream. Returns 0 or the stream's error code, with its message in err. */
int kbatches_drain(struct ArrowArrayStream *s, kbatches *out, char *err, size_t errlen);

/* A stream that hands out the batches of *l (moved out of it; the list is
 * emptied) with `schema` (copied) as the stream's schema. *out is owned by
 * the caller (or the consumer it is given to). */
bool kbatches_stream(kbatches *l, const struct ArrowSchema *schema, struct ArrowArrayStream *out);

/* Replaces the batch with one that has an int64 column `name` after its
 * columns, numbering its rows from *next (advanced). */
bool kbatch_add_row_numbers(kbatch *b, const char *name, int64_t *next);

/* The index of child `name` of a struct schema, or -1. */
int kbatch_column(const struct ArrowSchema *s, const char *name);

/* A new batch of the rows `rows[0..n)` (ascending or not) of columns
 * `cols[0..ncols)` of b, typed as `schema` (a struct of ncols children) says:
 * text becomes utf8 (u), other columns must have the format given. Returns
 * false when out of memory or the types do not fit (err says which). */
bool kbatch_take(const kbatch *b, const int *cols, size_t ncols, const int64_t *rows, size_t n,
                 const struct ArrowSchema *schema, kbatch *out, char *err, size_t errlen);

/* Moves columns cols[0..ncols) of b, every row, into *out typed as `schema`
 * says, without copying them: b's other columns are released with *out.
 * Returns false, b untouched, where that cannot be done (a column's format
 * is not the schema's, b is a slice or has null rows, a column is named
 * twice, out of memory): kbatch_take then copies. */
bool kbatch_pick(kbatch *b, const int *cols, size_t ncols, const struct ArrowSchema *schema,
                 kbatch *out);

/* A new array of `length` with n_buffers buffers (set with karray_set_buffer,
 * which hands the buffer over: freed with the array) and n_children zeroed
 * children, owned. Returns false when out of memory. */
bool karray_new(struct ArrowArray *a, int64_t length, int64_t n_buffers, int64_t n_children);
void karray_set_buffer(struct ArrowArray *a, int i, void *data);

/* A new struct schema of flat, nullable columns (formats and names). */
bool kschema_struct(struct ArrowSchema *out, const char *const *formats, const char *const *names,
                    size_t n);
bool kschema_copy(const struct ArrowSchema *src, struct ArrowSchema *out);

/* Read access to one column of a batch. */
typedef struct kcol {
    const struct ArrowSchema *schema;
    const struct ArrowArray *array;
    int64_t base; /* the parent struct's offset */
} kcol;

kcol kbatch_col(const kbatch *b, int i);
bool kcol_is_null(kcol c, int64_t row);
/* The bytes of a string value (utf8 or large utf8); false for other types. */
bool kcol_string(kcol c, int64_t row, const char **s, size_t *len);
/* An integer value (int8..int64, date32, timestamps); false for other types. */
bool kcol_int(kcol c, int64_t row, int64_t *out);
/* Appends a canonical binary form of the value (type tag, null flag, bytes)
 * for hashing and equality: -0.0 is 0.0. */
struct kbuf;
void kcol_key(kcol c, int64_t row, struct kbuf *out);

#endif
