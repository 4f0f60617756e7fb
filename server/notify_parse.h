/* Parsing an object fetched into memory into batches of the table's columns,
 * in two halves on two threads when it is large enough and the halves cannot
 * differ from the whole: a request's parse is on the path to its answer (with
 * one sender, every request's; with several, the last one's to arrive, which
 * the others' group commit waits for), and the scan of a CSV file's rows runs
 * on one thread. */
#ifndef TL_NOTIFY_PARSE_H
#define TL_NOTIFY_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "timelake.h"

/* The `len` bytes at `data` (borrowed), named `name` in messages, read as
 * `format` into `target`'s columns: *schema and *batches (malloc'd, *n of
 * them) are the caller's. In halves only while no more than one parse per
 * two cores is under way in the process. The rows and any error are those of one parse of
 * the whole: the halves are parsed apart only for plain CSV or TSV with no
 * quote character at all (every line end then ends a row), the second half
 * after the header line, and a failure of either half parses the whole again
 * for its message. */
tl_status tl_notify_parse_memory(const uint8_t *data, size_t len, const char *name,
                                 const char *format, const struct ArrowSchema *target,
                                 struct ArrowSchema *schema, struct ArrowArray **batches, size_t *n,
                                 tl_error *err);

/* The file at `path` read whole as `format` into `target`'s columns, as
 * tl_notify_parse_memory reads bytes (in one piece). */
tl_status tl_notify_parse_file(const char *path, const char *format,
                               const struct ArrowSchema *target, struct ArrowSchema *schema,
                               struct ArrowArray **batches, size_t *n, tl_error *err);

/* Objects from this size are parsed in halves (TIMELAKE_NOTIFY_SPLIT_BYTES
 * overrides it, for tests; 0 never splits). */
size_t tl_notify_parse_split_bytes(void);

#endif
