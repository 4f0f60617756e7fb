/* The pipelines page: creating a pipeline, blank or from a template. */
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("new-pipeline");
  if (!form) return;
  const err = document.getElementById("new-error");
  const button = form.querySelector("button[type=submit]");
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (button.disabled) return;
    const name = form.name.value.trim();
    if (!name) {
      err.textContent = "Give the pipeline a name.";
      err.hidden = false;
      form.name.setAttribute("aria-invalid", "true");
      form.name.focus();
      return;
    }
    form.name.removeAttribute("aria-invalid");
    button.disabled = true;
    const r = await K.api("POST", "/api/pipelines", { name, template: form.template.value });
    if (r.ok) {
      location.href = "/p/" + encodeURIComponent(r.data.pipeline) + "/editor";
      return;
    }
    button.disabled = false;
    err.textContent = K.message(r);
    err.hidden = false;
  });
});
