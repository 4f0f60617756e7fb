/* JSON text of a value as jansson writes it, but with every real in the
 * shortest form that reads back as the same double ("0.1", "0.3", "1e+21",
 * "-0.0"), as Python's repr, JavaScript and DuckDB print them: jansson
 * writes 17 significant digits ("0.10000000000000001"). */
#ifndef KARET_JSON_WRITE_H
#define KARET_JSON_WRITE_H

#include <jansson.h>

/* As json_dump_callback, with the flags JSON_INDENT(n), JSON_COMPACT,
 * JSON_ENSURE_ASCII, JSON_SORT_KEYS, JSON_ENCODE_ANY and JSON_ESCAPE_SLASH
 * (JSON_REAL_PRECISION and JSON_EMBED are not taken). Returns 0, or -1 when
 * the callback failed or memory ran out. */
int kjson_dump_callback(const json_t *j, json_dump_callback_t cb, void *data, size_t flags);

/* The text of a real as kjson_dump_callback writes it (size 32 is enough):
 * a non-finite value, which JSON cannot hold, is "null". */
void kjson_real_text(double v, char *out, size_t size);

#endif
