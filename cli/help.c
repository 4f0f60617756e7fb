/* --help text and man pages, both generated from the command table. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char *const environment[][2] = {
    {"TIMELAKE_WAREHOUSE", "The warehouse when --lake is not given."},
    {"TIMELAKE_TABLE", "The table when none is named on the command line."},
    {"NO_COLOR", "When set (to anything but an empty string), output has no colours."},
};

static const char *const exit_codes[][2] = {
    {"0", "success"},
    {"1", "bad input, or a table or file not found"},
    {"2", "usage error"},
    {"3", "storage or commit failure"},
};

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
        if (col == 0)
            col = fprintf(f, "%*s", indent, "");
        else
            col += fprintf(f, " ");
        col += fprintf(f, "%.*s", (int)w, text);
        text += w;
        while (*text == ' ') text++;
    }
    if (col) fputc('\n', f);
}

/* "-w, --warehouse URL" or "-o KEY=VALUE": the spelling of a global option. */
static void global_head(const cli_option *o, char *buf, size_t size)
{
    if (strcmp(o->name, "o") == 0)
        snprintf(buf, size, "-o %s", o->arg);
    else
        snprintf(buf, size, "-%c, --%s %s", o->name[0], o->name, o->arg);
}

/* The help of a global option without its "-w URL: " lead. */
static const char *global_help(const cli_option *o)
{
    const char *colon = strstr(o->help, ": ");
    return colon ? colon + 2 : o->help;
}

static void print_globals(FILE *f)
{
    fprintf(f, "\nglobal options (before the command or among its options):\n");
    for (const cli_option *o = cli_global_options; o->name; o++) {
        char head[64];
        global_head(o, head, sizeof head);
        fprintf(f, "  %s\n", head);
        wrap(f, global_help(o), 6);
    }
}

