/* The timelake command-line tool: shared declarations of its parts. */
#ifndef TL_CLI_H
#define TL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "timelake.h"

/* Exit codes. */
enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_STORAGE = 3 };

#define CLI_MAX_OPTIONS 16
#define CLI_MAX_ARGS 4096
#define CLI_MAX_STORAGE_OPTIONS 64

/* One option of a command: the single source of --help and the man pages. */
typedef struct cli_option {
    const char *name; /* long name without "--" */
    const char *arg;  /* metavariable, or NULL for a flag */
    const char *help;
    bool repeat; /* may be given more than once */
} cli_option;

struct cli_args;
typedef int (*cli_run_fn)(struct cli_args *a);

typedef struct cli_command {
    const char *name;
    const char *usage;   /* after "timelake NAME " */
    const char *summary; /* one line */
    const char *description;
    cli_run_fn run;
    cli_option options[CLI_MAX_OPTIONS];
} cli_command;

/* The parsed command line. */
typedef struct cli_args {
    const cli_command *cmd;
    const char *values[CLI_MAX_OPTIONS][64]; /* values of each option, in order */
    int counts[CLI_MAX_OPTIONS];
    const char *pos[CLI_MAX_ARGS]; /* positional arguments */
    int npos;
    bool json;
    /* The global options, before the command or among its arguments:
     * -w/--warehouse and -o KEY=VALUE storage options (as key, value pairs,
     * NULL-terminated). */
    const char *warehouse;
    const char *storage[2 * CLI_MAX_STORAGE_OPTIONS + 1];
    int n_storage;
} cli_args;

extern const cli_command cli_commands[];
extern const cli_option cli_common_options[];
/* -w/--warehouse and -o: every command takes them (help and man pages). */
extern const cli_option cli_global_options[];
const cli_command *cli_find_command(const char *name);

/* The last value of option `name` or NULL; flag presence; all values. */
const char *cli_opt(const cli_args *a, const char *name);
bool cli_flag(const cli_args *a, const char *name);
int cli_opt_all(const cli_args *a, const char *name, const char *const **out);

/* Help text and man pages, from the command table. */
void cli_print_help(FILE *f, const cli_command *cmd);
int cli_write_man_pages(const char *dir);

/* A tl_error the CLI fills itself (err may be NULL): the code is returned,
 * so that a function can `return cli_error_set(...)`. */
tl_status cli_error_set(tl_error *err, tl_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Puts "context: " before the message; keeps and returns the code. */
tl_status cli_error_prefix(tl_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
tl_status cli_error_nomem(tl_error *err);

/* Returns a failed tl_status expression's status from the caller. */
#define CLI_TRY(expr)                                                                              \
    do {                                                                                           \
        tl_status cli_try_status_ = (expr);                                                        \
        if (cli_try_status_ != TL_OK) return cli_try_status_;                                      \
    } while (0)

/* Errors: prints "timelake CMD: message" on stderr and returns the exit code. */
int cli_fail(const cli_args *a, const tl_error *err);
int cli_usage(const cli_args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_exit_code(tl_status st);
bool cli_color(FILE *f);

/* The warehouse from -w/--warehouse, --lake or TIMELAKE_WAREHOUSE; the table
 * from the first positional argument (when `positional`), --table or
 * TIMELAKE_TABLE. The lake opens with the -o storage options. */
const char *cli_lake_location(const cli_args *a);
const char *cli_table_name(cli_args *a, bool positional);
int cli_open_lake(cli_args *a, tl_lake **out);
/* The usage error of a command that reads files and was given no table. */
int cli_no_table(const cli_args *a);
/* Opens a table; a missing one is "table not found: NAME" (exit 1). */
int cli_open_table(cli_args *a, tl_lake *lake, const char *name, tl_table **out);

/* Splits repeatable KEY=VALUE option values into NULL-terminated key, value
 * pairs in out (2 * count + 1 slots); usage error naming the option. */
int cli_key_values(cli_args *a, const char *option, const char **out);

/* Human-readable byte counts ("12.3 MB"). */
void cli_format_bytes(double bytes, char *buf, size_t size);

/* Prints a JSON value (jansson json_t *, or NULL when building it failed) as
 * one line on stdout and frees it. When it cannot, says so on stderr and
 * cli_output_lost() turns true: main fails the command. */
void cli_print_json(void *json);
bool cli_output_lost(void);

/* An aligned text table on stdout: rows of n cells, the first row the header. */
void cli_print_table(const char *const *cells, int rows, int cols);
void cli_print_table_to(FILE *f, const char *const *cells, int rows, int cols);

/* Commands. */
int cmd_create(cli_args *a);
int cmd_append(cli_args *a);
int cmd_import(cli_args *a);
int cmd_info(cli_args *a);
int cmd_ls(cli_args *a);
int cmd_drop(cli_args *a);
int cmd_sql(cli_args *a);
int cmd_latest(cli_args *a);
int cmd_maintain(cli_args *a);
int cmd_alter(cli_args *a);
int cmd_settings(cli_args *a);
int cmd_upgrade(cli_args *a);
int cmd_rollback(cli_args *a);
int cmd_serve_notifications(cli_args *a);

#endif
