/* `karet hash-password`: reads a password (typed twice without echo on a
 * terminal, or one line of standard input) and prints its scrypt hash in the
 * format KARET_ADMIN_PASSWORD_HASH takes. */
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "auth.h"
#include "cli.h"
#include "serve.h"

static int read_line(const char *prompt, char *buf, size_t len)
{
    int tty = isatty(STDIN_FILENO);
    struct termios old, quiet;
    if (tty) {
        fputs(prompt, stderr);
        tcgetattr(STDIN_FILENO, &old);
        quiet = old;
        quiet.c_lflag &= ~(tcflag_t)ECHO;
        tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
    }
    char *got = fgets(buf, (int)len, stdin);
    if (tty) {
        tcsetattr(STDIN_FILENO, TCSANOW, &old);
        fputc('\n', stderr);
    }
    if (got == NULL) return -1;
    buf[strcspn(buf, "\r\n")] = 0;
    return 0;
}

int karet_cmd_hash_password(karet_args *a)
{
    if (a->npos > 0) return karet_usage(a, "unexpected argument \"%s\"", a->pos[0]);
    char pw[1100], again[1100], hash[256];
    if (read_line("Password: ", pw, sizeof pw) != 0) {
        fprintf(stderr, "karet hash-password: no password on standard input\n");
        return 1;
    }
    if (isatty(STDIN_FILENO) &&
        (read_line("Again: ", again, sizeof again) != 0 || strcmp(pw, again) != 0)) {
        fprintf(stderr, "karet hash-password: the passwords differ\n");
        return 1;
    }
    if (strlen(pw) < 8) {
        fprintf(stderr, "karet hash-password: a password needs at least 8 characters\n");
        return 1;
    }
    if (password_hash(pw, hash, sizeof hash) != 0) {
        fprintf(stderr, "karet hash-password: hashing failed\n");
        return 1;
    }
    puts(hash);
    return 0;
}
