/* Pieces the karet commands share: the config file argument, loading it, and
 * JSON output. */
#ifndef KARET_CMD_UTIL_H
#define KARET_CMD_UTIL_H

#include <jansson.h>
#include <stddef.h>

#include "cli.h"

/* The pipeline file (the one positional argument or --pipeline, not both)
 * read into *config (the caller's). Returns an exit code, having said why. */
int karet_read_pipeline(karet_args *a, const char **file, json_t **config);

/* Reads a JSON config from `path` ("-": stdin). Returns 0, or -1 with a
 * message naming the file, line and column. *out is owned by the caller. */
int karet_load_config(const char *path, json_t **out, char *err, size_t errlen);

/* Prints a JSON value on one line of stdout and releases it. */
void karet_print_json(json_t *json);

#endif
