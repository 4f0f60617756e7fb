/* karet_run: not built yet (the interface is run.h). */
#include "run.h"

int karet_run(karet_lake *lake, const char *slug, const json_t *config,
              const karet_run_options *opts, json_t **summary)
{
    (void)lake, (void)slug, (void)config, (void)opts;
    *summary = json_pack("{s:s}", "error", "karet run is not built yet");
    return KARET_ERR_FAILED;
}
