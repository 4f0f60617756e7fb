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

/* A global option at argv[*i] (-w URL, -wURL, --warehouse URL|=URL, -o
 * KEY=VALUE, -oKEY=VALUE): 1 when taken (and *i moved past its value), 0
 * when arg is no global option, or an exit code + 2 on a usage error. */
static int global_option(cli_args *a, int argc, char **argv, int *i)
{
    const char *arg = argv[*i], *value = NULL;
    bool warehouse = false;
    if (strcmp(arg, "--warehouse") == 0 || strcmp(arg, "-w") == 0 || strcmp(arg, "-o") == 0) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "timelake: %s needs a value\n", arg);
            return EXIT_USAGE + 2;
        }
        warehouse = arg[1] != 'o';
        value = argv[++*i];
    } else if (strncmp(arg, "--warehouse=", 12) == 0) {
        warehouse = true;
        value = arg + 12;
    } else if (strncmp(arg, "-w", 2) == 0 || strncmp(arg, "-o", 2) == 0) {
        warehouse = arg[1] == 'w';
        value = arg + 2;
    } else {
        return 0;
    }
    if (warehouse) {
        if (a->warehouse && strcmp(a->warehouse, value) != 0) {
            fprintf(stderr, "timelake: the warehouse is given twice (%s and %s)\n", a->warehouse,
                    value);
            return EXIT_USAGE + 2;
        }
        a->warehouse = value;
        return 1;
    }
    char *eq = strchr(value, '=');
    if (eq == NULL || eq == value) {
        fprintf(stderr, "timelake: -o wants KEY=VALUE, not \"%s\"\n", value);
        return EXIT_USAGE + 2;
    }
    if (a->n_storage == CLI_MAX_STORAGE_OPTIONS) {
        fprintf(stderr, "timelake: -o given too often\n");
        return EXIT_USAGE + 2;
    }
    *eq = '\0'; /* argv strings are writable */
    a->storage[2 * a->n_storage] = value;
    a->storage[2 * a->n_storage + 1] = eq + 1;
    a->n_storage++;
    return 1;
}

/* Parses argv (after the command name) into *a. Returns -1 on success or an exit code. */
static int parse(cli_args *a, int argc, char **argv)
{
    bool options_done = false;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        /* No option has a blank in it: "-- newest rows\nSELECT ..." is a query. */
        bool text = arg[strcspn(arg, " \t\r\n")] != '\0';
        int g = options_done || text ? 0 : global_option(a, argc, argv, &i);
        if (g > 1) return g - 2;
        if (g == 1) continue;
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
    static cli_args a;
    int first = 1; /* global options may come before the command */
    for (; first < argc; first++) {
        int g = global_option(&a, argc, argv, &first);
        if (g > 1) return g - 2;
        if (g == 0) break;
    }
    if (first >= argc) {
        cli_print_help(stderr, NULL);
        return EXIT_USAGE;
    }
    argc -= first - 1;
    argv += first - 1;
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
    if (cli_output_lost() && rc == EXIT_OK) rc = EXIT_STORAGE;
    return rc;
}
