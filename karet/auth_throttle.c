/* Sign-in throttling. A verification costs scrypt's 128 MiB and about half a
 * second, and sign-in needs no credentials, so each client gets a small
 * bucket of attempts and the whole server at most two verifications at once:
 * memory stays bounded however many addresses an attacker uses. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"

#define BURST 5
#define REFILL_MS 15000
#define MAX_IN_FLIGHT 2
#define MAX_CLIENTS 4096

typedef struct bucket {
    char client[64];
    int tokens;
    int64_t last_refill;
    int64_t used; /* for eviction: least recently used goes */
} bucket;

struct auth_throttle {
    pthread_mutex_t lock;
    int in_flight;
    bucket *buckets;
    int n;
    int64_t tick;
};

auth_throttle *throttle_new(void)
{
    auth_throttle *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->buckets = calloc(MAX_CLIENTS, sizeof *t->buckets);
    if (t->buckets == NULL) return free(t), NULL;
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

void throttle_free(auth_throttle *t)
{
    if (t == NULL) return;
    pthread_mutex_destroy(&t->lock);
    free(t->buckets);
    free(t);
}

static bucket *find(auth_throttle *t, const char *client, int64_t now)
{
    int victim = 0;
    for (int i = 0; i < t->n; i++) {
        if (strcmp(t->buckets[i].client, client) == 0) return &t->buckets[i];
        if (t->buckets[i].used < t->buckets[victim].used) victim = i;
    }
    bucket *b = t->n < MAX_CLIENTS ? &t->buckets[t->n++] : &t->buckets[victim];
    memset(b, 0, sizeof *b);
    strncpy(b->client, client, sizeof b->client - 1);
    b->tokens = BURST;
    b->last_refill = now;
    return b;
}

int throttle_acquire(auth_throttle *t, const char *client, int64_t now, int *busy)
{
    pthread_mutex_lock(&t->lock);
    int wait = 0;
    *busy = 0;
    if (t->in_flight >= MAX_IN_FLIGHT) {
        *busy = 1;
        wait = 2;
        goto out;
    }
    bucket *b = find(t, client, now);
    b->used = ++t->tick;
    int64_t refill = (now - b->last_refill) / REFILL_MS;
    if (refill > 0) {
        b->tokens = b->tokens + (int)refill > BURST ? BURST : b->tokens + (int)refill;
        b->last_refill = now;
    }
    if (b->tokens <= 0) {
        int64_t next = b->last_refill + REFILL_MS - now;
        wait = next <= 1000 ? 1 : (int)((next + 999) / 1000);
        goto out;
    }
    b->tokens--;
    t->in_flight++;
out:
    pthread_mutex_unlock(&t->lock);
    return wait;
}

void throttle_release(auth_throttle *t)
{
    pthread_mutex_lock(&t->lock);
    if (t->in_flight > 0) t->in_flight--;
    pthread_mutex_unlock(&t->lock);
}

void throttle_reset(auth_throttle *t, const char *client)
{
    pthread_mutex_lock(&t->lock);
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->buckets[i].client, client) == 0) {
            t->buckets[i] = t->buckets[--t->n];
            break;
        }
    pthread_mutex_unlock(&t->lock);
}
