/* The karet command-line tool: its command table, argument parsing, help and
 * exit codes (the same as timelake's). */
#ifndef KARET_CLI_H
#define KARET_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* Exit codes, as timelake's. */
enum { KARET_EXIT_OK = 0, KARET_EXIT_INPUT = 1, KARET_EXIT_USAGE = 2, KARET_EXIT_STORAGE = 3 };

#define KARET_MAX_OPTIONS 24
#define KARET_MAX_VALUES 64
#define KARET_MAX_ARGS 256

/* One option of a command: the single source of its --help. */
typedef struct karet_option {
    const char *name; /* long name without "--" */
    const char *arg;  /* metavariable, or NULL for a flag */
    const char *help;
    bool repeat; /* may be given more than once */
} karet_option;

struct karet_args;

typedef struct karet_command {
    const char *name;
    const char *usage;   /* after "karet NAME " */
    const char *summary; /* one line */
    const char *description;
    int (*run)(struct karet_args *a);
    karet_option options[KARET_MAX_OPTIONS];
} karet_command;

/* The parsed command line; the strings point into argv. */
typedef struct karet_args {
    const karet_command *cmd;
    const char *values[KARET_MAX_OPTIONS][KARET_MAX_VALUES];
    int counts[KARET_MAX_OPTIONS];
    const char *pos[KARET_MAX_ARGS];
    int npos;
} karet_args;

/* The command table, ended by an entry with a NULL name. */
extern const karet_command karet_commands[];

/* Parses argv (after the command name) into *a. Returns -1 when the command
 * should run, otherwise the exit code (after --help, or a usage error). */
int karet_parse_args(karet_args *a, int argc, char **argv);

/* The last value of option `name`, or NULL; whether a flag was given; every
 * value of a repeatable option (the count is returned, *out set). */
const char *karet_opt(const karet_args *a, const char *name);
bool karet_flag(const karet_args *a, const char *name);
int karet_opt_all(const karet_args *a, const char *name, const char *const **out);

/* Prints the overview (cmd NULL) or a command's help. */
void karet_print_help(FILE *f, const karet_command *cmd);

/* Prints "karet CMD: error: message" on stderr and returns `code`. */
int karet_fail(const karet_args *a, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A usage error: the message and the command's usage line; returns 2. */
int karet_usage(const karet_args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Commands. */
int karet_cmd_validate(karet_args *a);
int karet_cmd_explain(karet_args *a);
int karet_cmd_run(karet_args *a);
int karet_cmd_serve(karet_args *a);
int karet_cmd_hash_password(karet_args *a);
int karet_cmd_ship(karet_args *a);

#endif
