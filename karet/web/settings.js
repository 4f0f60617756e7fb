/* Settings: one's own password; for admins, roles, new passwords, new and
   deleted users. Every change goes through the API, which checks the role
   again. */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const { el } = K;
  const $ = (id) => document.getElementById(id);
  const fail = (box, text) => { box.textContent = text; box.hidden = false; };

  /* ---- one's own password ---- */
  const pw = $("password-form");
  if (pw) {
    const err = $("password-error"), button = pw.querySelector("button[type=submit]");
    pw.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (button.disabled) return;
      err.hidden = true;
      const current = $("current-password").value, next = $("new-password").value, again = $("repeat-password").value;
      if (!current) return fail(err, "Enter your current password."), $("current-password").focus();
      if (next.length < 8) return fail(err, "The new password needs at least 8 characters."), $("new-password").focus();
      if (next !== again) return fail(err, "The two new passwords differ."), $("repeat-password").focus();
      button.disabled = true;
      const r = await K.api("PATCH", "/api/account", { currentPassword: current, newPassword: next });
      button.disabled = false;
      if (!r.ok) return fail(err, K.message(r));
      pw.reset();
      K.toast("Password changed. Your other sessions have ended.");
    });
  }

  const table = $("users");
  if (!table) return;
  const userPath = (u) => "/api/users/" + encodeURIComponent(u);

  /* ---- roles ---- */
  table.addEventListener("focusin", (e) => { if (e.target.matches("select[data-role-of]")) e.target.dataset.was = e.target.value; });
  table.addEventListener("change", async (e) => {
    const s = e.target.closest("select[data-role-of]");
    if (!s) return;
    const user = s.dataset.roleOf, was = s.dataset.was || s.querySelector("option[selected]").value;
    s.disabled = true;
    const r = await K.api("PATCH", userPath(user), { role: s.value });
    s.disabled = false;
    if (r.ok) { s.dataset.was = s.value; K.toast(`${user} is now ${s.value}.`); }
    else { s.value = was; K.toast("Role not changed: " + K.message(r), "error"); }
  });

  /* ---- new password, delete ---- */
  table.addEventListener("click", async (e) => {
    const reset = e.target.closest("button[data-reset]");
    if (reset) {
      const user = reset.dataset.reset;
      const password = await askPassword(user);
      if (!password) return;
      const r = await K.api("PATCH", userPath(user), { password });
      K.toast(r.ok ? `New password set for ${user}; their sessions have ended.` : "Not changed: " + K.message(r), r.ok ? null : "error");
      return;
    }
    const del = e.target.closest("button[data-delete-user]");
    if (del) {
      const user = del.dataset.deleteUser;
      if (!(await K.confirm(`Delete ${user}?`, `${user} can no longer sign in. Their pipelines, runs and saved queries stay.`, "Delete", true))) return;
      const r = await K.api("DELETE", userPath(user));
      if (r.ok) { del.closest("tr").remove(); K.toast(`${user} deleted.`); }
      else K.toast("Not deleted: " + K.message(r), "error");
    }
  });

  function askPassword(user) {
    return new Promise((resolve) => {
      const input = el("input", { type: "password", id: "reset-password", minlength: 8, autocomplete: "new-password", required: true });
      const err = el("p", { class: "error", role: "alert", hidden: true });
      const form = el("form", {}, el("h2", {}, `New password for ${user}`),
        el("div", { class: "field" }, el("label", { for: "reset-password" }, "New password (at least 8 characters)"), input), err,
        el("div", { class: "actions" }, el("button", { type: "button", value: "cancel" }, "Cancel"), el("button", { type: "submit", class: "primary" }, "Set password")));
      const d = el("dialog", { "aria-label": `New password for ${user}` }, form);
      const done = (v) => { d.close(); d.remove(); resolve(v); };
      form.addEventListener("submit", (e) => { e.preventDefault(); if (input.value.length >= 8) done(input.value); else { err.textContent = "At least 8 characters."; err.hidden = false; input.focus(); } });
      form.querySelector("button[value=cancel]").addEventListener("click", () => done(null));
      d.addEventListener("cancel", (e) => { e.preventDefault(); done(null); });
      document.body.append(d);
      d.showModal();
      input.focus();
    });
  }

  /* ---- a new user ---- */
  const form = $("new-user"), err = $("new-user-error"), add = form.querySelector("button[type=submit]");
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (add.disabled) return;
    err.hidden = true;
    const username = $("new-username").value.trim(), password = $("new-user-password").value, role = $("new-role").value;
    if (!/^[A-Za-z0-9_.]{3,32}$/.test(username)) return fail(err, "A username is 3 to 32 letters, digits, underscores or dots."), $("new-username").focus();
    if (password.length < 8) return fail(err, "The password needs at least 8 characters."), $("new-user-password").focus();
    add.disabled = true;
    const r = await K.api("POST", "/api/users", { username, password, role });
    add.disabled = false;
    if (!r.ok) return fail(err, K.message(r));
    location.reload();
  });
});
