/* Bearer-token authentication of notification requests. */
#ifndef TL_NOTIFY_AUTH_H
#define TL_NOTIFY_AUTH_H

#include <stdbool.h>

/* True when `header` (the Authorization header, may be NULL) is exactly
 * "Bearer <token>". The comparison takes the same time whatever the header's
 * content, so it leaks nothing about the token but its length. */
bool tl_notify_auth_ok(const char *header, const char *token);

#endif
