/* The sign-in form: posts the credentials, then goes where the user was headed. */
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("sign-in-form");
  const err = document.getElementById("sign-in-error");
  const button = form.querySelector("button[type=submit]");
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (button.disabled) return;
    const username = form.username.value.trim(), password = form.password.value;
    if (!username || !password) {
      err.textContent = "Enter your username and password.";
      err.hidden = false;
      (username ? form.password : form.username).focus();
      return;
    }
    button.disabled = true;
    err.hidden = true;
    const r = await K.api("POST", "/api/auth/sign-in/username", { username, password }, { noRedirect: true });
    button.disabled = false;
    if (r.ok) {
      location.href = form.dataset.next || "/pipelines";
      return;
    }
    err.textContent = r.status === 401 ? "Wrong username or password." : K.message(r);
    err.hidden = false;
    form.password.select();
  });
});
