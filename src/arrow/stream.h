/* ArrowArrayStream helpers: a stream over batches we own, and reading a whole
 * stream from any producer. */
#ifndef TL_ARROW_STREAM_H
#define TL_ARROW_STREAM_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

/* A stream over owned batches. On success it takes ownership of *schema and of
 * the n batches (each is moved out: the caller's structs are left released;
 * the `batches` array itself stays the caller's). get_schema hands out deep
 * copies; get_next moves the batches out in order, then signals the end. On
 * failure nothing is moved. */
tl_status tl_stream_from_batches(struct ArrowSchema *schema, struct ArrowArray *batches, size_t n,
                                 struct ArrowArrayStream *out, tl_error *err);

/* The error of a producer's call (`call`: "get_schema", "get_next") that
 * returned `code`: TL_ERR_NOMEM for ENOMEM (the producer ran out of memory,
 * its input is fine), otherwise TL_ERR_INVALID; the message is the
 * producer's get_last_error, or strerror(code) without one. */
tl_status tl_stream_producer_error(struct ArrowArrayStream *stream, int code, const char *call,
                                   tl_error *err);

/* Reads batches from a stream until at least max_rows rows or the end
 * (*eof set). The caller releases each batch and frees the array. Errors
 * from the producer as tl_stream_producer_error says. */
tl_status tl_stream_read_rows(struct ArrowArrayStream *stream, int64_t max_rows,
                              struct ArrowArray **batches_out, size_t *n_out, bool *eof,
                              tl_error *err);

/* Reads a whole stream: *schema_out and a malloc'd array of batches (the caller
 * releases each batch and frees the array; NULL when there are none). Errors
 * from the producer as tl_stream_producer_error says. The stream is NOT
 * released by this call. On failure nothing is returned (everything read so
 * far is released). */
tl_status tl_stream_collect(struct ArrowArrayStream *stream, struct ArrowSchema *schema_out,
                            struct ArrowArray **batches_out, size_t *n_out, tl_error *err);

#endif
