#include "store/retry.h"

#include <string.h>

#include "core/clock.h"
#include "core/random.h"

bool tl_retry_retryable(tl_status sent, const tl_http_response *resp)
{
    if (sent != TL_OK) return resp->transport_error[0] != '\0';
    if (resp->status >= 500 || resp->status == 429 || resp->status == 408) return true;
    /* S3 may throttle with a 503 SlowDown (covered above) or, behind some
     * proxies, a 400 carrying the SlowDown code. */
    return resp->status == 400 && resp->body.data &&
           strstr((const char *)resp->body.data, "<Code>SlowDown</Code>") != NULL;
}

void tl_retry_sleep(const tl_retry_policy *p, int retry)
{
    int shift = retry - 1 < 20 ? retry - 1 : 20;
    int64_t cap = p->base_ms << (shift < 0 ? 0 : shift);
    if (cap > p->max_delay_ms || cap <= 0) cap = p->max_delay_ms;
    if (cap <= 0) return;
    tl_sleep_ms((int64_t)(tl_random_u64() % (uint64_t)(cap + 1)));
}
