/* karet run: runs a pipeline against a lake and prints the job summary. */
#include "cli.h"
#include "cmd_util.h"
#include "run.h"

int karet_cmd_run(karet_args *a)
{
    return karet_fail(a, KARET_EXIT_STORAGE, "karet run is not built yet");
}
