/* Loading the pipeline file and printing JSON, for every command. */
#include "cmd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_text.h"

int karet_read_pipeline(karet_args *a, const char **file, json_t **config)
{
    const char *opt = karet_opt(a, "pipeline");
    if (a->npos > 1 || (a->npos == 1 && opt))
        return karet_usage(a, "give one pipeline file (as FILE or --pipeline)");
    *file = opt ? opt : a->npos ? a->pos[0] : NULL;
    if (*file == NULL) return karet_usage(a, "no pipeline file given");
    char err[1024];
    if (karet_load_config(*file, config, err, sizeof err) != 0)
        return karet_fail(a, KARET_EXIT_INPUT, "%s", err);
    return KARET_EXIT_OK;
}

int karet_load_config(const char *path, json_t **out, char *err, size_t errlen)
{
    json_error_t je;
    size_t flags = JSON_REJECT_DUPLICATES;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, errlen, "cannot read %s: %m", path);
        return -1;
    }
    *out = json_loadf(f, flags, &je);
    if (f != stdin) fclose(f);
    if (*out == NULL) {
        snprintf(err, errlen, "%s:%d:%d: not valid JSON: %s", path, je.line, je.column, je.text);
        return -1;
    }
    return 0;
}

void karet_print_json(json_t *json)
{
    char *s = json ? kjson_dumps(json, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    if (s) puts(s);
    free(s);
    json_decref(json);
}
