/* Sign-in, sign-out, who am I, and the unauthenticated routes. */
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "auth.h"

/* Verified when the user does not exist, so that an unknown name takes as
 * long to refuse as a wrong password. */
static const char DUMMY_HASH[] =
    "scrypt$131072$8$1$AAAAAAAAAAAAAAAAAAAAAA==$"
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==";

void api_health(service *svc, http_req *rq, http_resp *out)
{
    (void)rq;
    json_t *v = db_query_one(svc->db, "SELECT count(*) AS n FROM pipelines", "");
    if (v == NULL) {
        reply_error(out, 503, "unhealthy", "the control plane database does not answer: %s",
                    db_error());
        return;
    }
    reply_json(out, 200,
               json_pack("{s:s,s:O,s:i}", "status", "ok", "pipelines", json_object_get(v, "n"),
                         "schemaVersion", db_schema_version(svc->db)));
    json_decref(v);
}

static int secure_request(service *svc, http_req *rq)
{
    const char *proto = req_header(rq, "X-Forwarded-Proto");
    return (proto && strcmp(proto, "https") == 0) ||
           (svc->cfg.public_url && strncmp(svc->cfg.public_url, "https:", 6) == 0);
}

static void set_cookie(service *svc, http_req *rq, http_resp *out, const char *value,
                       int64_t max_age)
{
    char c[256];
    snprintf(c, sizeof c, "karet_session=%s; Path=/; HttpOnly; SameSite=Lax; Max-Age=%lld%s", value,
             (long long)max_age, secure_request(svc, rq) ? "; Secure" : "");
    reply_header(out, "Set-Cookie", c);
}

static int verify(service *svc, const char *username, const char *password, char *role,
                  size_t rolelen)
{
    json_t *u = db_query_one(svc->db, "SELECT role, password_hash FROM users WHERE username = ?",
                             "s", username);
    const char *hash = u ? json_string_value(json_object_get(u, "password_hash")) : DUMMY_HASH;
    int ok = password_verify(password, hash) && u != NULL;
    if (ok) snprintf(role, rolelen, "%s", json_string_value(json_object_get(u, "role")));
    json_decref(u);
    return ok;
}

/* 1 after replying 429 when the client tried too often or too many
 * verifications run; otherwise 0, and the caller must throttle_release. */
static int throttled(service *svc, http_req *rq, http_resp *out)
{
    int busy;
    int wait = throttle_acquire(svc->throttle, rq->client, now_ms(), &busy);
    if (!wait) return 0;
    char ra[16];
    snprintf(ra, sizeof ra, "%d", wait);
    reply_error(out, 429, busy ? "busy" : "rate_limited",
                busy ? "too many sign-ins at once; retry in %d s"
                     : "too many sign-in attempts; retry in %d s",
                wait);
    reply_header(out, "Retry-After", ra);
    return 1;
}

/* A new session for username, its cookie on the reply. -1 on failure. */
static int start_session(service *svc, http_req *rq, http_resp *out, const char *username)
{
    char token[64], hash[65];
    if (random_token(token) != 0) return -1;
    sha256_hex(token, hash);
    int64_t now = now_ms();
    db_exec(svc->db, NULL, "DELETE FROM sessions WHERE expires_at <= ?", "i", now);
    if (db_exec(svc->db, NULL,
                "INSERT INTO sessions (token_hash, username, created_at, expires_at) "
                "VALUES (?, ?, ?, ?)",
                "ssii", hash, username, now, now + svc->cfg.session_ttl_s * 1000) != DB_OK)
        return -1;
    set_cookie(svc, rq, out, token, svc->cfg.session_ttl_s);
    return 0;
}

