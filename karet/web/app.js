/* What every page shares: calls to the API, building DOM from data (text
   always through textContent, never innerHTML), dialogs, toasts, local
   times. Plain JavaScript, no build step. */
"use strict";

const K = (() => {
  const body = () => document.body.dataset;

  /* JSON whose numbers keep their kind through the page. JavaScript reads
     2.0 as 2, and a pipeline's num 2.0 (a float) saved as 2 (an integer)
     would change what it computes. A whole number written with a fraction
     or an exponent is remembered by the object holding it and written back
     with ".0", where the browser can (JSON.parse's source text, JSON.rawJSON);
     elsewhere numbers are plain JavaScript numbers, as before. */
  const floats = new WeakMap();
  function parseJSON(text) {
    return JSON.parse(text, function (key, value, context) {
      if (typeof value === "number" && Number.isInteger(value) && context && /[.eE]/.test(context.source)) {
        if (!floats.has(this)) floats.set(this, new Set());
        floats.get(this).add(key);
      }
      return value;
    });
  }
  function stringify(value, space) {
    const keep = function (key, x) {
      return typeof x === "number" && Number.isInteger(x) && Math.abs(x) < 1e21 && floats.get(this)?.has(key) ? JSON.rawJSON((Object.is(x, -0) ? "-0" : String(x)) + ".0") : x;
    };
    return JSON.stringify(value, JSON.rawJSON ? keep : undefined, space);
  }

  /* Calls the API. Resolves {ok, status, data, headers}; a session that
     expired sends the page to the sign-in form. */
  async function api(method, path, payload, opts = {}) {
    const init = { method, credentials: "same-origin", headers: { ...(opts.headers || {}) } };
    if (payload !== undefined && payload !== null) {
      if (opts.raw) {
        init.body = payload;
      } else {
        init.headers["Content-Type"] = "application/json";
        init.body = stringify(payload);
      }
    }
    let r;
    try {
      r = await fetch(path, init);
    } catch (e) {
      return { ok: false, status: 0, data: { error: "network", message: "The server did not answer: " + e.message } };
    }
    let data = null;
    const type = r.headers.get("Content-Type") || "";
    if (type.includes("application/json")) data = await r.text().then(parseJSON).catch(() => null);
    if (r.status === 401 && !opts.noRedirect) {
      location.href = "/sign-in?next=" + encodeURIComponent(location.pathname + location.search);
    }
    if (!r.ok && !data) data = { error: "http_" + r.status, message: "The server answered " + r.status + "." };
    return { ok: r.ok, status: r.status, data, headers: r.headers };
  }

  function message(res) {
    const d = res.data || {};
    return d.message || d.error || "Something went wrong (" + res.status + ").";
  }

  /* el("a", {href: x, class: "y", onclick: f}, "text", child...) */
  function el(tag, attrs, ...children) {
    const ns = attrs && attrs.ns;
    const n = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "ns" || v === undefined || v === null || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") n.addEventListener(k.slice(2), v);
      else if (k === "text") n.textContent = v;
      else if (k === "dataset") Object.assign(n.dataset, v);
      else if (v === true) n.setAttribute(k, "");
      else n.setAttribute(k, String(v));
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      n.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return n;
  }

  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, ...children) {
    return el(tag, { ...(attrs || {}), ns: SVG }, ...children);
  }

  function toast(text, kind) {
    const box = document.getElementById("toasts");
    if (!box) return;
    const t = el("div", { class: "toast" + (kind ? " " + kind : ""), role: kind === "error" ? "alert" : null }, text);
    box.append(t);
    setTimeout(() => t.remove(), kind === "error" ? 9000 : 4000);
  }

  /* A modal question; resolves true when confirmed. */
  function confirmDialog(title, text, confirmLabel, danger) {
    return new Promise((resolve) => {
      const ok = el("button", { type: "button", class: danger ? "danger solid" : "primary" }, confirmLabel || "OK");
      const cancel = el("button", { type: "button" }, "Cancel");
      const id = "dlg-" + Math.random().toString(36).slice(2);
      const d = el("dialog", { "aria-labelledby": id + "-t", "aria-describedby": id + "-d" },
        el("h2", { id: id + "-t" }, title), el("p", { id: id + "-d" }, text),
        el("div", { class: "actions" }, cancel, ok));
      const done = (v) => { d.close(); d.remove(); resolve(v); };
      ok.addEventListener("click", () => done(true));
      cancel.addEventListener("click", () => done(false));
      d.addEventListener("cancel", (e) => { e.preventDefault(); done(false); });
      document.body.append(d);
      d.showModal();
      cancel.focus();
    });
  }

  const pad = (n) => String(n).padStart(2, "0");
  function localTime(iso) {
    const d = new Date(iso);
    if (isNaN(d)) return "";
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " +
      pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds());
  }
  function timeEl(iso) {
    if (!iso) return document.createTextNode("—");
    return el("time", { datetime: iso, title: iso }, localTime(iso));
  }
  function ago(iso) {
    const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
    if (!(s >= 0)) return localTime(iso);
    if (s < 45) return "just now";
    const m = Math.round(s / 60);
    if (m < 60) return m + " min ago";
    const h = Math.round(m / 60);
    if (h < 36) return h + " h ago";
    return Math.round(h / 24) + " days ago";
  }
  /* Server-rendered <time> (UTC text) into the reader's local time, or, with
     data-rel, into how long ago (the local time in its title). */
  function localTimes(root) {
    for (const t of (root || document).querySelectorAll("time[datetime]")) {
      if (t.dataset.local) continue;
      const iso = t.getAttribute("datetime"), s = localTime(iso);
      if (!s) continue;
      t.title = s + " (" + iso + ")";
      t.textContent = "rel" in t.dataset ? ago(iso) : s;
      t.dataset.local = "1";
    }
  }

  function duration(ms) {
    if (!(ms >= 0)) return "—";
    if (ms < 1000) return ms + " ms";
    const s = ms / 1000;
    if (s < 60) return (s < 10 ? s.toFixed(1) : Math.round(s)) + " s";
    const m = Math.floor(s / 60), r = Math.round(s % 60);
    if (m < 60) return m + " min " + r + " s";
    return Math.floor(m / 60) + " h " + (m % 60) + " min";
  }
  const count = (n) => (n === null || n === undefined) ? "—" : Number(n).toLocaleString("en-US").replace(/,/g, "\u202f");
  function bytes(n) {
    const u = ["B", "KB", "MB", "GB", "TB"];
    let v = Number(n) || 0, i = 0;
    while (v >= 1000 && i < u.length - 1) { v /= 1000; i++; }
    return i === 0 ? v + " B" : (v < 10 ? v.toFixed(1) : Math.round(v)) + " " + u[i];
  }

  /* Runs fn(button) once at a time: the button is disabled before the
     first await, so a double click cannot start it twice. */
  /* One action per click: none while the last is in flight, and none for
   * the second click of a double click (detail 2), which may come after a
   * fast answer has let the button go. */
  function guard(button, fn) {
    button.addEventListener("click", async (e) => {
      e.preventDefault();
      if (button.dataset.busy || e.detail > 1) return;
      button.dataset.busy = "1";
      button.disabled = true;
      try { await fn(button, e); } finally { delete button.dataset.busy; button.disabled = false; }
    });
  }

  /* Brings the live list `live` to `fresh` (the server's new rendering of
     it): children keyed by `key`, an element whose server signature
     (data-sig) is unchanged stays as it is, where the reader may be
     pointing, reading or have opened it; only new and changed ones go in.
     Returns the elements put in. */
  function patchList(live, fresh, key) {
    const old = new Map();
    for (const c of live.children) if (key(c)) old.set(key(c), c);
    const added = [];
    let i = 0;
    for (const f of [...fresh.children]) {
      const o = old.get(key(f));
      const keep = o && o.dataset.sig && o.dataset.sig === f.dataset.sig ? o : f;
      if (keep === f) added.push(f);
      if (live.children[i] !== keep) live.insertBefore(keep, live.children[i] || null);
      i++;
    }
    while (live.children.length > i) live.lastElementChild.remove();
    return added;
  }

  function can(role) {
    const order = { none: 0, viewer: 1, editor: 2, admin: 3 };
    return (order[body().role] || 0) >= order[role];
  }

  document.addEventListener("DOMContentLoaded", () => {
    localTimes(document);
    const out = document.getElementById("sign-out");
    if (out) guard(out, async () => {
      await api("POST", "/api/auth/sign-out", null, { noRedirect: true });
      location.href = "/sign-in";
    });
  });

  return { api, parseJSON, stringify, message, el, svg, toast, confirm: confirmDialog, timeEl, localTime, localTimes, duration, count, bytes, guard, patchList, can, slug: () => body().slug };
})();
