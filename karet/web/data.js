/* The Data page: run SQL (Ctrl+Enter), show the first 200 rows and the
   total, errors in place, and a chart of the result drawn here as SVG: a
   line chart when the result has a date or time column and numbers, a bar
   chart for a text column and a number. Saved queries load, save, delete.
   The query goes into the address (?sql=), so a result is a link. */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const slug = K.slug();
  const base = "/api/p/" + encodeURIComponent(slug);
  const { el, svg } = K;
  const sqlBox = document.getElementById("sql");
  const results = document.getElementById("results");
  const runButton = document.getElementById("run-sql");
  const SHOWN = 200;

  /* ---- running a query ---- */
  async function run() {
    const sql = sqlBox.value.trim();
    if (!sql) { sqlBox.focus(); return; }
    const url = new URL(location.href);
    url.searchParams.set("sql", sql);
    history.replaceState(null, "", url);
    results.replaceChildren(el("p", { class: "hint" }, "Running…"));
    const t0 = performance.now();
    const r = await K.api("POST", base + "/query", { sql });
    const ms = Math.round(performance.now() - t0);
    if (!r.ok) {
      const d = r.data || {};
      results.replaceChildren(el("div", { class: "notice error", role: "alert" },
        el("strong", {}, d.error === "query_error" ? "The query failed" : "The query was refused"), el("br"),
        el("span", { class: "mono" }, d.message || K.message(r))));
      return;
    }
    show(r.data, ms);
  }
  K.guard(runButton, run);
  sqlBox.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); if (!runButton.disabled) runButton.click(); }
  });

  /* ---- the result table ---- */
  const isNum = (t) => /^([cCsSiIlLfg]|d:)/.test(t || "");
  const isTime = (t) => /^t[ds]/.test(t || "");
  const isText = (t) => /^[uU]$/.test(t || "");
  /* A float as the API's JSON writes it (Python's repr): JavaScript's
     shortest digits, plain from 1e-4 to 1e16 with ".0" on a whole number
     (100.0, not 100), else d.ddde±XX (1e-07, 1e+21); -0.0 keeps its sign. */
  function floatText(v) {
    if (v === 0) return Object.is(v, -0) ? "-0.0" : "0.0";
    const [m, e] = v.toExponential().split("e");
    const exp = Number(e), sign = v < 0 ? "-" : "", digits = m.replace(/[-.]/g, "");
    if (exp < -4 || exp >= 16)
      return sign + digits[0] + (digits.length > 1 ? "." + digits.slice(1) : "") + "e" + (exp < 0 ? "-" : "+") + String(Math.abs(exp)).padStart(2, "0");
    if (exp < 0) return sign + "0." + "0".repeat(-exp - 1) + digits;
    return sign + digits.slice(0, exp + 1).padEnd(exp + 1, "0") + "." + (digits.slice(exp + 1) || "0");
  }
  const cellText = (v, t) => typeof v === "object" ? JSON.stringify(v) : typeof v === "number" && /^[fg]$/.test(t || "") ? floatText(v) : String(v);
  function guessType(rows, c) {
    for (const row of rows) {
      const v = row[c];
      if (v === null || v === undefined) continue;
      if (typeof v === "number") return "g";
      if (typeof v === "boolean") return "b";
      if (typeof v === "string" && /^\d{4}-\d\d-\d\d([T ][\d:.]+Z?)?$/.test(v)) return "tsu:";
      return "u";
    }
    return "n";
  }

  function show(data, ms) {
    const columns = data.columns || (data.rows && data.rows[0] ? Object.keys(data.rows[0]) : []);
    const rows = data.rows || [];
    const types = data.types && data.types.length === columns.length ? data.types : columns.map((c) => guessType(rows, c));
    const total = typeof data.rowCount === "number" ? Math.max(data.rowCount, rows.length) : rows.length;
    const shown = rows.slice(0, SHOWN);
    const more = total > shown.length || data.truncated;
    const head = el("div", { class: "results-head" }, el("h2", {}, "Result"),
      el("span", { class: "count", id: "row-count", "data-total": total },
        `${K.count(total)}${data.truncated ? "+" : ""} row${total === 1 ? "" : "s"}` +
        (more ? ` · the first ${K.count(shown.length)} shown` : "") + ` · ${ms} ms`));
    const table = el("table", { class: "grid" }, el("caption", { class: "visually-hidden" }, "Query result"),
      el("thead", {}, el("tr", {}, ...columns.map((c, i) => el("th", { scope: "col", class: isNum(types[i]) ? "num" : null }, c)))));
    const tbody = el("tbody");
    for (const row of shown) {
      tbody.append(el("tr", {}, ...columns.map((c, i) => {
        const v = row[c];
        if (v === null || v === undefined) return el("td", { class: "null" }, "null");
        return el("td", { class: isNum(types[i]) ? "num" : null }, cellText(v, types[i]));
      })));
    }
    table.append(tbody);
    const parts = [head, el("div", { class: "table-wrap" }, table)];
    if (!rows.length) parts.push(el("p", { class: "hint" }, "No rows."));
    const chart = drawChart(columns, types, shown);
    if (chart) parts.push(chart);
    results.replaceChildren(...parts);
  }

  /* ---- charts ---- */
  const PALETTE = ["#0b5cad", "#c2410c", "#17733a", "#7c3aed", "#b3261e"];
  /* Round axis ticks from lo to hi, about n of them. */
  function nice(lo, hi, n) {
    if (lo === hi) { lo -= 1; hi += 1; }
    const span = hi - lo, step0 = span / n, mag = Math.pow(10, Math.floor(Math.log10(step0)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => span / s <= n) || 10 * mag;
    const first = Math.floor(lo / step), last = Math.ceil(hi / step), ticks = [];
    for (let k = first; k <= last; k++) ticks.push(Number((k * step).toPrecision(12)));
    return { lo: ticks[0], hi: ticks[ticks.length - 1], ticks };
  }
  const fmtNum = (v) => Math.abs(v) >= 1e6 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(2) : Number(v.toPrecision(6)).toLocaleString("en-US");
  const toTime = (v) => { const t = Date.parse(typeof v === "string" && v.length === 10 ? v + "T00:00:00Z" : v); return isNaN(t) ? null : t; };
  function fmtTime(t, span) {
    const d = new Date(t), p = (n) => String(n).padStart(2, "0");
    const day = `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}`;
    return span < 2 * 86400000 ? `${p(d.getUTCHours())}:${p(d.getUTCMinutes())}` : day;
  }

  /* Numbers as the chart needs them: decimals arrive as exact strings. */
  function numeric(columns, types, rows) {
    const dec = columns.filter((c, i) => /^d:/.test(types[i] || ""));
    if (!dec.length) return rows;
    return rows.map((r) => { const o = { ...r }; for (const c of dec) if (typeof o[c] === "string") o[c] = Number(o[c]); return o; });
  }

  function drawChart(columns, types, rows) {
    rows = numeric(columns, types, rows);
    const nums = columns.map((c, i) => i).filter((i) => isNum(types[i]));
    const tIdx = columns.findIndex((c, i) => isTime(types[i]));
    const cIdx = columns.findIndex((c, i) => isText(types[i]));
    if (!rows.length || !nums.length) return null;
    if (tIdx >= 0) return lineChart(columns, tIdx, nums.slice(0, 5), rows);
    if (cIdx >= 0) return barChart(columns, cIdx, nums[0], rows);
    return null;
  }

  function frame(title, body) {
    return el("figure", { class: "card chart", id: "chart" }, body, el("figcaption", { class: "hint" }, title));
  }

  function lineChart(columns, t, ys, rows) {
    const W = 800, H = 300, L = 64, R = 16, T = 14, B = 34;
    const pts = rows.map((r) => [toTime(r[columns[t]]), ...ys.map((i) => r[columns[i]])]).filter((p) => p[0] !== null).sort((a, b) => a[0] - b[0]);
    if (!pts.length) return null;
    const vals = pts.flatMap((p) => p.slice(1)).filter((v) => typeof v === "number");
    if (!vals.length) return null;
    const y = nice(Math.min(0, ...vals), Math.max(...vals), 5);
    const x0 = pts[0][0], x1 = pts[pts.length - 1][0] === x0 ? x0 + 1 : pts[pts.length - 1][0];
    const sx = (v) => L + (W - L - R) * (v - x0) / (x1 - x0), sy = (v) => T + (H - T - B) * (1 - (v - y.lo) / (y.hi - y.lo));
    const names = ys.map((i) => columns[i]);
    const title = `${names.join(", ")} by ${columns[t]}`;
    const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `Line chart of ${title}` }, svg("title", {}, `Line chart of ${title}`));
    const axis = svg("g", { class: "axis" });
    for (const v of y.ticks) axis.append(svg("line", { class: "grid-line", x1: L, x2: W - R, y1: sy(v), y2: sy(v) }), svg("text", { x: L - 6, y: sy(v) + 4, "text-anchor": "end" }, fmtNum(v)));
    const n = Math.min(6, pts.length);
    for (let k = 0; k < n; k++) {
      const tv = n === 1 ? x0 : x0 + (x1 - x0) * k / (n - 1);
      axis.append(svg("text", { x: sx(tv), y: H - 10, "text-anchor": k === 0 ? "start" : k === n - 1 ? "end" : "middle" }, fmtTime(tv, x1 - x0)));
    }
    axis.append(svg("line", { x1: L, x2: W - R, y1: H - B, y2: H - B }));
    s.append(axis);
    ys.forEach((_, k) => {
      const line = pts.filter((p) => typeof p[k + 1] === "number").map((p) => `${sx(p[0]).toFixed(1)},${sy(p[k + 1]).toFixed(1)}`);
      s.append(svg("polyline", { class: "series", points: line.join(" "), stroke: PALETTE[k] }));
      if (pts.length <= 60) for (const p of pts) if (typeof p[k + 1] === "number") s.append(svg("circle", { cx: sx(p[0]), cy: sy(p[k + 1]), r: 2.5, fill: PALETTE[k] }, svg("title", {}, `${new Date(p[0]).toISOString()}: ${p[k + 1]}`)));
    });
    const legend = el("div", { class: "legend" }, ...names.map((nm, k) => { const sp = el("span", {}, nm); sp.style.setProperty("--c", PALETTE[k]); return sp; }));
    return frame(`Line chart: ${title}.`, el("div", {}, s, legend));
  }

  function barChart(columns, c, v, rows) {
    const data = rows.filter((r) => typeof r[columns[v]] === "number").slice(0, 30);
    if (!data.length) return null;
    const W = 800, rowH = 24, L = 180, R = 70, T = 8, H = T + data.length * rowH + 8;
    const values = data.map((r) => r[columns[v]]);
    const lo = Math.min(0, ...values), hi = Math.max(0, ...values), span = hi - lo || 1;
    const sx = (x) => L + (W - L - R) * (x - lo) / span;
    const title = `${columns[v]} by ${columns[c]}`;
    const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `Bar chart of ${title}` }, svg("title", {}, `Bar chart of ${title}`));
    const axis = svg("g", { class: "axis" });
    data.forEach((r, i) => {
      const y = T + i * rowH, val = r[columns[v]], label = r[columns[c]] === null ? "null" : String(r[columns[c]]);
      axis.append(svg("text", { x: L - 8, y: y + 16, "text-anchor": "end" }, label.length > 26 ? label.slice(0, 25) + "…" : label));
      const x0 = sx(Math.min(0, val)), x1 = sx(Math.max(0, val));
      s.append(svg("rect", { class: "bar", x: x0, y: y + 4, width: Math.max(1, x1 - x0), height: rowH - 8, fill: PALETTE[0], rx: 2 }, svg("title", {}, `${label}: ${val}`)));
      axis.append(svg("text", { x: x1 + 6, y: y + 16 }, fmtNum(val)));
    });
    axis.append(svg("line", { x1: sx(0), x2: sx(0), y1: T, y2: H - 8 }));
    s.append(axis);
    return frame(`Bar chart: ${title}${rows.length > data.length ? " (the first 30 rows)" : ""}.`, s);
  }

  /* ---- tables, saved queries ---- */
  document.addEventListener("click", async (e) => {
    const q = e.target.closest("[data-query]");
    if (q) { sqlBox.value = `SELECT * FROM ${q.dataset.query} LIMIT 100`; runButton.click(); return; }
    const load = e.target.closest("button.load[data-sql]");
    if (load) { sqlBox.value = load.dataset.sql; runButton.click(); return; }
    const del = e.target.closest("[data-delete-query]");
    if (del) {
      if (!(await K.confirm(`Delete the saved query ${del.dataset.name}?`, "Only the saved query goes; no data changes.", "Delete", true))) return;
      const r = await K.api("DELETE", base + "/queries/" + encodeURIComponent(del.dataset.deleteQuery));
      if (r.ok) { del.closest("li").remove(); K.toast("Deleted."); emptySaved(); }
      else K.toast("Not deleted: " + K.message(r), "error");
    }
  });
  function emptySaved() { document.getElementById("saved-empty").hidden = !!document.querySelector("#saved li"); }

  const save = document.getElementById("save-query");
  if (save) K.guard(save, async () => {
    const sql = sqlBox.value.trim();
    if (!sql) { K.toast("Write a query first.", "error"); sqlBox.focus(); return; }
    const name = await askName();
    if (!name) return;
    const r = await K.api("POST", base + "/queries", { name, sql });
    if (!r.ok) { K.toast("Not saved: " + K.message(r), "error"); return; }
    const q = r.data;
    document.getElementById("saved").append(el("li", {},
      el("button", { type: "button", class: "load", "data-sql": q.sql, title: q.sql }, q.name),
      el("button", { type: "button", class: "quiet icon-button", "data-delete-query": q.id, "data-name": q.name, "aria-label": "Delete saved query " + q.name }, "✕")));
    emptySaved();
    K.toast(`Saved as “${q.name}”.`);
  });
  function askName() {
    return new Promise((resolve) => {
      const input = el("input", { id: "query-name", maxlength: 100, required: true });
      const form = el("form", { method: "dialog" }, el("h2", {}, "Save query"),
        el("div", { class: "field" }, el("label", { for: "query-name" }, "Name"), input),
        el("div", { class: "actions" }, el("button", { type: "button", value: "cancel" }, "Cancel"), el("button", { type: "submit", class: "primary" }, "Save")));
      const d = el("dialog", { "aria-label": "Save query" }, form);
      const done = (v) => { d.close(); d.remove(); resolve(v); };
      form.addEventListener("submit", (e) => { e.preventDefault(); const v = input.value.trim(); if (v) done(v); else input.focus(); });
      form.querySelector("button[value=cancel]").addEventListener("click", () => done(null));
      d.addEventListener("cancel", (e) => { e.preventDefault(); done(null); });
      document.body.append(d);
      d.showModal();
      input.focus();
    });
  }

  /* When a run of the pipeline completes, its tables' row counts change:
     the table list is fetched again (it is rendered by the server). */
  const tables = document.getElementById("tables");
  if (tables && "EventSource" in window) {
    let timer = null;
    const refresh = async () => {
      const r = await fetch(tables.dataset.fragment, { credentials: "same-origin", headers: { Accept: "text/html" } });
      if (!r.ok || r.redirected) return;
      const doc = new DOMParser().parseFromString(await r.text(), "text/html");
      const fresh = doc.getElementById("tables");
      if (!fresh) return;
      const open = new Set([...tables.querySelectorAll("details[open]")].map((d) => d.closest("li").dataset.table));
      const list = document.getElementById("table-list"), freshList = fresh.querySelector("#table-list");
      /* Only the tables whose line changed are put in (each is signed by
         the server): the others stay as the reader left them. */
      const added = list && freshList ? K.patchList(list, freshList, (li) => li.dataset.table) : null;
      if (!added) tables.replaceChildren(...fresh.childNodes);
      for (const li of added || tables.querySelectorAll("li[data-table]")) if (open.has(li.dataset.table)) li.querySelector("details").open = true;
      K.localTimes(tables);
    };
    const es = new EventSource(base + "/jobs/events");
    es.onmessage = (e) => {
      let job;
      try { job = JSON.parse(e.data); } catch (x) { return; }
      if (job.status !== "completed") return;
      clearTimeout(timer);
      timer = setTimeout(refresh, 200);
    };
    window.addEventListener("pagehide", () => es.close());
  }

  if (sqlBox.dataset.autorun && sqlBox.value.trim()) run();
});
