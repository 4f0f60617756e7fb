/* The pipeline config model: pipeline.json parsed into sources, dimensions,
 * mappings and analytic tables, with every structural problem recorded as
 * karet_validate reports it. Strings are borrowed from the JSON document,
 * which the model holds a reference to. */
#ifndef KARET_CONFIG_H
#define KARET_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "problems.h"

/* Value types of columns and expressions. KT_TIMESTAMP exists only inside
 * expressions (from_unix); KT_NULL is the type of the null literal. */
typedef enum ktype {
    KT_NULL,
    KT_STRING,
    KT_INT64,
    KT_FLOAT64,
    KT_BOOL,
    KT_DATE,
    KT_TIMESTAMP
} ktype;

const char *ktype_name(ktype t);
/* The SQL type of t (VARCHAR, BIGINT, DOUBLE, BOOLEAN, DATE, TIMESTAMP). */
const char *ktype_sql(ktype t);

typedef struct kcolumn {
    const char *name;
    const char *path; /* NDJSON: dotted path; CSV: header; NULL: the name */
    ktype type;
    bool not_null; /* assertions.not_null, or "nullable": false */
    bool has_min, has_max;
    double min, max;
} kcolumn;

typedef enum kformat { KF_CSV, KF_NDJSON } kformat;

typedef struct ksource {
    const char *id, *path_prefix;
    kformat format;
    kcolumn *columns;
    size_t ncolumns;
    const json_t *record_filter; /* NULL when none */
    const json_t *json;
    size_t index;
} ksource;

typedef enum kmatch { KM_EXACT, KM_KEYWORD } kmatch;
typedef enum kmiss { KMISS_NULL, KMISS_PASSTHROUGH, KMISS_LITERAL } kmiss;

/* A dimension, in the peer's form: "rows" is either inline,
 * {"values": [names], "rows": [{"patterns": [...], "values": [...],
 * "priority": n}]}, or a CSV file in the lake, {"path_prefix", "key",
 * "values", "priority_column"}. */
typedef struct kdimension {
    const char *id;
    kmatch match;
    bool case_insensitive;
    kmiss on_miss;
    const char *literal; /* on_miss {"literal": "x"} */
    const char **value_columns;
    size_t nvalues;
    const json_t *rows;          /* inline rows, or NULL */
    const char *path_prefix;     /* a CSV object (or a folder of them), or NULL */
    const char *key_column;      /* file rows: the key column */
    const char *priority_column; /* file rows: NULL when none */
    const json_t *json;
    size_t index;
} kdimension;

typedef struct kmapcol {
    const char *name;
    const json_t *expr;
    int table_column; /* index in the table's columns, -1 if unknown */
} kmapcol;

struct ktable;

typedef struct kmapping {
    const char *id;
    struct ksource *source;
    struct ktable *table;
    kmapcol *columns;
    size_t ncolumns;
    const json_t *where; /* NULL when none */
    const json_t *json;
    size_t index;
} kmapping;

typedef enum kpart { KP_IDENTITY, KP_YEAR, KP_MONTH, KP_DAY } kpart;

typedef struct kpartition {
    const char *spec; /* as in the config: "col", "month(col)" */
    int column;
    kpart transform;
} kpartition;

typedef struct ktable {
    const char *id;
    kcolumn *columns;
    size_t ncolumns;
    kpartition partitions[2];
    size_t npartitions;
    int *dedup; /* column indexes */
    size_t ndedup;
    const json_t *json;
    size_t index;
} ktable;

typedef struct kconfig {
    json_t *root; /* a reference held by the model */
    ksource *sources;
    size_t nsources;
    kdimension *dims;
    size_t ndims;
    kmapping *mappings;
    size_t nmappings;
    ktable *tables;
    size_t ntables;
} kconfig;

/* Parses `root` into *out, adding every structural problem to `problems`
 * (expressions are checked by kexpr, see validate.c). The model is filled as
 * far as the config allows; use it for running only when no problem was
 * found. Returns false only when out of memory. Free with kconfig_free. */
bool kconfig_parse(const json_t *root, kconfig *out, kproblems *problems);
void kconfig_free(kconfig *c);

const ksource *kconfig_source(const kconfig *c, const char *id);
const kdimension *kconfig_dim(const kconfig *c, const char *id);
const ktable *kconfig_table(const kconfig *c, const char *id);
/* The table columns a mapping writes, with their table types: what its
 * where filter can name. `out` holds m->ncolumns; returns how many. */
size_t kmapping_outputs(const kmapping *m, kcolumn *out);
/* The index of column `name` in cols (exact match), or -1. */
int kcolumns_find(const kcolumn *cols, size_t n, const char *name);

#endif
