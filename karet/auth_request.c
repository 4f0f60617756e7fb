/* Who is calling: the worker token (an admin service principal) or a session
 * cookie. Sessions are random tokens of which only the SHA-256 is stored, so
 * a copy of the database signs nobody in. */
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "serve_http.h"

#define SESSION_COOKIE "karet_session"

static int bearer(service *svc, const char *auth, principal *who)
{
    if (strncmp(auth, "Bearer ", 7) != 0 || svc->cfg.worker_token == NULL) return -1;
    if (!ct_equal(auth + 7, svc->cfg.worker_token)) return -1;
    snprintf(who->username, sizeof who->username, "service");
    who->role = ROLE_ADMIN;
    who->service = 1;
    return 1;
}

static int session(service *svc, const char *token, principal *who)
{
    char hash[65];
    sha256_hex(token, hash);
    json_t *row = db_query_one(svc->db,
                               "SELECT s.username, u.role FROM sessions s JOIN users u "
                               "ON u.username = s.username WHERE s.token_hash = ? "
                               "AND s.expires_at > ?",
                               "si", hash, now_ms());
    if (row == NULL) return -1;
    snprintf(who->username, sizeof who->username, "%s",
             json_string_value(json_object_get(row, "username")));
    who->role = role_parse(json_string_value(json_object_get(row, "role")));
    memcpy(who->session_hash, hash, sizeof hash);
    json_decref(row);
    return who->role == ROLE_NONE ? -1 : 1;
}

int auth_identify(service *svc, http_req *rq, principal *who)
{
    memset(who, 0, sizeof *who);
    const char *auth = req_header(rq, "Authorization");
    if (auth && *auth) return bearer(svc, auth, who);
    const char *cookie = MHD_lookup_connection_value(rq->conn, MHD_COOKIE_KIND, SESSION_COOKIE);
    if (cookie && *cookie) {
        rq->via_cookie = 1;
        return session(svc, cookie, who);
    }
    return 0;
}
