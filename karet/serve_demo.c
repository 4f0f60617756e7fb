/* `karet serve --demo`: on a control plane with no pipeline, the pipeline
 * "demo" (the csv_events template) and three sample files under its source
 * prefix, uploaded as any upload is, so the first run starts by itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "jobs.h"
#include "serve_demo.h"
#include "serve_lake.h"

#define DEMO_SLUG "demo"
#define DEMO_FILES 3
#define DEMO_ROWS 200

/* One file of events, its times sorting after the previous file's; a few
 * rows repeat the previous file's last ones (the dedup keys drop them). */
static char *sample_file(int f, size_t *len)
{
    size_t cap = 64 + (size_t)DEMO_ROWS * 64;
    char *buf = malloc(cap);
    if (buf == NULL) return NULL;
    size_t n = (size_t)snprintf(buf, cap, "time,user,value\n");
    int first = f * DEMO_ROWS - (f ? 5 : 0);
    for (int i = first; i < (f + 1) * DEMO_ROWS; i++)
        n += (size_t)snprintf(buf + n, cap - n, "2026-11-12T%02d:%02d:%02d,user%d,%d.%d\n",
                              i / 3600 % 24, i / 60 % 60, i % 60, i % 13, i % 97, i % 10);
    *len = n;
    return buf;
}

int serve_demo_seed(service *svc, char *err, size_t errlen)
{
    json_t *any = db_query_one(svc->db, "SELECT slug FROM pipelines LIMIT 1", "");
    if (any) return json_decref(any), 0; /* not a fresh service: leave it be */
    json_t *config = api_template("csv_events", DEMO_SLUG);
    int64_t version;
    int rc = config ? api_create_pipeline(svc, DEMO_SLUG, "Demo", config, "demo", &version) : -1;
    json_decref(config);
    if (rc != 0) return snprintf(err, errlen, "cannot create the demo pipeline"), -1;
    tl_lake *lake = lake_open_objects(svc, err, errlen);
    if (lake == NULL) return -1;
    json_t *scheduled = json_array();
    for (int f = 0; f < DEMO_FILES && rc == 0; f++) {
        char key[128];
        size_t len = 0;
        char *data = sample_file(f, &len);
        snprintf(key, sizeof key, "pipelines/%s/events/events_%04d.csv", DEMO_SLUG, f + 1);
        tl_error e = {0};
        if (data == NULL || tl_lake_put_object(lake, key, data, len, &e) != TL_OK) {
            snprintf(err, errlen, "cannot write %s: %s", key, data ? e.message : "out of memory");
            rc = -1;
        } else {
            route_upload(svc, key, scheduled);
        }
        free(data);
    }
    json_decref(scheduled);
    tl_lake_close(lake);
    return rc;
}
