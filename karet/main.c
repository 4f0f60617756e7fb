/* karet: the pipeline tool. Finds the command and runs it. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "timelake.h"

static const karet_command *find_command(const char *name)
{
    for (const karet_command *c = karet_commands; c->name; c++)
        if (strcmp(c->name, name) == 0) return c;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        karet_print_help(stderr, NULL);
        return KARET_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        const karet_command *cmd = argc > 2 ? find_command(argv[2]) : NULL;
        if (argc > 2 && cmd == NULL) {
            fprintf(stderr, "karet: unknown command \"%s\" (see karet --help)\n", argv[2]);
            return KARET_EXIT_USAGE;
        }
        karet_print_help(stdout, cmd);
        return KARET_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("karet %s\n", TIMELAKE_VERSION);
        return KARET_EXIT_OK;
    }
    static karet_args a;
    a.cmd = find_command(name);
    if (a.cmd == NULL) {
        fprintf(stderr, "karet: unknown command \"%s\" (see karet --help)\n", name);
        return KARET_EXIT_USAGE;
    }
    int rc = karet_parse_args(&a, argc - 2, argv + 2);
    if (rc >= 0) return rc;
    return a.cmd->run(&a);
}
