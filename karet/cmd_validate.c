/* karet validate: prints every problem of a pipeline config. */
#include <stdlib.h>

#include "cli.h"
#include "cmd_util.h"
#include "run.h"

int karet_cmd_validate(karet_args *a)
{
    const char *file = NULL;
    json_t *config = NULL;
    int rc = karet_read_pipeline(a, &file, &config);
    if (rc != KARET_EXIT_OK) return rc;
    json_t *problems = karet_validate(config);
    json_decref(config);
    if (problems == NULL) return karet_fail(a, KARET_EXIT_STORAGE, "out of memory");
    size_t n = json_array_size(problems);
    if (karet_flag(a, "json")) {
        karet_print_json(json_pack("{s:b, s:O}", "ok", n == 0, "problems", problems));
    } else if (n == 0) {
        printf("%s: ok\n", file);
    } else {
        for (size_t i = 0; i < n; i++) {
            json_t *p = json_array_get(problems, i);
            const char *path = json_string_value(json_object_get(p, "path"));
            printf("%s: %s: %s: %s\n", file, path[0] ? path : "/",
                   json_string_value(json_object_get(p, "kind")),
                   json_string_value(json_object_get(p, "message")));
        }
        fprintf(stderr, "%zu problem%s\n", n, n == 1 ? "" : "s");
    }
    json_decref(problems);
    return n ? KARET_EXIT_INPUT : KARET_EXIT_OK;
}
