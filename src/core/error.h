/* Error reporting used by every layer: a status code plus a message in a
 * caller-provided tl_error (which may be NULL when the caller does not care). */
#ifndef TL_CORE_ERROR_H
#define TL_CORE_ERROR_H

#include "timelake.h"

#if defined(__GNUC__)
#define TL_PRINTF(fmt_idx, arg_idx) __attribute__((format(printf, fmt_idx, arg_idx)))
#else
#define TL_PRINTF(fmt_idx, arg_idx)
#endif

/* Sets code and message; returns code so callers can `return tl_error_set(...)`. */
tl_status tl_error_set(tl_error *err, tl_status code, const char *fmt, ...) TL_PRINTF(3, 4);

/* Prepends context ("reading x: " + old message); keeps the code. Returns the code. */
tl_status tl_error_prefix(tl_error *err, const char *fmt, ...) TL_PRINTF(2, 3);

/* Shorthand for the common out-of-memory case. */
tl_status tl_error_nomem(tl_error *err);

void tl_error_clear(tl_error *err);

/* Evaluates a tl_status expression and returns it from the caller on failure. */
#define TL_TRY(expr)                                                                               \
    do {                                                                                           \
        tl_status tl_try_status_ = (expr);                                                         \
        if (tl_try_status_ != TL_OK) return tl_try_status_;                                        \
    } while (0)

#endif
