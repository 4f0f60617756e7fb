/* Argument parsing, help text and error reporting of the karet tool. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "timelake.h"

static int option_index(const karet_command *cmd, const char *name, size_t len)
{
    for (int i = 0; i < KARET_MAX_OPTIONS && cmd->options[i].name; i++)
        if (strlen(cmd->options[i].name) == len && strncmp(cmd->options[i].name, name, len) == 0)
            return i;
    return -1;
}

int karet_parse_args(karet_args *a, int argc, char **argv)
{
    bool options_done = false;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (options_done || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (a->npos >= KARET_MAX_ARGS) return karet_usage(a, "too many arguments");
            a->pos[a->npos++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            karet_print_help(stdout, a->cmd);
            return KARET_EXIT_OK;
        }
        if (strncmp(arg, "--", 2) != 0) return karet_usage(a, "unknown option %s", arg);
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int o = option_index(a->cmd, name, len);
        if (o < 0) return karet_usage(a, "unknown option --%.*s", (int)len, name);
        const karet_option *opt = &a->cmd->options[o];
        const char *value = "";
        if (opt->arg && eq) {
            value = eq + 1;
        } else if (opt->arg) {
            if (i + 1 >= argc)
                return karet_usage(a, "--%s needs a value (%s)", opt->name, opt->arg);
            value = argv[++i];
        } else if (eq) {
            return karet_usage(a, "--%s takes no value", opt->name);
        }
        if (a->counts[o] > 0 && !opt->repeat)
            return karet_usage(a, "--%s given more than once", opt->name);
        if (a->counts[o] >= KARET_MAX_VALUES)
            return karet_usage(a, "--%s given too often", opt->name);
        a->values[o][a->counts[o]++] = value;
    }
    return -1;
}

const char *karet_opt(const karet_args *a, const char *name)
{
    int i = option_index(a->cmd, name, strlen(name));
    return i >= 0 && a->counts[i] ? a->values[i][a->counts[i] - 1] : NULL;
}

bool karet_flag(const karet_args *a, const char *name)
{
    int i = option_index(a->cmd, name, strlen(name));
    return i >= 0 && a->counts[i] > 0;
}

int karet_opt_all(const karet_args *a, const char *name, const char *const **out)
{
    int i = option_index(a->cmd, name, strlen(name));
    if (i < 0) return 0;
    *out = a->values[i];
    return a->counts[i];
}

/* Prints `text` wrapped at 78 columns, each line indented by `indent`. */
static void wrap(FILE *f, const char *text, int indent)
{
    int col = 0;
    while (*text) {
        size_t w = strcspn(text, " ");
        if (col > indent && col + (int)w + 1 > 78) {
            fputc('\n', f);
            col = 0;
        }
        col += col == 0 ? fprintf(f, "%*s", indent, "") : fprintf(f, " ");
        col += fprintf(f, "%.*s", (int)w, text);
        text += w;
        while (*text == ' ') text++;
    }
    if (col) fputc('\n', f);
}

static const char *const exit_codes[][2] = {
    {"0", "success"},
    {"1", "bad input: a config with problems, a file or table not found"},
    {"2", "usage error"},
    {"3", "storage or commit failure (retrying may succeed)"},
};

void karet_print_help(FILE *f, const karet_command *cmd)
{
    if (cmd == NULL) {
        fprintf(f, "karet %s: pipelines from CSV and NDJSON files into Timelake tables\n\n",
                TIMELAKE_VERSION);
        fprintf(f, "usage: karet COMMAND [ARGS] [OPTIONS]\n\ncommands:\n");
        for (const karet_command *c = karet_commands; c->name; c++)
            fprintf(f, "  %-10s %s\n", c->name, c->summary);
        fprintf(f, "\nRun karet COMMAND --help for a command's options.\n\nexit codes:\n");
        for (size_t i = 0; i < sizeof exit_codes / sizeof *exit_codes; i++)
            fprintf(f, "  %s  %s\n", exit_codes[i][0], exit_codes[i][1]);
        return;
    }
    fprintf(f, "usage: karet %s %s\n\n", cmd->name, cmd->usage);
    wrap(f, cmd->description, 0);
    fprintf(f, "\noptions:\n");
    for (int i = 0; i < KARET_MAX_OPTIONS && cmd->options[i].name; i++) {
        const karet_option *o = &cmd->options[i];
        fprintf(f, "  --%s%s%s\n", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        wrap(f, o->help, 6);
    }
    fprintf(f, "  --help\n      Show this help.\n");
}

static void print_error(const karet_args *a, const char *fmt, va_list ap)
{
    const char *no_color = getenv("NO_COLOR");
    bool color = isatty(fileno(stderr)) && (no_color == NULL || no_color[0] == 0);
    fprintf(stderr, "%skaret %s: error:%s ", color ? "\033[1;31m" : "",
            a && a->cmd ? a->cmd->name : "", color ? "\033[0m" : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int karet_fail(const karet_args *a, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_error(a, fmt, ap);
    va_end(ap);
    return code;
}

int karet_usage(const karet_args *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_error(a, fmt, ap);
    va_end(ap);
    fprintf(stderr, "usage: karet %s %s (see --help)\n", a->cmd->name, a->cmd->usage);
    return KARET_EXIT_USAGE;
}
