/* Column names and types of the text readers, and their Arrow schema. */
#ifndef TL_INPUT_TEXT_SCHEMA_H
#define TL_INPUT_TEXT_SCHEMA_H

#include "arrow/arrow_type.h"

/* Index of field `name` in the struct schema `target`, or -1. */
int tl_text_target_find(const struct ArrowSchema *target, const char *name);

/* The type of field i of `target`, checked to be readable from text. */
tl_status tl_text_target_type(const struct ArrowSchema *target, int i, tl_arrow_type *out,
                              tl_error *err);

/* A struct schema of n nullable fields. *out is owned by the caller. */
tl_status tl_text_schema_make(const char *const *names, const tl_arrow_type *types, int n,
                              struct ArrowSchema *out, tl_error *err);

#endif
