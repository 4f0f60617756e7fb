/* Who is calling: the worker token (an admin service principal) or a session
 * cookie. Sessions are random tokens of which only the SHA-256 is stored, so
 * a copy of the database signs nobody in. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

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

const char *auth_failure(service *svc, http_req *rq, int who)
{
    const char *auth = req_header(rq, "Authorization");
    if (who == 0)
        return "sign in (POST /api/auth/sign-in/username) or send the worker token: "
               "Authorization: Bearer $KARET_WORKER_TOKEN";
    if (auth == NULL || *auth == 0)
        return "the session expired or was ended (a sign-out, a new password or role): sign "
               "in again";
    if (strncasecmp(auth, "Bearer", 6) != 0 || (auth[6] != ' ' && auth[6] != 0))
        return "the Authorization header must be \"Bearer <token>\", the token being the "
               "server's KARET_WORKER_TOKEN";
    const char *token = auth + 6;
    while (*token == ' ') token++;
    if (*token == 0)
        return "the bearer token is empty: is KARET_WORKER_TOKEN set in this shell? It must be "
               "the token the server was started with";
    if (svc->cfg.worker_token == NULL)
        return "this server was started without KARET_WORKER_TOKEN, so it takes no bearer "
               "token: sign in, or restart it with KARET_WORKER_TOKEN set";
    return "the bearer token is not this server's KARET_WORKER_TOKEN: send the token it was "
           "started with, or sign in";
}
