/* Avro object container files: the "Obj\1" header with its metadata map and
 * 16-byte sync marker, then blocks of encoded datums, each optionally
 * compressed (null, deflate, snappy, zstandard). */
#ifndef TL_FORMATS_AVRO_FILE_H
#define TL_FORMATS_AVRO_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"
#include "formats/avro/avro_codec.h"
#include "formats/avro/avro_schema.h"
#include "formats/avro/avro_value.h"

#define TL_AVRO_SYNC_SIZE 16
/* Largest decompressed block a reader accepts. */
#define TL_AVRO_MAX_BLOCK ((size_t)256 << 20)

/* ---- Writing ---- */

typedef struct tl_avro_writer_options {
    tl_avro_codec codec;
    int level;           /* compression level; 0 picks the codec's default */
    size_t block_size;   /* uncompressed bytes that close a block; 0 means 64 KiB */
    const uint8_t *sync; /* TL_AVRO_SYNC_SIZE bytes, or NULL for a random marker */
} tl_avro_writer_options;

/* Fields are private; the struct is public so a writer can live on the stack. */
typedef struct tl_avro_writer {
    const tl_avro_schema *schema;
    tl_buf *out;
    tl_buf block;  /* encoded datums of the open block */
    tl_buf packed; /* the compressed block */
    int64_t count; /* datums in the open block */
    size_t block_size;
    tl_avro_codec codec;
    int level;
    uint8_t sync[TL_AVRO_SYNC_SIZE];
} tl_avro_writer;

/* Starts a file in `out` (appending): writes the header with avro.schema (the
 * schema printed), avro.codec and the user metadata, NULL-terminated key,
 * value string pairs (keys may not start with "avro."). opts may be NULL. The
 * schema must outlive the writer. On failure nothing needs freeing. */
tl_status tl_avro_writer_begin(tl_avro_writer *w, const tl_avro_schema *schema,
                               const char *const *metadata, const tl_avro_writer_options *opts,
                               tl_buf *out, tl_error *err);

/* Encodes one datum (checked against the schema). */
tl_status tl_avro_writer_append(tl_avro_writer *w, const tl_avro_value *v, tl_error *err);

/* For writers that encode datums themselves: append exactly one encoded
 * datum to tl_avro_writer_block(w), then call tl_avro_writer_end_datum. */
tl_buf *tl_avro_writer_block(tl_avro_writer *w);
tl_status tl_avro_writer_end_datum(tl_avro_writer *w, tl_error *err);

/* Writes the last block and frees the writer's buffers; the file is in `out`.
 * The writer is discarded even when this fails. */
tl_status tl_avro_writer_finish(tl_avro_writer *w, tl_error *err);

/* Frees the writer's buffers without finishing (on error paths). */
void tl_avro_writer_discard(tl_avro_writer *w);

/* ---- Reading ---- */

typedef struct tl_avro_reader tl_avro_reader;

/* Parses the header of a whole file held in memory; `data` must outlive the
 * reader. */
tl_status tl_avro_reader_open(const uint8_t *data, size_t len, tl_avro_reader **out, tl_error *err);

const tl_avro_schema *tl_avro_reader_schema(const tl_avro_reader *r);
tl_avro_codec tl_avro_reader_codec(const tl_avro_reader *r);

/* The metadata value of `key` (NUL-terminated; *len without it), or NULL. */
const uint8_t *tl_avro_reader_meta(const tl_avro_reader *r, const char *key, size_t *len);
size_t tl_avro_reader_meta_count(const tl_avro_reader *r);
void tl_avro_reader_meta_at(const tl_avro_reader *r, size_t i, const char **key,
                            const uint8_t **value, size_t *len);

/* Decodes the next datum into *out (children in `arena`), or sets *done at
 * the end of the file. Values stay valid until the arena is reset. */
tl_status tl_avro_reader_next(tl_avro_reader *r, tl_arena *arena, tl_avro_value *out,
                              bool *done, tl_error *err);

void tl_avro_reader_free(tl_avro_reader *r);

/* Converts one record of a file into an element (zeroed before the call). */
typedef tl_status (*tl_avro_record_fn)(const tl_avro_value *record, void *elem, tl_error *err);

/* Decodes every record of an object container file whose schema is a record
 * into a malloc'd array of elem_size-byte elements. *n counts the elements
 * handed to `convert`, a failed last one included, so that on failure the
 * caller frees exactly those. `what` names a record in messages ("entry"). */
tl_status tl_avro_read_records(const uint8_t *data, size_t len, size_t elem_size,
                               tl_avro_record_fn convert, const char *what, void **out, size_t *n,
                               tl_error *err);

#endif
