/* Byte input for the text readers (CSV, TSV, NDJSON): a file, stdin or bytes in
 * memory, read in chunks. Input that starts with gzip's magic number (one or
 * more members, optionally zero-padded) is decompressed transparently whatever
 * it is called, and only a whole stream is accepted: data that ends before a
 * member's trailer, fails its CRC-32 or length, or has other bytes after it is
 * an error naming the input, so a cut or damaged file never loads in part.
 * This is the library's one gzip decoder: every text reader goes through it. */
#ifndef TL_INPUT_TEXT_INPUT_H
#define TL_INPUT_TEXT_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

typedef struct tl_text_input tl_text_input;

/* Told how many bytes of the underlying file have been read so far. */
typedef void (*tl_input_progress_fn)(void *ctx, uint64_t bytes_read);

/* Opens `path` ("-" is stdin). The path is copied; *out is closed with
 * tl_text_input_close. A missing or unreadable file is TL_ERR_NOT_FOUND. */
tl_status tl_text_input_open_file(const char *path, tl_text_input **out, tl_error *err);

/* Reads from `len` bytes at `data` (borrowed: they must outlive the input);
 * `name` is used in messages. Gzip is decompressed as for files. */
tl_status tl_text_input_open_memory(const uint8_t *data, size_t len, const char *name,
                                    tl_text_input **out, tl_error *err);

/* Makes each read return at most `n` bytes (0: no limit, the default), and a memory input
 * expose at most `n` more source bytes at a time, so tests and fuzzers see
 * records, gzip headers and trailers split across reads. */
void tl_text_input_set_read_limit(tl_text_input *in, size_t n);

/* Reads up to `cap` bytes into dst; *n is 0 at the end (of the whole gzip
 * stream, trailer checked). A read failure, truncated or corrupt gzip is
 * TL_ERR_INVALID naming the input and the byte offset. */
tl_status tl_text_input_read(tl_text_input *in, uint8_t *dst, size_t cap, size_t *n, tl_error *err);

/* For plain (not gzip) bytes in memory with no read limit, none read yet:
 * hands out all of them at once, without a copy (borrowed, as the input's),
 * and marks them read; false for anything else, which is read as before. */
bool tl_text_input_borrow_all(tl_text_input *in, const uint8_t **data, size_t *len);

/* The source's size in bytes when known (bytes in memory, a regular file;
 * compressed bytes for gzip), else 0: a hint to size buffers, never a limit. */
uint64_t tl_text_input_size(const tl_text_input *in);

/* The name used in messages (the path, "stdin" or the memory name). */
const char *tl_text_input_name(const tl_text_input *in);

/* Bytes consumed from the underlying file so far (compressed bytes for gzip),
 * for progress reports. */
uint64_t tl_text_input_position(const tl_text_input *in);

void tl_text_input_close(tl_text_input *in);

#endif
