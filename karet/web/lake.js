/* The lake browser: upload by picking or dropping files (one at a time,
   each with a progress bar), delete after a confirmation, and the listing
   fetched again from the server after each change. */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const region = document.getElementById("lake-live");
  const zone = document.getElementById("dropzone");
  const picker = document.getElementById("upload-files");
  const folder = document.getElementById("upload-folder");
  const list = document.getElementById("uploads");
  const { el } = K;

  async function refresh() {
    const r = await fetch(region.dataset.fragment, { credentials: "same-origin", headers: { Accept: "text/html" } });
    if (r.redirected && new URL(r.url).pathname === "/sign-in") { location.reload(); return; }
    if (r.ok) { region.innerHTML = await r.text(); K.localTimes(region); } // rendered and escaped by the server
  }

  /* ---- delete ---- */
  region.addEventListener("click", async (e) => {
    const b = e.target.closest("button[data-delete]");
    if (!b || b.disabled) return;
    const key = b.dataset.delete;
    if (!(await K.confirm("Delete " + key.split("/").pop() + "?", "The file " + key + " is removed from the lake. A pipeline that read it reads every file again on its next run.", "Delete", true))) return;
    b.disabled = true;
    const r = await K.api("DELETE", "/api/lake?key=" + encodeURIComponent(key));
    if (r.ok) { K.toast("Deleted " + key + "."); await refresh(); }
    else { b.disabled = false; K.toast("Not deleted: " + K.message(r), "error"); }
  });

  if (!zone) return;

  /* ---- upload ---- */
  function put(key, file, bar, status) {
    return new Promise((resolve) => {
      const x = new XMLHttpRequest();
      x.open("PUT", "/api/lake?key=" + encodeURIComponent(key));
      x.upload.onprogress = (e) => { if (e.lengthComputable) { bar.max = e.total; bar.value = e.loaded; status.textContent = Math.round(100 * e.loaded / e.total) + "%"; } };
      x.onload = () => {
        let body = null;
        try { body = JSON.parse(x.responseText); } catch (e) { /* not JSON */ }
        resolve({ ok: x.status >= 200 && x.status < 300, status: x.status, data: body || {} });
      };
      x.onerror = () => resolve({ ok: false, status: 0, data: { message: "the connection failed" } });
      x.send(file);
    });
  }

  let queue = Promise.resolve();
  function upload(files) {
    let dir = folder.value.trim().replace(/^\/+/, "");
    if (dir && !dir.endsWith("/")) dir += "/";
    for (const file of files) {
      const key = dir + file.name;
      const bar = el("progress", { max: Math.max(file.size, 1), value: 0, "aria-label": "Upload of " + file.name });
      const status = el("span", { class: "hint" }, "waiting");
      list.append(el("li", {}, el("span", { class: "mono" }, key), bar, status));
      queue = queue.then(async () => {
        status.textContent = "0%";
        const r = await put(key, file, bar, status);
        if (r.ok) {
          bar.value = bar.max;
          const runs = (r.data.scheduled || []);
          status.textContent = "done" + (runs.length ? " · run of " + runs.join(", ") + " scheduled" : "");
        } else {
          status.textContent = "failed: " + (r.data.message || r.data.error || "status " + r.status);
          status.className = "error";
        }
        await refresh();
      });
    }
  }
  picker.addEventListener("change", () => { upload([...picker.files]); picker.value = ""; });
  for (const t of ["dragenter", "dragover"]) zone.addEventListener(t, (e) => { e.preventDefault(); zone.classList.add("over"); });
  for (const t of ["dragleave", "drop"]) zone.addEventListener(t, () => zone.classList.remove("over"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    if (e.dataTransfer && e.dataTransfer.files.length) upload([...e.dataTransfer.files]);
  });
});
