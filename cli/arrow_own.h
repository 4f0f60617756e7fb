/* Arrow structs the CLI makes itself: schemas (parsed from text, copied for
 * a stream's get_schema) and batches split in two by rows, each with its own
 * release callback as the C data interface wants. */
#ifndef TL_CLI_ARROW_OWN_H
#define TL_CLI_ARROW_OWN_H

#include "timelake.h"

/* A schema node with copies of format and name (may be NULL) and n_children
 * zeroed (released) children it owns. 0, or -1 when memory runs out (then
 * *out is released). */
int cli_schema_new(struct ArrowSchema *out, const char *format, const char *name, int64_t flags,
                   int64_t n_children);

/* A deep copy of any producer's schema. 0, or -1 when memory runs out. */
int cli_schema_copy(const struct ArrowSchema *src, struct ArrowSchema *out);

/* Release through the struct's callback when it is live. NULL-safe. */
void cli_schema_release(struct ArrowSchema *s);
void cli_array_release(struct ArrowArray *a);

/* Moves *src into *dst (dst released before); src becomes released. */
void cli_array_move(struct ArrowArray *src, struct ArrowArray *dst);

/* Splits `batch` (a struct array of `schema`, consumed) into its first n
 * rows (*head) and the rest (*tail), without copying: both share its
 * buffers, which are released with the last of them. 0, or -1 when memory
 * runs out (batch then released, head and tail too). */
int cli_batch_split(const struct ArrowSchema *schema, struct ArrowArray *batch, int64_t n,
                    struct ArrowArray *head, struct ArrowArray *tail);

#endif
