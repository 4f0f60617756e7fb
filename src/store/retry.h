/* Bounded retries with exponential backoff and full jitter, shared by the
 * remote backends. What is retryable: a transport failure (no connection,
 * connection cut, timeout), 5xx, 429 and S3's SlowDown. */
#ifndef TL_STORE_RETRY_H
#define TL_STORE_RETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "store/http.h"

typedef struct tl_retry_policy {
    int max_retries;      /* retries after the first attempt */
    int64_t base_ms;      /* first backoff cap; doubles each retry */
    int64_t max_delay_ms; /* cap of one backoff */
} tl_retry_policy;

#define TL_RETRY_DEFAULT ((tl_retry_policy){.max_retries = 10, .base_ms = 50, .max_delay_ms = 5000})

/* Should this outcome of tl_http_send be tried again? */
bool tl_retry_retryable(tl_status sent, const tl_http_response *resp);

/* Sleeps before retry number `retry` (1 for the first retry): a random time in
 * [0, min(max_delay, base * 2^(retry-1))]. */
void tl_retry_sleep(const tl_retry_policy *p, int retry);

#endif
