/* timelake: the command-line tool. Parses the command line against the command
 * table and runs the command. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int find_option(const cli_command *cmd, const char *name, size_t len)
{
    for (int i = 0; i < CLI_MAX_OPTIONS && cmd->options[i].name; i++)
        if (strlen(cmd->options[i].name) == len && strncmp(cmd->options[i].name, name, len) == 0)
            return i;
    return -1;
}

/* Parses argv (after the command name) into *a. Returns -1 on success or an exit code. */
static int parse(cli_args *a, int argc, char **argv)
{
    bool options_done = false;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        /* No option has a blank in it: "-- newest rows\nSELECT ..." is a query. */
        bool text = arg[strcspn(arg, " \t\r\n")] != '\0';
        if (options_done || arg[0] != '-' || strcmp(arg, "-") == 0 || text) {
            if (a->npos >= CLI_MAX_ARGS) return cli_usage(a, "too many arguments");
            a->pos[a->npos++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            options_done = true;
            continue;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            cli_print_help(stdout, a->cmd);
            return EXIT_OK;
        }
        if (strncmp(arg, "--", 2) != 0) return cli_usage(a, "unknown option %s", arg);
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int o = find_option(a->cmd, name, len);
        if (o < 0) return cli_usage(a, "unknown option --%.*s", (int)len, name);
        const cli_option *opt = &a->cmd->options[o];
        const char *value = "";
        if (opt->arg && eq) {
            value = eq + 1;
        } else if (opt->arg) {
            if (i + 1 >= argc) return cli_usage(a, "--%s needs a value (%s)", opt->name, opt->arg);
            value = argv[++i];
        } else if (eq) {
            return cli_usage(a, "--%s takes no value", opt->name);
        }
        if (a->counts[o] > 0 && !opt->repeat)
            return cli_usage(a, "--%s given more than once", opt->name);
        if (a->counts[o] >= 64) return cli_usage(a, "--%s given too often", opt->name);
        a->values[o][a->counts[o]++] = value;
    }
    a->json = cli_flag(a, "json");
    return -1;
}

static void print_version(void)
{
    printf("timelake %s\n", TIMELAKE_VERSION);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_print_help(stderr, NULL);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        const cli_command *cmd = argc > 2 ? cli_find_command(argv[2]) : NULL;
        cli_print_help(stdout, cmd);
        return EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        print_version();
        return EXIT_OK;
    }
    if (strcmp(name, "--man-pages") == 0) { /* used by the build to generate the man pages */
        if (argc != 3) {
            fprintf(stderr, "usage: timelake --man-pages DIR\n");
            return EXIT_USAGE;
        }
        return cli_write_man_pages(argv[2]);
    }
    static cli_args a;
    a.cmd = cli_find_command(name);
    if (a.cmd == NULL) {
        fprintf(stderr, "timelake: unknown command \"%s\" (see timelake --help)\n", name);
        return EXIT_USAGE;
    }
    int rc = parse(&a, argc - 2, argv + 2);
    if (rc < 0) rc = a.cmd->run(&a);
    /* A result that did not reach stdout (a full disk, a closed pipe) is a
     * failure, whatever the command thought it printed. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "timelake %s: error: cannot write to standard output: %s\n", name,
                strerror(errno));
        if (rc == EXIT_OK) rc = EXIT_STORAGE;
    }
    return rc;
}
