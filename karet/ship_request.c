/* karet ship's run request: POST <run URL> with the worker token as a bearer
 * token, as the seed's `curl -X POST -H "Authorization: Bearer ..."`. */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "json_text.h"
#include "ship.h"

typedef struct body {
    char data[4096];
    size_t len;
} body;

static size_t keep(char *p, size_t size, size_t n, void *ctx)
{
    body *b = ctx;
    size_t k = size * n, room = sizeof b->data - 1 - b->len;
    memcpy(b->data + b->len, p, k < room ? k : room);
    b->len += k < room ? k : room;
    b->data[b->len] = 0;
    return size * n;
}

/* The useful part of an answer: the job id of a 202, or the error message. */
static void describe(const body *b, long code, char *job_id, size_t job_len, char *msg,
                     size_t msglen)
{
    json_t *j = kjson_loadb(b->data, b->len, 0, NULL);
    const char *id = json_string_value(json_object_get(j, "id"));
    const char *m = json_string_value(json_object_get(j, "message"));
    if (code >= 200 && code < 300 && id) snprintf(job_id, job_len, "%s", id);
    if (code >= 300) snprintf(msg, msglen, "%.300s", m ? m : b->data);
    json_decref(j);
}

long ship_request_run(const char *url, const char *token, char *job_id, size_t job_len, char *msg,
                      size_t msglen)
{
    job_id[0] = msg[0] = 0;
    CURL *c = curl_easy_init();
    if (c == NULL) {
        snprintf(msg, msglen, "libcurl failed to start");
        return -1;
    }
    char auth[4200], errbuf[CURL_ERROR_SIZE] = "";
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token ? token : "");
    struct curl_slist *h = curl_slist_append(NULL, auth);
    h = curl_slist_append(h, "Accept: application/json");
    body b = {.len = 0};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    long code = -1;
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        describe(&b, code, job_id, job_len, msg, msglen);
    } else {
        snprintf(msg, msglen, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
    }
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return code;
}