void api_sign_in(service *svc, http_req *rq, http_resp *out)
{
    json_t *body = req_json_object(rq, out);
    if (body == NULL) return;
    const char *username = json_string_value(json_object_get(body, "username"));
    const char *password = json_string_value(json_object_get(body, "password"));
    if (username == NULL || password == NULL || !*username || !*password || strlen(username) > 64 ||
        strlen(password) > 1024) {
        json_decref(body);
        reply_error(out, 401, "invalid_credentials",
                    "send {\"username\": ..., \"password\": ...} as strings");
        return;
    }
    if (throttled(svc, rq, out)) {
        json_decref(body);
        return;
    }
    char role[16] = "";
    int ok = verify(svc, username, password, role, sizeof role);
    throttle_release(svc->throttle);
    json_t *u =
        ok ? db_query_one(svc->db, "SELECT username FROM users WHERE username = ?", "s", username)
           : NULL;
    const char *canonical = u ? json_string_value(json_object_get(u, "username")) : NULL;
    if (canonical == NULL || start_session(svc, rq, out, canonical) != 0) {
        json_decref(u);
        json_decref(body);
        reply_error(out, 401, "invalid_credentials", "wrong username or password");
        return;
    }
    throttle_reset(svc->throttle, rq->client);
    reply_json(
        out, 200,
        json_pack("{s:b,s:{s:s,s:s}}", "ok", 1, "user", "username", canonical, "role", role));
    json_decref(u);
    json_decref(body);
}

/* One's own password: the current one, checked as a sign-in is (and
 * throttled alike), then the new one. Every session of the account ends;
 * the caller gets a fresh one. */
void api_account(service *svc, http_req *rq, http_resp *out)
{
    if (rq->who.service) {
        reply_error(out, 422, "service_principal", "the worker token has no password to change");
        return;
    }
    json_t *body = req_json_object(rq, out);
    if (body == NULL) return;
    const char *current = json_string_value(json_object_get(body, "currentPassword"));
    const char *next = json_string_value(json_object_get(body, "newPassword"));
    json_t *row = db_query_one(svc->db, "SELECT bootstrap FROM users WHERE username = ?", "s",
                               rq->who.username);
    char role[16], hash[256];
    if (current == NULL || next == NULL || strlen(current) > 1024) {
        reply_error(out, 422, "invalid_request",
                    "send {\"currentPassword\": ..., \"newPassword\": ...} as strings");
    } else if (strlen(next) < 8 || strlen(next) > 1024) {
        reply_error(out, 422, "weak_password", "Password must be at least 8 characters.");
    } else if (json_integer_value(json_object_get(row, "bootstrap"))) {
        reply_error(out, 422, "bootstrap_admin",
                    "This account's password comes from KARET_ADMIN_PASSWORD_HASH and is restored "
                    "on restart: change it there.");
    } else if (throttled(svc, rq, out)) {
    } else {
        int ok = verify(svc, rq->who.username, current, role, sizeof role);
        throttle_release(svc->throttle);
        if (!ok) {
            reply_error(out, 422, "wrong_password", "The current password is not right.");
        } else if (password_hash(next, hash, sizeof hash) != 0) {
            reply_error(out, 500, "internal", "cannot hash the password");
        } else {
            db_begin(svc->db);
            db_exec(svc->db, NULL, "UPDATE users SET password_hash = ? WHERE username = ?", "ss",
                    hash, rq->who.username);
            db_exec(svc->db, NULL, "DELETE FROM sessions WHERE username = ?", "s",
                    rq->who.username);
            db_commit(svc->db);
            throttle_reset(svc->throttle, rq->client);
            if (start_session(svc, rq, out, rq->who.username) != 0)
                reply_error(out, 500, "internal", "the password changed; sign in again");
            else
                reply_json(out, 200, json_pack("{s:b,s:s}", "ok", 1, "username", rq->who.username));
        }
    }
    json_decref(row);
    json_decref(body);
}

void api_sign_out(service *svc, http_req *rq, http_resp *out)
{
    if (rq->authenticated && rq->who.session_hash[0])
        db_exec(svc->db, NULL, "DELETE FROM sessions WHERE token_hash = ?", "s",
                rq->who.session_hash);
    set_cookie(svc, rq, out, "", 0);
    reply_json(out, 200, json_pack("{s:b}", "ok", 1));
}

void api_me(service *svc, http_req *rq, http_resp *out)
{
    (void)svc;
    if (!rq->authenticated) {
        reply_json(out, 401, json_pack("{s:b,s:s}", "authenticated", 0, "error", "unauthorized"));
        return;
    }
    reply_json(out, 200,
               json_pack("{s:b,s:{s:s,s:s,s:b}}", "authenticated", 1, "user", "username",
                         rq->who.username, "role", role_name(rq->who.role), "service",
                         rq->who.service));
}
