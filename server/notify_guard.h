/* Slow clients cannot hold the server's connections: a request's headers
 * must arrive whole within a deadline (MHD's idle timeout alone is reset by
 * every byte, so a header trickled a byte a second would hold a connection,
 * and its thread, forever). The guard tracks each connection from its start,
 * and from the end of each request on a kept-alive one, until its next
 * request's headers are in; a thread shuts down the socket of one past the
 * deadline, and MHD then closes it. (The per-client connection limit is
 * MHD's own option.) */
#ifndef TL_NOTIFY_GUARD_H
#define TL_NOTIFY_GUARD_H

#include <microhttpd.h>

typedef struct tl_notify_guard tl_notify_guard;

/* Starts the guard's thread; NULL when out of memory or threads. */
tl_notify_guard *tl_notify_guard_start(double header_timeout_s);
void tl_notify_guard_stop(tl_notify_guard *g);

/* MHD_OPTION_NOTIFY_CONNECTION callback; cls is the guard. */
void tl_notify_guard_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                                enum MHD_ConnectionNotificationCode code);

/* The headers of the connection's request are in (on_request's first call),
 * or its request is over and the next one's headers are awaited. */
void tl_notify_guard_headers_done(tl_notify_guard *g, struct MHD_Connection *c);
void tl_notify_guard_request_done(tl_notify_guard *g, struct MHD_Connection *c);

#endif
