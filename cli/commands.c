/* The command table: names, usage, options and descriptions of every command.
 * --help and the man pages are both generated from it. */
#include <string.h>

#include "cli.h"

#define OPT_JSON                                                                                   \
    {                                                                                              \
        "json", NULL, "Print machine-readable JSON instead of text.", false                        \
    }
#define OPT_LAKE                                                                                   \
    {                                                                                              \
        "lake", "DIR", "The warehouse (a directory or file:// URL); default $TIMELAKE_WAREHOUSE.", \
            false                                                                                  \
    }
#define OPT_TABLE                                                                                  \
    {                                                                                              \
        "table", "NAME", "The table (namespace.table or table); default $TIMELAKE_TABLE.", false   \
    }
#define OPT_FORMAT                                                                                 \
    {                                                                                              \
        "format", "FMT",                                                                           \
            "Input format: csv, tsv, ndjson (jsonl) or parquet. Needed for stdin; otherwise "      \
            "taken from "                                                                          \
            "the file extension (.csv, .tsv, .csv.gz, .tsv.gz, .ndjson, .jsonl, .parquet).",       \
            false                                                                                  \
    }

const cli_option cli_global_options[] = {
    {"warehouse", "URL",
     "-w URL: The warehouse (a directory, file://, s3://, gs://, az://, http(s):// or memory:// "
     "URL); default $TIMELAKE_WAREHOUSE. Also as --lake.",
     false},
    {"o", "KEY=VALUE",
     "-o KEY=VALUE: A storage option of the warehouse, such as aws_region=eu-west-1 or "
     "aws_endpoint_url_s3=http://localhost:9000 (repeatable).",
     true},
    {NULL, NULL, NULL, false},
};

const cli_option cli_common_options[] = {
    {"help", NULL, "Show help for the command.", false},
    {NULL, NULL, NULL, false},
};

