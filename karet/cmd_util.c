/* Loading the pipeline file and printing JSON, for every command. */
#include "cmd_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int karet_pipeline_arg(karet_args *a, const char **out)
{
    const char *opt = karet_opt(a, "pipeline");
    if (a->npos > 1 || (a->npos == 1 && opt))
        return karet_usage(a, "give one pipeline file (as FILE or --pipeline)");
    *out = opt ? opt : a->npos ? a->pos[0] : NULL;
    if (*out == NULL) return karet_usage(a, "no pipeline file given");
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
    char *s = json ? json_dumps(json, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
    if (s) puts(s);
    free(s);
    json_decref(json);
}
