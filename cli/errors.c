/* The tl_error structs the CLI fills itself (its own checks, wrapped library
 * messages); the library fills the ones it returns. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

tl_status cli_error_set(tl_error *err, tl_status code, const char *fmt, ...)
{
    if (err == NULL) return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->code = code;
    return code;
}

tl_status cli_error_prefix(tl_error *err, const char *fmt, ...)
{
    if (err == NULL) return TL_ERR_INTERNAL;
    char context[TL_ERROR_MESSAGE_MAX], old[TL_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(context, sizeof context, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    old[sizeof old - 1] = 0;
    /* A long message loses its end: it is for people and stays terminated. */
    size_t room = sizeof err->message - 1, n = strlen(context), m = strlen(old);
    if (n > room - 2) n = room - 2;
    if (m > room - 2 - n) m = room - 2 - n;
    memcpy(err->message, context, n);
    memcpy(err->message + n, ": ", 2);
    memcpy(err->message + n + 2, old, m);
    err->message[n + 2 + m] = 0;
    return err->code;
}

tl_status cli_error_nomem(tl_error *err)
{
    return cli_error_set(err, TL_ERR_NOMEM, "out of memory");
}