const cli_command cli_commands[] = {
    {"create",
     "[NAME] (--schema SPEC | --like FILE) [OPTIONS]",
     "create a table",
     "Creates a table. The schema is given in a compact text form, NAME:TYPE pairs separated by "
     "commas (for example time:timestamptz,device_id:string,temp:float64; types: timestamptz, "
     "timestamp, date, string, binary, bool, int8 to int64, uint8 to uint64, float32, float64, "
     "decimal(P,S); a trailing ! makes a column required), or inferred from a data file with "
     "--like. With --time-column the table is a time-series table, partitioned by --chunk of that "
     "column and sorted by the series key and time. --partition-by adds partitions by column "
     "values (Hive-style folders such as data/region=eu/d_month=2026-11/); queries that "
     "restrict those columns read only the partitions they need.",
     cmd_create,
     {OPT_LAKE,
      OPT_TABLE,
      {"schema", "SPEC", "The columns, as NAME:TYPE,NAME:TYPE,...", false},
      {"like", "FILE", "Infer the columns from a data file (CSV, TSV, NDJSON or Parquet).", false},
      OPT_FORMAT,
      {"time-column", "COL", "The time column: makes a time-series table.", false},
      {"series-key", "COLS", "The series key columns, comma separated.", false},
      {"chunk", "UNIT", "Time partition: hour, day (the default) or month.", false},
      {"partition-by", "COLS",
       "Partitions by column values, comma separated: COL (its value: a string, integer, boolean "
       "or date column) or day(COL), month(COL), year(COL) of a date or timestamp column.",
       false},
      {"retention", "DURATION", "Drop partitions older than this (90d, 12h, 2w, 1y).", false},
      {"dedup", "on|off", "Keep only the latest row per series key and time (default on).", false},
      {"no-ingest-time", NULL,
       "No _ingest_ts column (by default a time-series table gets one, filled with each "
       "append's start time).",
       false},
      {"property", "KEY=VALUE", "A table property or setting (repeatable; timelake settings).",
       true},
      OPT_JSON}},
    {"append",
     "FILE... [OPTIONS]",
     "append files to a table",
     "Appends the rows of one or more files (- for stdin) to a table as one atomic commit; with "
     "--batch-id-from-name, one commit per file. Values are parsed straight into the table's "
     "column types. A malformed file appends nothing and the error names the file, line and "
     "column. A batch id that was already committed appends nothing and reports a duplicate.",
     cmd_append,
     {OPT_LAKE,
      OPT_TABLE,
      OPT_FORMAT,
      {"batch-id", "ID", "Idempotency key of the commit: a repeated id appends nothing.", false},
      {"batch-id-from-name", NULL, "One commit per file, with the file's name as its batch id.",
       false},
      {"rows-per-commit", "N",
       "Commit every N rows instead of all at once (each file alone with --batch-id-from-name); "
       "with a batch id, commit k carries ID#k, so a second run commits nothing twice.",
       false},
      {"no-maintain", NULL,
       "No inline maintenance after the commits (the table's auto-maintain decides otherwise).",
       false},
      {"no-progress", NULL, "Never show the progress bar.", false},
      OPT_JSON}},
    {"import",
     "PATH... [OPTIONS]",
     "bulk-load files or directories",
     "Loads many files: each PATH is a file or a directory (its data files, sorted by name). "
     "Each file is its own batch id (its path below the directory given); each commit "
     "carries --files-per-commit files and all their ids. Files committed before are skipped, "
     "whatever the grouping then, so an interrupted import can simply be run again, with files "
     "added or not: each file loads exactly once.",
     cmd_import,
     {OPT_LAKE,
      OPT_TABLE,
      OPT_FORMAT,
      {"files-per-commit", "N", "Files per commit (default 1).", false},
      {"no-progress", NULL, "Never show progress.", false},
      OPT_JSON}},
    {"sql",
     "QUERY [OPTIONS]",
     "run SQL over the lake's tables",
     "Runs a SQL query over the tables of the lake and prints the result. QUERY - reads the "
     "query from standard input.",
     cmd_sql,
     {OPT_LAKE,
      {"query-file", "FILE", "Read the query from FILE (for one longer than the argument limit).",
       false},
      {"namespace", "NS", "Namespace of unqualified table names (default: default).", false},
      {"output-format", "FMT",
       "table (default), csv, jsonl (the default with --json) or parquet (needs --output).", false},
      {"output", "FILE", "Write the result to FILE instead of stdout.", false},
      {"stats", NULL, "Print on stderr the files and row groups considered and read.", false},
      {"set", "KEY=VALUE",
       "A session setting for this query, such as timelake.read_dedup=false (repeatable; "
       "timelake settings lists them).",
       true},
      OPT_JSON}},
    {"latest",
     "[NAME] [OPTIONS]",
     "the newest row of every series",
     "Prints the newest row of every series of a time-series table, from its last-value index.",
     cmd_latest,
     {OPT_LAKE,
      OPT_TABLE,
      {"output-format", "FMT", "table (default), csv or jsonl.", false},
      OPT_JSON}},
    {"maintain",
     "[NAME...] [OPTIONS]",
     "compact, apply retention, refresh rollups and expire snapshots",
     "Runs maintenance in the order retention, compaction, the refresh of the table's rollups "
     "(narrowest first), snapshot expiry, on each table named (or --all of them), one after "
     "the other; a table that fails is reported and the others still run (the exit code is "
     "the worst).",
     cmd_maintain,
     {OPT_LAKE,
      OPT_TABLE,
      {"all", NULL, "Every table of the lake.", false},
      {"no-compact", NULL, "Skip compaction.", false},
      {"no-retention", NULL, "Skip retention.", false},
      {"no-rollups", NULL, "Skip the refresh of the table's rollups.", false},
      {"no-expire", NULL, "Skip snapshot expiry.", false},
      OPT_JSON}},
    {"upgrade",
     "[NAME] [OPTIONS]",
     "bring a table to the current format",
     "Brings a table written by an older Timelake or another Iceberg writer to the current "
     "format, each step a commit: the format version, the last-value index, sorted and "
     "compacted files, the head object. No snapshot expires for --keep-snapshots afterwards, "
     "so `timelake rollback NAME SNAPSHOT` with the snapshot it prints undoes it.",
     cmd_upgrade,
     {OPT_LAKE,
      OPT_TABLE,
      {"dry-run", NULL, "Only print the steps.", false},
      {"no-compact", NULL, "Leave the data files as they are.", false},
      {"keep-snapshots", "DURATION", "Keep every snapshot this long afterwards (default 7d).",
       false},
      OPT_JSON}},
    {"rollback",
     "[NAME] SNAPSHOT [OPTIONS]",
     "make an earlier snapshot current again",
     "Makes snapshot SNAPSHOT (its id, as `timelake info --json` and `timelake upgrade` print "
     "them) the table's current one, in one commit of new metadata. Later snapshots stay in "
     "the history (a rollback to one of them undoes this) until snapshot expiry removes them.",
     cmd_rollback,
     {OPT_LAKE, OPT_TABLE, OPT_JSON}},
    {"info",
     "[NAME] [OPTIONS]",
     "show a table's contract, size and layout",
     "Shows the contract (time column, series key, chunk, dedup), size and layout of a table.",
     cmd_info,
     {OPT_LAKE, OPT_TABLE, OPT_JSON}},
    {"ls",
     "[OPTIONS]",
     "list the tables of the lake",
     "Lists the tables of the lake with their version, rows, files and size.",
     cmd_ls,
     {OPT_LAKE, OPT_JSON}},
    {"alter",
     "[NAME] (--set KEY=VALUE | --unset KEY)... [OPTIONS]",
     "change a table's settings",
     "Changes table properties in one commit (no new snapshot). A setting may be named in any "
     "spelling (read_dedup, timelake.read-dedup); keys with a dot outside timelake. are Iceberg "
     "or user properties. --unset returns a setting to its default. timelake settings lists "
     "the settings; those fixed at creation (time column, series key, chunk, dedup, ingest "
     "time) cannot change.",
     cmd_alter,
     {OPT_LAKE,
      OPT_TABLE,
      {"set", "KEY=VALUE", "Set a property (repeatable).", true},
      {"unset", "KEY", "Remove a property (repeatable).", true},
      OPT_JSON}},
    {"settings",
     "[NAME] [OPTIONS]",
     "list the settings, or a table's",
     "Lists every Timelake setting: what it takes, its default, where it can be set (create: "
     "the create options; table: a table property, at create or with alter; session: sql "
     "--set; call: an option of one command) and what it does. With a table, each setting's "
     "value in that table and where it comes from (the table, or the default), and the "
     "table's other properties.",
     cmd_settings,
     {OPT_LAKE, OPT_TABLE, OPT_JSON}},
    {"drop",
     "[NAME] [OPTIONS]",
     "drop a table and delete its files",
     "Drops a table and deletes all its files. A missing table is an error unless --if-exists.",
     cmd_drop,
     {OPT_LAKE,
      OPT_TABLE,
      {"if-exists", NULL, "Succeed when the table does not exist.", false},
      OPT_JSON}},
    {"serve-notifications",
     "[OPTIONS]",
     "append objects as their bucket notifications arrive",
     "Runs an HTTP server for object-store notifications (Tigris/S3 style: a JSON body with "
     "\"events\", each with eventName, bucket and object.key). Every OBJECT_CREATED object is "
     "read from its bucket (format by extension: .csv, .tsv, optionally .gz, .ndjson, .jsonl, "
     ".parquet) and appended with its key as the batch id, so a redelivered notification loads "
     "nothing twice. Requests must carry Authorization: Bearer TOKEN. A request is answered 200 "
     "once its files are committed, 4xx for a problem a retry cannot fix (named in the body) and "
     "5xx when an object could not be read or committed, so the sender retries. GET /health "
     "answers 200. One JSON line is logged per load. Inline maintenance runs after a commit, "
     "off the request's path (one line per pass that changed something). Objects are read by "
     "the size the bucket reports, never the notification's. SIGTERM or SIGINT stops it after "
     "the requests in flight.",
     cmd_serve_notifications,
     {OPT_LAKE,
      OPT_TABLE,
      {"route", "PREFIX=TABLE",
       "Objects whose key starts with PREFIX go to TABLE (repeatable; "
       "the longest prefix wins, other keys go to --table).",
       true},
      {"token", "TOKEN", "The bearer token; default $NOTIFY_TOKEN (prefer it: argv is visible).",
       false},
      {"port", "PORT", "The port to listen on; default $PORT or 8080.", false},
      {"bind", "ADDR", "The IPv4 or IPv6 address to listen on; default all of both.", false},
      {"s3-endpoint", "URL", "The landing buckets' S3 endpoint; default $AWS_ENDPOINT_URL_S3.",
       false},
      {"s3-region", "REGION", "The landing buckets' region; default $AWS_REGION.", false},
      {"landing-option", "KEY=VALUE",
       "A storage option of the landing buckets, such as "
       "aws_access_key_id (repeatable; default from AWS_*).",
       true},
      {"max-body", "BYTES", "Largest request body (default 1048576).", false},
      {"max-events", "N", "Most events in one request (default 1000).", false},
      {"deadline", "SECONDS",
       "Stop loading a request's events after this and answer 503 for "
       "the rest (default 8, under the senders' 10 s).",
       false},
      {"idle-timeout", "SECONDS", "Close a connection silent this long (default 30).", false},
      {"max-connections", "N", "Concurrent connections, one thread each (default 64).", false},
      {"max-per-client", "N", "Concurrent connections from one IP address (default 16).", false},
      {"header-timeout", "SECONDS",
       "A request's headers must arrive whole within this, or the connection is closed "
       "(default 10).",
       false}}},
    {NULL, NULL, NULL, NULL, NULL, {{NULL, NULL, NULL, false}}},
};

const cli_command *cli_find_command(const char *name)
{
    for (const cli_command *c = cli_commands; c->name; c++)
        if (strcmp(c->name, name) == 0) return c;
    return NULL;
}
