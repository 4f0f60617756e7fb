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
     "sorts before one already read and holds a key the table has, a file already read was "
     "replaced or deleted, the config "
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
    {"serve",
     "[OPTIONS]",
     "serve the Karet API and run pipelines",
     "Serves the HTTP API (pipelines, configs, jobs, tables, SQL, lake files, users) and runs "
     "pipelines when files land: a bucket notification POSTed to /events/s3, an upload through "
     "PUT /api/lake or POST /api/p/<slug>/jobs starts a run (uploads 5 s after the last event "
     "of a batch, at most 30 s after the first). With no flags it keeps its control plane in "
     "./karet-data and the lake in ./karet-lake, listens on 127.0.0.1:8080 and prints the URL "
     "and how to sign in. Environment: KARET_WORKER_TOKEN (the bearer token of an admin "
     "service principal), KARET_WEBHOOK_SECRET (events are refused without it), "
     "KARET_ADMIN_USERNAME and KARET_ADMIN_PASSWORD_HASH (see karet hash-password), "
     "KARET_DATA_DIR, KARET_LAKE, KARET_LISTEN or PORT, KARET_WORKERS. Stops on SIGINT or "
     "SIGTERM: a run in progress stops before its next commit and runs again on the next start.",
     karet_cmd_serve,
     {{"data-dir", "DIR", "The control plane's folder (karet.db); default ./karet-data.", false},
      {"lake", "URL",
       "The lake: a folder or an s3://, gs://, az:// or file:// URL; default "
       "./karet-lake beside the data folder.",
       false},
      {"storage-option", "KEY=VALUE",
       "A storage option of the lake (aws_endpoint, aws_region, aws_allow_http, ...); "
       "repeatable.",
       true},
      {"listen", "[ADDR:]PORT", "Where to listen; default 127.0.0.1:8080 (port 0: any free).",
       false},
      {"workers", "N", "Runs at once, each of another pipeline; default 2.", false},
      {"public-url", "URL", "The address users reach (printed; https makes cookies Secure).",
       false},
      {"max-upload", "BYTES", "The largest PUT /api/lake body; default 104857600.", false},
      {"demo", NULL,
       "On a service with no pipeline yet: create the pipeline \"demo\" with sample CSV files, "
       "whose first run starts by itself.",
       false}}},
    {"ship",
     "--log FILE --to URL [--run-url URL] [OPTIONS]",
     "ship the new lines of a growing log to a pipeline",
     "Ships what was appended to a log file since the last call to a source folder of a lake "
     "(--to: an s3://, gs://, az:// URL or a local folder, with storage settings from "
     "--storage-option and the environment as for timelake: AWS_ACCESS_KEY_ID, "
     "AWS_ENDPOINT_URL, ...), then asks for a run by POSTing --run-url with KARET_WORKER_TOKEN "
     "as a bearer token. Each call ships what is new and exits (for cron); --every keeps it "
     "running. Only whole lines are shipped: a half-written last line waits for the next call. "
     "The position (byte offset, with the file's inode) is saved after each upload, atomically, "
     "in --state and as a copy in the destination (.karet-ship/NAME.state), so a lost local "
     "state resumes where it was. Rotation by rename is followed: the old file is finished "
     "from the saved offset (found by inode among <log>.1, <log>.2, ... or --rotated), then "
     "every file rotated after it, then the new log; a truncation in place (copytruncate) "
     "starts again from 0 after shipping the copy's rest. Upload names sort by time and are "
     "never reused: NAME_<first unix s>_<last unix s>_<sequence>.ndjson (or .csv, + .gz). "
     "A failed upload moves nothing on (the next call sends the same lines); a failed run "
     "request is sent again on the next call. Nothing new: no upload, no request. Exit codes: "
     "0 shipped (or nothing new), 1 the log is missing or unreadable (or the state is "
     "damaged), 2 usage, 3 the destination failed, 4 the run request failed, 5 the run URL "
     "refused the token.",
     karet_cmd_ship,
     {{"log", "FILE", "The log file to ship (one JSON object a line, or CSV with --format csv).",
       false},
      {"to", "URL",
       "Where uploads go: the pipeline source's folder, e.g. "
       "s3://karet-lake/pipelines/SLUG/events/ or a local folder.",
       false},
      {"run-url", "URL",
       "POSTed after each upload (https://karet.example/api/p/SLUG/jobs), with "
       "KARET_WORKER_TOKEN as a bearer token.",
       false},
      {"storage-option", "KEY=VALUE",
       "A storage option of the destination (aws_endpoint, aws_region, aws_allow_http, ...); "
       "repeatable.",
       true},
      {"state", "FILE",
       "Where the position is kept; default ~/.karet/ship/<log name>-<hash of its path>.json, "
       "one per log.",
       false},
      {"format", "ndjson|csv",
       "ndjson (the default): lines as they are; csv: the header starts every upload.", false},
      {"header", "LINE",
       "CSV: the column names, when the log has no header line (by default its first line is "
       "the header).",
       false},
      {"rotated", "GLOB",
       "Where the log is renamed to when rotated, e.g. '/var/log/app/events.log-*' (oldest by "
       "modification time first); default <log>.1, <log>.2, ... (.1 the newest).",
       false},
      {"name", "NAME",
       "The start of upload names; default the log's name up to its first dot. Give each log "
       "shipped into one folder its own.",
       false},
      {"max-file-size", "SIZE",
       "The largest upload before compression (64M, 1G, bytes); default 64M. A backlog is "
       "split into files of at most this, at line ends.",
       false},
      {"gzip", NULL, "Compress uploads (.gz).", false},
      {"every", "DURATION",
       "Keep running, one pass every DURATION (30s, 10m, 1h) until SIGINT or SIGTERM.", false},
      {"quiet", NULL, "Print only warnings and errors.", false}}},
    {"hash-password",
     "",
     "print the scrypt hash of a password",
     "Reads a password (typed twice on a terminal, or the first line of standard input) and "
     "prints its hash in the form scrypt$N$r$p$salt$hash (N=131072, r=8, p=1, as the "
     "published Karet), for KARET_ADMIN_PASSWORD_HASH.",
     karet_cmd_hash_password,
     {{0}}},
    {0},
};
