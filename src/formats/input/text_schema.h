/* Column names and types of the text readers, and their Arrow schema. */
#ifndef TL_INPUT_TEXT_SCHEMA_H
#define TL_INPUT_TEXT_SCHEMA_H

#include "arrow/arrow_type.h"

/* Index of field `name` in the struct schema `target`, or -1. */
int tl_text_target_find(const struct ArrowSchema *target, const char *name);

/* The type of field i of `target`, checked to be readable from text. */
tl_status tl_text_target_type(const struct ArrowSchema *target, int i, tl_arrow_type *out,
                              tl_error *err);

/* Checks that every required (not nullable) field of `target` is among the
 * n columns `names` of input `source`: TL_ERR_INVALID naming the file, the
 * missing column and the columns it has otherwise. Used by every reader
 * given a target (Parquet too). */
tl_status tl_target_required_present(const struct ArrowSchema *target, const char *const *names,
                                     int n, const char *source, tl_error *err);

/* A struct schema of n nullable fields. *out is owned by the caller. */
tl_status tl_text_schema_make(const char *const *names, const tl_arrow_type *types, int n,
                              struct ArrowSchema *out, tl_error *err);

#endif
