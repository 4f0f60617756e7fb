/* Settings: one's own account and password, and, for admins, the users
 * and their roles (from the very JSON GET /api/users serves). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "web.h"

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static void account(kbuf *b, service *svc, http_req *rq)
{
    json_t *row = db_query_one(svc->db, "SELECT bootstrap FROM users WHERE username = ?", "s",
                               rq->who.username);
    int boot = json_integer_value(json_object_get(row, "bootstrap")) != 0;
    json_decref(row);
    html_printf(b,
                "<section class=\"card\" aria-labelledby=\"account-title\"><h2 "
                "id=\"account-title\">Your account</h2><p><strong>%s</strong> · <span "
                "class=\"badge role-%s\">%s</span></p>",
                rq->who.username, role_name(rq->who.role), role_name(rq->who.role));
    if (rq->who.service || boot) {
        kbuf_puts(b, rq->who.service
                         ? "<p class=\"hint\">You are using the worker token: it has no password."
                           "</p></section>"
                         : "<p class=\"hint\">This account comes from KARET_ADMIN_USERNAME: its "
                           "password is KARET_ADMIN_PASSWORD_HASH, restored on every start. Make "
                           "a new hash with <code>karet hash-password</code>.</p></section>");
        return;
    }
    kbuf_puts(b,
              "<form id=\"password-form\" novalidate><h3>Change your password</h3>"
              "<div class=\"field\"><label for=\"current-password\">Current password</label>"
              "<input type=\"password\" id=\"current-password\" autocomplete=\"current-password\" "
              "required></div><div class=\"field\"><label for=\"new-password\">New password"
              "</label><input type=\"password\" id=\"new-password\" autocomplete=\"new-password\" "
              "minlength=\"8\" required aria-describedby=\"new-password-hint\"><p class=\"hint\" "
              "id=\"new-password-hint\">At least 8 characters. Your other sessions end.</p></div>"
              "<div class=\"field\"><label for=\"repeat-password\">New password again</label>"
              "<input type=\"password\" id=\"repeat-password\" autocomplete=\"new-password\" "
              "required></div><p class=\"error\" id=\"password-error\" role=\"alert\" hidden></p>"
              "<button type=\"submit\" class=\"primary\">Change password</button></form>"
              "</section>");
}

static void role_select(kbuf *b, const char *user, const char *role, int locked)
{
    static const char *const roles[] = {"viewer", "editor", "admin"};
    html_printf(b, "<select data-role-of=\"%s\" aria-label=\"Role of %s\"%R>", user, user,
                locked ? " disabled" : "");
    for (int i = 0; i < 3; i++)
        html_printf(b, "<option value=\"%s\"%R>%s</option>", roles[i],
                    strcmp(roles[i], role) == 0 ? " selected" : "", roles[i]);
    kbuf_puts(b, "</select>");
}

static void users(kbuf *b, service *svc, http_req *rq)
{
    http_resp tmp = {0};
    api_users_list(svc, rq, &tmp);
    json_t *list = json_object_get(tmp.json, "users");
    kbuf_puts(b, "<section class=\"card\" aria-labelledby=\"users-title\"><h2 "
                 "id=\"users-title\">Users</h2><p class=\"hint\">Viewers read; editors change "
                 "pipelines, files and start runs; admins also manage users and delete pipelines. "
                 "A change of role signs the user out.</p><div class=\"table-wrap\"><table "
                 "class=\"grid\" id=\"users\"><caption class=\"visually-hidden\">Users</caption>"
                 "<thead><tr><th scope=\"col\">User</th><th scope=\"col\">Role</th><th "
                 "scope=\"col\" class=\"hide-narrow\">Since</th><th scope=\"col\"><span "
                 "class=\"visually-hidden\">Actions</span></th></tr></thead><tbody>");
    size_t i;
    json_t *u;
    json_array_foreach(list, i, u)
    {
        const char *name = str(u, "username");
        int self = !rq->who.service && strcasecmp(name, rq->who.username) == 0;
        int boot = json_is_true(json_object_get(u, "bootstrap"));
        html_printf(b, "<tr data-user=\"%s\"><td>%s%R%R</td><td>", name, name,
                    self ? " <span class=\"badge\">you</span>" : "",
                    boot ? " <span class=\"badge\" title=\"From KARET_ADMIN_USERNAME\">env</span>"
                         : "");
        role_select(b, name, str(u, "role"), self || boot);
        html_printf(b,
                    "</td><td class=\"hide-narrow nowrap\"><time datetime=\"%s\">%s</time></td>"
                    "<td class=\"nowrap actions\">",
                    str(u, "createdAt"), str(u, "createdAt"));
        if (!boot)
            html_printf(b,
                        "<button type=\"button\" class=\"small\" data-reset=\"%s\" "
                        "aria-label=\"Set a new password for %s\">New password</button>",
                        name, name);
        if (!self && !boot)
            html_printf(b,
                        " <button type=\"button\" class=\"danger small\" data-delete-user=\"%s\" "
                        "aria-label=\"Delete user %s\">Delete</button>",
                        name, name);
        kbuf_puts(b, "</td></tr>");
    }
    kbuf_puts(b,
              "</tbody></table></div><form id=\"new-user\" class=\"row-form\" novalidate>"
              "<h3 class=\"visually-hidden\">Add a user</h3><div class=\"field\"><label "
              "for=\"new-username\">New user</label><input id=\"new-username\" "
              "autocomplete=\"off\" autocapitalize=\"none\" spellcheck=\"false\" required "
              "placeholder=\"3 to 32 letters, digits, _ or .\"></div><div class=\"field\"><label "
              "for=\"new-user-password\">Password</label><input type=\"password\" "
              "id=\"new-user-password\" autocomplete=\"new-password\" minlength=\"8\" "
              "required></div><div class=\"field\"><label for=\"new-role\">Role</label><select "
              "id=\"new-role\"><option value=\"viewer\">viewer</option><option "
              "value=\"editor\">editor</option><option value=\"admin\">admin</option></select>"
              "</div><button type=\"submit\" class=\"primary\">Add user</button><p "
              "class=\"error\" id=\"new-user-error\" role=\"alert\" hidden></p></form></section>");
    json_decref(tmp.json);
}

void web_settings(service *svc, http_req *rq, http_resp *out)
{
    page p = {
        .svc = svc, .rq = rq, .title = "Settings", .tab = "settings", .script = "settings.js"};
    page_begin(&p);
    int admin = page_can(&p, ROLE_ADMIN);
    html_printf(&p.b,
                "<div class=\"page-head\"><h1>Settings</h1></div><div class=\"settings-grid%R\">",
                admin ? "" : " single");
    if (admin) users(&p.b, svc, rq);
    account(&p.b, svc, rq);
    kbuf_puts(&p.b, "</div>");
    page_end(&p, out);
}
