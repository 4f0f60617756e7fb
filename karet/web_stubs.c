/* Pages still to come. */
#include "web.h"

#define STUB(fn, TITLE, TAB)                                                                       \
    void fn(service *svc, http_req *rq, http_resp *out)                                            \
    {                                                                                              \
        page p = {.svc = svc, .rq = rq, .title = TITLE, .tab = TAB};                               \
        page_begin(&p);                                                                            \
        html_printf(&p.b, "<h1>%s</h1>", TITLE);                                                   \
        page_end(&p, out);                                                                         \
    }
STUB(web_data, "Data", "data")
STUB(web_lake, "Lake", "lake")
STUB(web_settings, "Settings", "settings")