static void print_overview(FILE *f)
{
    fprintf(f, "timelake %s: time series as Apache Iceberg tables of Parquet files\n\n",
            TIMELAKE_VERSION);
    fprintf(f,
            "usage: timelake [-w URL] [-o KEY=VALUE]... COMMAND [ARGS] [OPTIONS]\n\ncommands:\n");
    for (const cli_command *c = cli_commands; c->name; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
    print_globals(f);
    fprintf(f, "\nRun timelake COMMAND --help for a command's options.\n\nenvironment:\n");
    for (size_t i = 0; i < sizeof environment / sizeof *environment; i++)
        fprintf(f, "  %-20s %s\n", environment[i][0], environment[i][1]);
    fprintf(f, "\nexit codes:\n");
    for (size_t i = 0; i < sizeof exit_codes / sizeof *exit_codes; i++)
        fprintf(f, "  %s  %s\n", exit_codes[i][0], exit_codes[i][1]);
}

void cli_print_help(FILE *f, const cli_command *cmd)
{
    if (cmd == NULL) {
        print_overview(f);
        return;
    }
    fprintf(f, "usage: timelake %s %s\n\n", cmd->name, cmd->usage);
    wrap(f, cmd->description, 0);
    fprintf(f, "\noptions:\n");
    for (int i = 0; i < CLI_MAX_OPTIONS && cmd->options[i].name; i++) {
        const cli_option *o = &cmd->options[i];
        char head[64];
        snprintf(head, sizeof head, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        fprintf(f, "  %s\n", head);
        wrap(f, o->help, 6);
    }
    fprintf(f, "  --help\n      Show this help.\n");
    print_globals(f);
}

/* Writes text with roff's special characters escaped. */
static void roff(FILE *f, const char *s)
{
    if (*s == '.' || *s == '\'') fputs("\\&", f);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", f);
        else if (*s == '-')
            fputs("\\-", f);
        else
            fputc(*s, f);
    }
}

static FILE *open_page(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.1", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) fprintf(stderr, "timelake: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

static void man_globals(FILE *f)
{
    fprintf(f, ".SH GLOBAL OPTIONS\n");
    for (const cli_option *o = cli_global_options; o->name; o++) {
        char head[64];
        global_head(o, head, sizeof head);
        fprintf(f, ".TP\n.B ");
        roff(f, head);
        fputc('\n', f);
        roff(f, global_help(o));
        fputc('\n', f);
    }
}

static void man_footer(FILE *f)
{
    fprintf(f, ".SH ENVIRONMENT\n");
    for (size_t i = 0; i < sizeof environment / sizeof *environment; i++) {
        fprintf(f, ".TP\n.B %s\n", environment[i][0]);
        roff(f, environment[i][1]);
        fputc('\n', f);
    }
    fprintf(f, ".SH EXIT STATUS\n");
    for (size_t i = 0; i < sizeof exit_codes / sizeof *exit_codes; i++)
        fprintf(f, ".TP\n.B %s\n%s\n", exit_codes[i][0], exit_codes[i][1]);
}

static int write_command_page(const char *dir, const cli_command *c)
{
    char name[64];
    snprintf(name, sizeof name, "timelake-%s", c->name);
    FILE *f = open_page(dir, name);
    if (f == NULL) return EXIT_STORAGE;
    fprintf(f, ".TH TIMELAKE\\-%s 1 \"\" \"timelake %s\" \"Timelake Manual\"\n", c->name,
            TIMELAKE_VERSION);
    fprintf(f, ".SH NAME\ntimelake\\-%s \\- ", c->name);
    roff(f, c->summary);
    fprintf(f, "\n.SH SYNOPSIS\n.B timelake %s\n", c->name);
    roff(f, c->usage);
    fprintf(f, "\n.SH DESCRIPTION\n");
    roff(f, c->description);
    fprintf(f, "\n.SH OPTIONS\n");
    for (int i = 0; i < CLI_MAX_OPTIONS && c->options[i].name; i++) {
        const cli_option *o = &c->options[i];
        fprintf(f, ".TP\n.B \\-\\-");
        roff(f, o->name);
        if (o->arg) {
            fprintf(f, " \\fI");
            roff(f, o->arg);
            fprintf(f, "\\fR");
        }
        fputc('\n', f);
        roff(f, o->help);
        fputc('\n', f);
    }
    fprintf(f, ".TP\n.B \\-\\-help\nShow the help of the command.\n");
    man_globals(f);
    man_footer(f);
    fprintf(f, ".SH SEE ALSO\n.BR timelake (1)\n");
    return fclose(f) == 0 ? EXIT_OK : EXIT_STORAGE;
}

static int write_main_page(const char *dir)
{
    FILE *f = open_page(dir, "timelake");
    if (f == NULL) return EXIT_STORAGE;
    fprintf(f, ".TH TIMELAKE 1 \"\" \"timelake %s\" \"Timelake Manual\"\n", TIMELAKE_VERSION);
    fprintf(f, ".SH NAME\ntimelake \\- time series as Apache Iceberg tables of Parquet files\n");
    fprintf(f, ".SH SYNOPSIS\n.B timelake\n\\fICOMMAND\\fR [\\fIARGS\\fR] [\\fIOPTIONS\\fR]\n");
    man_globals(f);
    fprintf(f, ".SH COMMANDS\n");
    for (const cli_command *c = cli_commands; c->name; c++) {
        fprintf(f, ".TP\n.BR timelake\\-%s (1)\n", c->name);
        roff(f, c->summary);
        fputc('\n', f);
    }
    man_footer(f);
    return fclose(f) == 0 ? EXIT_OK : EXIT_STORAGE;
}

int cli_write_man_pages(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "timelake: cannot create %s: %s\n", dir, strerror(errno));
        return EXIT_STORAGE;
    }
    int rc = write_main_page(dir);
    for (const cli_command *c = cli_commands; rc == EXIT_OK && c->name; c++)
        rc = write_command_page(dir, c);
    return rc;
}
