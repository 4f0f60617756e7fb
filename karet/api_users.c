/* Accounts (admin only). A change of role or password ends that account's
 * sessions at once. The account named by KARET_ADMIN_USERNAME belongs to the
 * environment and is restored on every start, so it is not edited here. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "auth.h"

#define MIN_PASSWORD 8

static int username_ok(const char *u)
{
    size_t n = u ? strlen(u) : 0;
    if (n < 3 || n > 32) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)u[i]) && u[i] != '_' && u[i] != '.') return 0;
    return 1;
}

static json_t *user_json(json_t *row)
{
    char buf[40];
    return json_pack("{s:O,s:O,s:s,s:b}", "username", json_object_get(row, "username"), "role",
                     json_object_get(row, "role"), "createdAt",
                     iso_time(json_integer_value(json_object_get(row, "created_at")), buf, 40),
                     "bootstrap", (int)json_integer_value(json_object_get(row, "bootstrap")));
}

void api_users_list(service *svc, http_req *rq, http_resp *out)
{
    (void)rq;
    json_t *rows = db_query(svc->db,
                            "SELECT username, role, created_at, bootstrap FROM users "
                            "ORDER BY username",
                            "");
    json_t *users = json_array();
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) json_array_append_new(users, user_json(row));
    json_decref(rows);
    reply_json(out, 200, json_pack("{s:o}", "users", users));
}

void api_users_create(service *svc, http_req *rq, http_resp *out)
{
    json_t *body = req_json_object(rq, out);
    if (body == NULL) return;
    const char *username = json_string_value(json_object_get(body, "username"));
    const char *password = json_string_value(json_object_get(body, "password"));
    const char *role = json_string_value(json_object_get(body, "role"));
    char hash[256];
    if (!username_ok(username)) {
        reply_error(out, 422, "invalid_username",
                    "Use 3 to 32 letters, numbers, underscores or dots.");
    } else if (password == NULL || strlen(password) < MIN_PASSWORD || strlen(password) > 1024) {
        reply_error(out, 422, "weak_password", "Password must be at least %d characters.",
                    MIN_PASSWORD);
    } else if (role_parse(role) == ROLE_NONE) {
        reply_error(out, 422, "invalid_role", "Role must be viewer, editor or admin.");
    } else if (password_hash(password, hash, sizeof hash) != 0) {
        reply_error(out, 500, "internal", "cannot hash the password");
    } else {
        int64_t now = now_ms();
        int st = db_exec(svc->db, NULL,
                         "INSERT INTO users (username, role, password_hash, created_at) "
                         "VALUES (?, ?, ?, ?)",
                         "sssi", username, role, hash, now);
        if (st == DB_CONSTRAINT) {
            reply_error(out, 409, "already_exists", "%s already has an account.", username);
        } else if (st != DB_OK) {
            reply_error(out, 500, "internal", "%s", db_error());
        } else {
            char buf[40];
            reply_json(out, 201,
                       json_pack("{s:b,s:{s:s,s:s,s:s}}", "ok", 1, "user", "username", username,
                                 "role", role, "createdAt", iso_time(now, buf, 40)));
        }
    }
    json_decref(body);
}

/* The account named in the path, or NULL after a 404. */
static json_t *target(service *svc, http_req *rq, http_resp *out)
{
    json_t *row = db_query_one(svc->db,
                               "SELECT username, role, created_at, bootstrap FROM users "
                               "WHERE username = ?",
                               "s", rq->params[0]);
    if (row == NULL) reply_error(out, 404, "no_such_user", "no account named %s", rq->params[0]);
    return row;
}

void api_user_get(service *svc, http_req *rq, http_resp *out)
{
    json_t *row = target(svc, rq, out);
    if (row == NULL) return;
    reply_json(out, 200, user_json(row));
    json_decref(row);
}

static int is_bootstrap(json_t *row, http_resp *out)
{
    if (!json_integer_value(json_object_get(row, "bootstrap"))) return 0;
    reply_error(out, 422, "bootstrap_admin",
                "This account comes from the environment and is restored on restart. Change "
                "KARET_ADMIN_USERNAME to retire it.");
    return 1;
}

static int is_self(http_req *rq, json_t *row)
{
    return !rq->who.service &&
           strcasecmp(rq->who.username, json_string_value(json_object_get(row, "username"))) == 0;
}

void api_user_patch(service *svc, http_req *rq, http_resp *out)
{
    json_t *row = target(svc, rq, out);
    if (row == NULL) return;
    json_t *body = is_bootstrap(row, out) ? NULL : req_json_object(rq, out);
    const char *username = json_string_value(json_object_get(row, "username"));
    if (body == NULL) goto done;
    json_t *pw = json_object_get(body, "password"), *role = json_object_get(body, "role");
    char hash[256];
    if (pw) {
        const char *p = json_string_value(pw);
        if (p == NULL || strlen(p) < MIN_PASSWORD || strlen(p) > 1024) {
            reply_error(out, 422, "weak_password", "Password must be at least %d characters.",
                        MIN_PASSWORD);
        } else if (password_hash(p, hash, sizeof hash) != 0) {
            reply_error(out, 500, "internal", "cannot hash the password");
        } else {
            db_begin(svc->db);
            db_exec(svc->db, NULL, "UPDATE users SET password_hash = ? WHERE username = ?", "ss",
                    hash, username);
            db_exec(svc->db, NULL, "DELETE FROM sessions WHERE username = ?", "s", username);
            db_commit(svc->db);
            reply_json(out, 200, json_pack("{s:b,s:s}", "ok", 1, "username", username));
        }
    } else if (role_parse(json_string_value(role)) == ROLE_NONE) {
        reply_error(out, 422, "invalid_role", "Role must be viewer, editor or admin.");
    } else if (is_self(rq, row)) {
        reply_error(out, 422, "self_role_change",
                    "You cannot change your own role. Ask another admin.");
    } else {
        db_begin(svc->db);
        db_exec(svc->db, NULL, "UPDATE users SET role = ? WHERE username = ?", "ss",
                json_string_value(role), username);
        db_exec(svc->db, NULL, "DELETE FROM sessions WHERE username = ?", "s", username);
        db_commit(svc->db);
        reply_json(
            out, 200,
            json_pack("{s:b,s:{s:s,s:O}}", "ok", 1, "user", "username", username, "role", role));
    }
done:
    json_decref(body);
    json_decref(row);
}

void api_user_delete(service *svc, http_req *rq, http_resp *out)
{
    json_t *row = target(svc, rq, out);
    if (row == NULL) return;
    if (is_bootstrap(row, out)) {
    } else if (is_self(rq, row)) {
        reply_error(out, 422, "self_delete", "You cannot delete the account you are signed in as.");
    } else {
        db_exec(svc->db, NULL, "DELETE FROM users WHERE username = ?", "s",
                json_string_value(json_object_get(row, "username")));
        reply_json(out, 200, json_pack("{s:b}", "ok", 1));
    }
    json_decref(row);
}
