#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

tl_status tl_error_set(tl_error *err, tl_status code, const char *fmt, ...)
{
    if (err == NULL) return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

tl_status tl_error_prefix(tl_error *err, const char *fmt, ...)
{
    if (err == NULL) return TL_ERR_INTERNAL;
    char prefix[TL_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char old[TL_ERROR_MESSAGE_MAX];
    memcpy(old, err->message, sizeof old);
    old[sizeof old - 1] = '\0';
    /* Truncation is fine: the message is for people and stays terminated. */
    size_t n = strlen(prefix);
    if (n > sizeof err->message - 3) n = sizeof err->message - 3;
    memcpy(err->message, prefix, n);
    memcpy(err->message + n, ": ", 2);
    size_t rest = sizeof err->message - n - 3;
    size_t m = strlen(old);
    if (m > rest) m = rest;
    memcpy(err->message + n + 2, old, m);
    err->message[n + 2 + m] = '\0';
    return err->code;
}

tl_status tl_error_nomem(tl_error *err)
{
    return tl_error_set(err, TL_ERR_NOMEM, "out of memory");
}

void tl_error_clear(tl_error *err)
{
    if (err == NULL) return;
    err->code = TL_OK;
    err->message[0] = '\0';
}

const char *tl_status_name(tl_status status)
{
    switch (status) {
    case TL_OK:
        return "ok";
    case TL_ERR_NOT_FOUND:
        return "not found";
    case TL_ERR_EXISTS:
        return "exists";
    case TL_ERR_INVALID:
        return "invalid";
    case TL_ERR_STORAGE:
        return "storage";
    case TL_ERR_QUERY:
        return "query";
    case TL_ERR_CONFLICT:
        return "conflict";
    case TL_ERR_NOMEM:
        return "out of memory";
    case TL_ERR_INTERNAL:
        return "internal";
    }
    return "unknown";
}
