#include "notify_guard.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "notify.h"

typedef struct watched {
    struct MHD_Connection *c;
    int fd;
    double since_ms; /* when its headers started to be awaited; 0: not awaited */
    struct watched *next;
} watched;

struct tl_notify_guard {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    bool stop;
    double timeout_ms;
    watched *list;
};

static watched *find(tl_notify_guard *g, struct MHD_Connection *c)
{
    for (watched *w = g->list; w; w = w->next)
        if (w->c == c) return w;
    return NULL;
}

/* The socket stays open (MHD closes it, after telling the guard): a shutdown
 * only makes MHD's read see the end, so no other connection's fd is hit. */
static void *guard_main(void *p)
{
    tl_notify_guard *g = p;
    pthread_mutex_lock(&g->lock);
    while (!g->stop) {
        double now = tl_notify_now_ms();
        for (watched *w = g->list; w; w = w->next)
            if (w->since_ms > 0 && now - w->since_ms > g->timeout_ms) {
                shutdown(w->fd, SHUT_RDWR);
                w->since_ms = 0;
            }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&g->wake, &g->lock, &ts);
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

tl_notify_guard *tl_notify_guard_start(double header_timeout_s)
{
    tl_notify_guard *g = calloc(1, sizeof *g);
    if (g == NULL) return NULL;
    g->timeout_ms = header_timeout_s * 1000;
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->wake, NULL);
    if (pthread_create(&g->thread, NULL, guard_main, g) != 0) {
        pthread_cond_destroy(&g->wake);
        pthread_mutex_destroy(&g->lock);
        free(g);
        return NULL;
    }
    return g;
}

void tl_notify_guard_stop(tl_notify_guard *g)
{
    if (g == NULL) return;
    pthread_mutex_lock(&g->lock);
    g->stop = true;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->lock);
    pthread_join(g->thread, NULL);
    while (g->list) {
        watched *w = g->list;
        g->list = w->next;
        free(w);
    }
    pthread_cond_destroy(&g->wake);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

void tl_notify_guard_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                                enum MHD_ConnectionNotificationCode code)
{
    (void)socket_context;
    tl_notify_guard *g = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        watched *w = info ? malloc(sizeof *w) : NULL;
        if (w == NULL) return; /* unguarded: the idle timeout still applies */
        pthread_mutex_lock(&g->lock);
        *w = (watched){c, info->connect_fd, tl_notify_now_ms(), g->list};
        g->list = w;
        pthread_mutex_unlock(&g->lock);
        return;
    }
    pthread_mutex_lock(&g->lock);
    for (watched **p = &g->list; *p; p = &(*p)->next)
        if ((*p)->c == c) {
            watched *w = *p;
            *p = w->next;
            free(w);
            break;
        }
    pthread_mutex_unlock(&g->lock);
}

static void set_since(tl_notify_guard *g, struct MHD_Connection *c, double since_ms)
{
    pthread_mutex_lock(&g->lock);
    watched *w = find(g, c);
    if (w) w->since_ms = since_ms;
    pthread_mutex_unlock(&g->lock);
}

void tl_notify_guard_headers_done(tl_notify_guard *g, struct MHD_Connection *c)
{
    set_since(g, c, 0);
}

void tl_notify_guard_request_done(tl_notify_guard *g, struct MHD_Connection *c)
{
    set_since(g, c, tl_notify_now_ms());
}
