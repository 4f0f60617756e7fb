/* Table names: "namespace.table", or "table" in namespace "default". */
#ifndef TL_TABLE_NAME_H
#define TL_TABLE_NAME_H

#include "core/error.h"

#define TL_NAME_MAX 256

typedef struct tl_qname {
    char namespace_[TL_NAME_MAX];
    char table[TL_NAME_MAX];
    char full[2 * TL_NAME_MAX + 1]; /* "namespace.table" */
    char key[2 * TL_NAME_MAX + 1];  /* "namespace/table": the table's root key */
} tl_qname;

/* Parses and validates a name: each part non-empty, of [A-Za-z0-9_-]. */
tl_status tl_qname_parse(const char *name, const char *default_namespace, tl_qname *out,
                         tl_error *err);

#endif
