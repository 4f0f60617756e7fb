/* The command table: names, usage, options and descriptions of every karet
 * command; --help is generated from it. */
#include "cli.h"

#define OPT_JSON                                                                                   \
    {                                                                                              \
        "json", NULL, "Print machine-readable JSON instead of text.", false                        \
    }
#define OPT_PIPELINE                                                                               \
    {                                                                                              \
        "pipeline", "FILE", "The pipeline config (pipeline.json); - reads stdin.", false           \
    }

const karet_command karet_commands[] = {
    {"validate",
     "[FILE] [OPTIONS]",
     "check a pipeline config",
     "Checks a pipeline config (pipeline.json, given as FILE or --pipeline; - reads stdin) and "
     "prints every problem with its JSON Pointer path and kind: duplicate_id, "
     "dangling_reference, missing_field, unknown_field, schema or expression. Exits 1 when "
     "there is a problem, 0 when the config is good.",
     karet_cmd_validate,
     {OPT_PIPELINE, OPT_JSON}},
    {"explain",
     "[FILE] [OPTIONS]",
     "print the SQL each mapping runs",
     "Prints, for each mapping of a valid pipeline config, the DuckDB SQL its column "
     "expressions, record filter and where filter compile to, and for each table its "
     "partitioning and dedup keys. Nothing is read or written.",
     karet_cmd_explain,
     {OPT_PIPELINE, OPT_JSON}},
    {"run",
     "--lake URL --slug SLUG --pipeline FILE [OPTIONS]",
     "run a pipeline against a lake",
     "Runs a pipeline: lists every source prefix in the lake, reads the files no earlier run "
     "has read (every file when a full run is needed: a table with dedup keys gets a file that "
     "sorts before one already read, a file already read was replaced or deleted, the config "
     "of a table or of what feeds it changed, or --full), maps them and writes each analytic "
     "table as the Timelake table SLUG.<table id> in the lake's folder warehouse/. The "
     "lake is a local folder or a file://, s3://, gs:// or az:// URL; storage settings come "
     "from --storage-option and the environment as for timelake (AWS_ACCESS_KEY_ID, "
     "AWS_ENDPOINT_URL, ...). Prints the job summary. Exits 1 when the config has problems or "
     "the run failed on its input, 3 when storage failed (retrying may succeed).",
     karet_cmd_run,
     {{"lake", "URL",
       "The lake: a folder or a file://, s3://, gs:// or az:// URL; default "
       "$KARET_LAKE.",
       false},
      {"slug", "SLUG", "The pipeline's slug: the namespace of its tables ([A-Za-z0-9_-]).", false},
      OPT_PIPELINE,
      {"full", NULL, "Read every file and rebuild every table (reason \"requested\").", false},
      {"storage-option", "KEY=VALUE",
       "A storage option of the lake, named as timelake names them (aws_region, aws_endpoint, "
       "aws_allow_http, ...); repeatable.",
       true},
      {"job-id", "ID", "Recorded in the tables' snapshot summaries.", false},
      OPT_JSON}},
    {0},
};
