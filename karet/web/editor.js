/* The pipeline editor: the config as a graph of sources and dimensions ->
   mappings -> tables (SVG drawn here), a panel per node, expressions in
   their text form (the server converts text and syntax tree both ways),
   validation shown at each node, save with conflict detection, and the
   history of saved versions with a diff and revert. */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const data = K.parseJSON(document.getElementById("editor-data").textContent);
  const slug = K.slug();
  const canEdit = !!data.canEdit;
  const base = "/api/p/" + encodeURIComponent(slug);
  const $ = (id) => document.getElementById(id);
  const { el, svg } = K;

  const LISTS = { source: "source_containers", dimension: "dimensions", mapping: "mappings", table: "analytic_tables" };
  const KIND_NAME = { source: "Source", dimension: "Dimension", mapping: "Mapping", table: "Table" };
  const TYPES = ["string", "int64", "float64", "number", "bool", "date"];

  let cfg, version, dirty = false, problems = [], selected = null, uid = 0;
  const nid = () => "f" + (++uid);

  /* ---- expressions: text per (object, field), converted by the server ---- */
  const texts = new WeakMap();
  const pendingTexts = new Set();
  function exprState(owner, field) {
    let m = texts.get(owner);
    if (!m) { m = {}; texts.set(owner, m); }
    if (!m[field]) m[field] = { owner, field, text: "", error: null, pos: null, timer: null };
    return m[field];
  }
  function unescapePtr(s) { return s.replace(/~1/g, "/").replace(/~0/g, "~"); }
  function resolve(ptr) {
    const parts = ptr.split("/").slice(1).map(unescapePtr);
    let o = cfg;
    for (let i = 0; i < parts.length - 1 && o; i++) o = o[parts[i]];
    return { owner: o, field: parts[parts.length - 1] };
  }
  function loadTexts(map) {
    for (const [ptr, text] of Object.entries(map || {})) {
      const { owner, field } = resolve(ptr);
      if (owner && typeof owner === "object") exprState(owner, field).text = text;
    }
  }
  /* Every expression location of the config: [owner, field, required]. */
  function expressionSlots(c) {
    const out = [];
    for (const s of c.source_containers || []) if (s.record_filter) out.push([s, "record_filter"]);
    for (const m of c.mappings || []) {
      if (m.where) out.push([m, "where"]);
      for (const col of m.columns || []) if (col.expr) out.push([col, "expr"]);
    }
    return out;
  }
  async function formatAll() {
    const slots = expressionSlots(cfg);
    if (!slots.length) return;
    const r = await K.api("POST", "/api/expressions/format", { exprs: slots.map(([o, f]) => o[f]) });
    if (!r.ok) return;
    r.data.results.forEach((res, i) => {
      const [o, f] = slots[i];
      exprState(o, f).text = res.text !== undefined ? res.text : JSON.stringify(o[f]);
    });
  }
  function required(state) { return state.field === "expr"; }
  /* Parses sent and not yet applied (a typing pause's), each with its states. */
  const parsing = new Map();
  /* Reads the given (or all pending) texts into trees; true when all read.
   * All pending: first waits for the parses in flight, whose trees are not
   * in cfg yet (a Validate or Save right after typing must not send the old
   * tree). */
  async function parseTexts(states) {
    const awaited = [];
    if (!states) {
      for (const [done, sts] of [...parsing]) {
        await done;
        awaited.push(...sts);
      }
      states = [...pendingTexts];
    }
    const todo = [];
    for (const st of states) {
      clearTimeout(st.timer);
      pendingTexts.delete(st);
      if (!st.text.trim()) {
        if (required(st)) {
          st.error = "Write an expression: a source column's name is the simplest.";
          st.pos = null;
        } else {
          st.error = null;
          delete st.owner[st.field];
        }
        continue;
      }
      todo.push(st);
    }
    if (todo.length) {
      const sent = todo.map((s) => s.text);
      let finished;
      const done = new Promise((resolve) => { finished = resolve; });
      parsing.set(done, todo);
      try {
        const r = await K.api("POST", "/api/expressions/parse", { texts: sent });
        if (!r.ok) { K.toast("Could not read the expressions: " + K.message(r), "error"); return false; }
        r.data.results.forEach((res, i) => {
          const st = todo[i];
          if (st.text !== sent[i]) return; /* typed again since: pending again */
          if (res.expr) { st.owner[st.field] = res.expr; st.error = null; st.pos = null; }
          else { st.error = res.error; st.pos = res.position; }
        });
      } finally {
        parsing.delete(done);
        finished();
      }
    }
    for (const st of states) showExprError(st);
    renderGraph();
    return states.concat(awaited).every((s) => !s.error);
  }
  function showExprError(st) {
    const box = document.querySelector(`[data-expr-id="${st.domId}"]`);
    const input = st.domId && document.getElementById(st.domId);
    if (!box || !input) return;
    box.textContent = st.error ? st.error + (st.pos !== null && st.pos !== undefined ? ` (at character ${st.pos + 1})` : "") : "";
    box.hidden = !st.error;
    if (st.error) input.setAttribute("aria-invalid", "true"); else input.removeAttribute("aria-invalid");
  }

  /* ---- the config and its state ---- */
  function normalise(c) {
    c = c && typeof c === "object" ? c : {};
    if (c.version === undefined) c.version = 1;
    for (const k of Object.values(LISTS)) if (!Array.isArray(c[k])) c[k] = [];
    return c;
  }
  function setDirty(v) {
    dirty = v;
    const s = $("save-state");
    s.textContent = dirty ? "Unsaved changes" : "Saved · v" + version;
  }
  function changed() { setDirty(true); renderGraph(); }
  window.addEventListener("beforeunload", (e) => { if (dirty && canEdit) { e.preventDefault(); e.returnValue = ""; } });

  function nodeOf(path) {
    const m = /^\/(source_containers|dimensions|mappings|analytic_tables)\/(\d+)/.exec(path || "");
    if (!m) return null;
    const kind = Object.keys(LISTS).find((k) => LISTS[k] === m[1]);
    return { kind, index: Number(m[2]) };
  }
  const keyOf = (n) => n.kind + ":" + n.index;
  function problemsAt(kind, index) {
    return problems.filter((p) => { const n = nodeOf(p.path); return n && n.kind === kind && n.index === index; });
  }
  function textErrorsAt(kind, index) {
    const item = cfg[LISTS[kind]][index];
    let n = 0;
    const check = (o, f) => { const m = texts.get(o); if (m && m[f] && m[f].error) n++; };
    if (kind === "source") check(item, "record_filter");
    if (kind === "mapping") { check(item, "where"); for (const c of item.columns || []) check(c, "expr"); }
    return n;
  }
  function dimsUsed(node, out) {
    if (!node || typeof node !== "object") return out;
    if (node.kind === "dim_ref" && typeof node.dim_id === "string") out.add(node.dim_id);
    for (const v of Object.values(node)) {
      if (Array.isArray(v)) v.forEach((x) => dimsUsed(x, out));
      else if (v && typeof v === "object") dimsUsed(v, out);
    }
    return out;
  }

  /* ---- the graph ---- */
  const W = 214, H = 60, COLX = [24, 300, 576], ROW = 78, TOP = 44;
  const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);

  function nodeLabel(kind, item) {
    const title = item.name || item.id || "(no id)";
    if (kind === "source") return [`SOURCE · ${(item.format || "csv").toUpperCase()}`, title, item.path_prefix || "no folder yet"];
    if (kind === "dimension") return ["DIMENSION", title, (item.match === "keyword_substring" ? "keyword match" : "exact match") + (item.rows && item.rows.path_prefix !== undefined ? " · from a CSV" : "")];
    if (kind === "mapping") {
      const n = (item.columns || []).length;
      return ["MAPPING", title, `${n} column${n === 1 ? "" : "s"}${item.where ? " · where" : ""}`];
    }
    const n = (item.schema || []).length;
    const keys = (item.partition_keys || []).length ? " · by " + item.partition_keys.join(", ") : "";
    return ["TABLE", title, `${n} column${n === 1 ? "" : "s"}${keys}`];
  }

  function renderGraph() {
    const box = $("graph");
    const pos = {};
    const place = (kind, col, startRow) => cfg[LISTS[kind]].forEach((_, i) => { pos[kind + ":" + i] = { x: COLX[col], y: TOP + (startRow + i) * ROW }; });
    place("source", 0, 0);
    place("dimension", 0, cfg.source_containers.length + (cfg.dimensions.length && cfg.source_containers.length ? 0.4 : 0));
    place("mapping", 1, 0);
    place("table", 2, 0);
    const rows = Math.max(cfg.source_containers.length + cfg.dimensions.length + 0.4, cfg.mappings.length, cfg.analytic_tables.length, 1);
    const height = TOP + rows * ROW + 10, width = COLX[2] + W + 24;
    const s = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "group", "aria-label": "Pipeline graph: sources and dimensions feed mappings, which fill tables" });
    ["SOURCES & DIMENSIONS", "MAPPINGS", "TABLES"].forEach((t, i) => s.append(svg("text", { x: COLX[i], y: 22, class: "col-head" }, t)));
    const edges = svg("g", { "aria-hidden": "true" });
    s.append(edges);
    const edge = (a, b) => {
      if (!pos[a] || !pos[b]) return;
      const x1 = pos[a].x + W, y1 = pos[a].y + H / 2, x2 = pos[b].x, y2 = pos[b].y + H / 2, mx = (x1 + x2) / 2;
      edges.append(svg("path", { class: "edge", d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}` }));
    };
    const idx = (kind, id) => cfg[LISTS[kind]].findIndex((x) => x.id === id);
    cfg.mappings.forEach((m, i) => {
      const si = idx("source", m.source_container_id), ti = idx("table", m.analytic_table_id);
      if (si >= 0) edge("source:" + si, "mapping:" + i);
      if (ti >= 0) edge("mapping:" + i, "table:" + ti);
      for (const d of dimsUsed(m, new Set())) { const di = idx("dimension", d); if (di >= 0) edge("dimension:" + di, "mapping:" + i); }
    });
    const colors = { source: "#0b5cad", dimension: "#7a4f00", mapping: "#5b3fa8", table: "#17733a" };
    for (const kind of Object.keys(LISTS)) {
      cfg[LISTS[kind]].forEach((item, i) => {
        const key = kind + ":" + i, p = pos[key];
        const [k, title, sub] = nodeLabel(kind, item);
        const nErr = problemsAt(kind, i).length + textErrorsAt(kind, i);
        const isSel = selected && keyOf(selected) === key;
        const g = svg("g", {
          class: "node" + (isSel ? " selected" : "") + (nErr ? " has-error" : ""), transform: `translate(${p.x},${p.y})`,
          tabindex: 0, role: "button", "data-node": key, "aria-pressed": isSel ? "true" : "false",
          "aria-label": `${KIND_NAME[kind]} ${title}${nErr ? `, ${nErr} problem${nErr === 1 ? "" : "s"}` : ""}`,
        });
        g.append(svg("rect", { class: "box", width: W, height: H, rx: 8 }),
          svg("rect", { class: "band", width: 5, height: H - 2, x: 1, y: 1, rx: 2, fill: colors[kind] }),
          svg("text", { x: 14, y: 17, class: "kind" }, k),
          svg("text", { x: 14, y: 35, class: "title" }, clip(title, 26)),
          svg("text", { x: 14, y: 51, class: "sub" }, clip(sub, 32)));
        if (nErr) g.append(svg("circle", { cx: W - 12, cy: 12, r: 9, class: "err-badge" }), svg("text", { x: W - 12, y: 16, "text-anchor": "middle", class: "err-count" }, String(nErr)));
        g.addEventListener("click", () => select(kind, i));
        g.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(kind, i, true); } });
        s.append(g);
      });
    }
    const hadFocus = document.activeElement && document.activeElement.dataset && document.activeElement.dataset.node;
    box.replaceChildren(s);
    if (!cfg.source_containers.length && !cfg.mappings.length && !cfg.analytic_tables.length && !cfg.dimensions.length) {
      box.append(el("p", { class: "hint empty-graph" }, canEdit ? "This pipeline is empty: add a source, a table and a mapping between them with the buttons above." : "This pipeline is empty."));
    }
    if (hadFocus) { const n = box.querySelector(`[data-node="${hadFocus}"]`); if (n) n.focus(); }
  }

  function select(kind, index, focusPanel) {
    selected = kind ? { kind, index } : null;
    renderGraph();
    renderPanel();
    if (focusPanel) { const h = $("panel").querySelector("h2"); if (h) { h.tabIndex = -1; h.focus(); } }
  }

  /* ---- panel building blocks ---- */
  const ro = !canEdit;
  function field(label, control, path, hint) {
    const id = control.id || (control.id = nid());
    const f = el("div", { class: "field", "data-path": path }, el("label", { for: id }, label), control);
    if (hint) f.append(el("p", { class: "hint" }, hint));
    return f;
  }
  function input(owner, key, opts = {}) {
    const i = el("input", { value: owner[key] === undefined || owner[key] === null ? "" : owner[key], placeholder: opts.placeholder, readonly: ro, class: opts.mono ? "mono" : null, "aria-label": opts.aria, spellcheck: "false", list: opts.list });
    i.addEventListener("input", () => {
      const v = i.value;
      const old = owner[key];
      if (v === "" && opts.optional) delete owner[key]; else owner[key] = opts.number ? Number(v) : v;
      if (opts.onchange) opts.onchange(v, old);
      changed();
    });
    return i;
  }
  function select_(owner, key, options, opts = {}) {
    const s = el("select", { disabled: ro, "aria-label": opts.aria });
    for (const o of options) {
      const [value, label] = Array.isArray(o) ? o : [o, o];
      s.append(el("option", { value, selected: (owner[key] === undefined ? opts.dflt : owner[key]) === value }, label));
    }
    s.addEventListener("change", () => { owner[key] = s.value; if (opts.onchange) opts.onchange(s.value); changed(); });
    return s;
  }
  function exprInput(owner, fieldName, aria, placeholder) {
    const st = exprState(owner, fieldName);
    if (!st.text && owner[fieldName] && !st.error) st.text = JSON.stringify(owner[fieldName]);
    const id = nid();
    st.domId = id;
    const i = el("input", { id, class: "expr-input", value: st.text, readonly: ro, "aria-label": aria, placeholder, spellcheck: "false", autocomplete: "off", "aria-describedby": id + "-err" });
    i.addEventListener("input", () => {
      st.text = i.value;
      pendingTexts.add(st);
      setDirty(true);
      clearTimeout(st.timer);
      st.timer = setTimeout(() => parseTexts([st]), 350);
    });
    const err = el("p", { class: "error", id: id + "-err", "data-expr-id": id, role: "alert", hidden: !st.error }, st.error || "");
    return [i, err];
  }
  function removeButton(label, onclick) {
    return el("button", { type: "button", class: "quiet icon-button", "aria-label": label, title: label, onclick }, "✕");
  }
  function csv(list) { return (list || []).join(", "); }
  function listInput(owner, key, aria, placeholder) {
    const i = el("input", { value: csv(owner[key]), readonly: ro, "aria-label": aria, placeholder, spellcheck: "false" });
    i.addEventListener("input", () => { owner[key] = i.value.split(",").map((s) => s.trim()).filter(Boolean); changed(); });
    return i;
  }
  function uniqueId(prefix, list) {
    for (let n = list.length + 1; ; n++) { const id = prefix + "_" + n; if (!list.some((x) => x.id === id)) return id; }
  }
  /* Renaming an id renames every reference to it. */
  function renameRefs(kind, from, to) {
    if (!from || from === to) return;
    for (const m of cfg.mappings) {
      if (kind === "source" && m.source_container_id === from) m.source_container_id = to;
      if (kind === "table" && m.analytic_table_id === from) m.analytic_table_id = to;
      if (kind === "dimension") {
        const walk = (n) => { if (!n || typeof n !== "object") return; if (n.kind === "dim_ref" && n.dim_id === from) n.dim_id = to; Object.values(n).forEach((v) => Array.isArray(v) ? v.forEach(walk) : walk(v)); };
        walk(m);
      }
    }
  }
  function idField(kind, item, path) {
    return field("Id", input(item, "id", { mono: true, onchange: (v, old) => renameRefs(kind, old, v) }), path + "/id", "Names the " + KIND_NAME[kind].toLowerCase() + " in references" + (kind === "table" ? " and in SQL." : "."));
  }

  /* The lake folder picker: the folders under the typed prefix, from the lake's listing. */
  function folderField(owner, key, label, path, hint, placeholder) {
    const i = input(owner, key, { mono: true, optional: true, placeholder: placeholder || "pipelines/" + slug + "/events/" });
    const listId = nid();
    const list = el("div", { class: "picker-list", id: listId, role: "listbox", "aria-label": "Lake folders", hidden: true });
    const browse = el("button", { type: "button", class: "small", "aria-expanded": "false", "aria-controls": listId, disabled: ro }, "Browse…");
    async function show(prefix) {
      list.replaceChildren(el("p", { class: "hint" }, "Loading…"));
      list.hidden = false;
      browse.setAttribute("aria-expanded", "true");
      const r = await K.api("GET", "/api/lake?prefix=" + encodeURIComponent(prefix));
      list.replaceChildren();
      if (!r.ok) { list.append(el("p", { class: "error" }, "The lake cannot be listed: " + K.message(r))); return; }
      const choose = (f) => { i.value = f; i.dispatchEvent(new Event("input")); list.hidden = true; browse.setAttribute("aria-expanded", "false"); i.focus(); };
      if (prefix) {
        const up = prefix.replace(/[^/]+\/$/, "");
        list.append(el("button", { type: "button", role: "option", onclick: () => show(up) }, "↑ " + (up || "lake root")));
        list.append(el("button", { type: "button", role: "option", onclick: () => choose(prefix) }, "✓ use " + prefix));
      }
      const folders = (r.data.folders || []).map((f) => (typeof f === "string" ? f : f.key || f.prefix));
      for (const f of folders) list.append(el("button", { type: "button", role: "option", onclick: () => show(f) }, f));
      if (!folders.length) list.append(el("p", { class: "hint" }, "No folders under " + (prefix || "the lake root") + "."));
    }
    browse.addEventListener("click", () => {
      if (!list.hidden) { list.hidden = true; browse.setAttribute("aria-expanded", "false"); return; }
      /* Start beside the folder typed: in its parent, so its siblings show. */
      const v = i.value.trim();
      show(v.replace(/[^/]*\/?$/, ""));
    });
    list.addEventListener("keydown", (e) => { if (e.key === "Escape") { list.hidden = true; browse.setAttribute("aria-expanded", "false"); browse.focus(); } });
    const id = i.id = nid();
    const f = el("div", { class: "field", "data-path": path }, el("label", { for: id }, label), el("div", { class: "picker" }, i, browse, list));
    if (hint) f.append(el("p", { class: "hint" }, hint));
    return f;
  }

  function columnsEditor(item, key, path, withPath) {
    const rows = el("div", { class: "col-rows" });
    const list = item[key] || (item[key] = []);
    const cls = withPath ? "col-row with-path" : "col-row";
    if (list.length) rows.append(el("div", { class: cls + " col-head-row", "aria-hidden": "true" }, el("span", {}, "Name"), el("span", {}, "Type"), withPath ? el("span", {}, withPath) : null));
    list.forEach((c, j) => {
      const n = j + 1;
      if (c.type === undefined) c.type = "string";
      const row = el("div", { class: cls, "data-path": `${path}/${key}/${j}` },
        input(c, "name", { aria: `Column ${n} name`, placeholder: "name" }),
        select_(c, "type", TYPES, { aria: `Column ${n} type`, dflt: "string" }),
        withPath ? input(c, "path", { aria: `Column ${n} ${withPath}`, placeholder: "= name", optional: true }) : null);
      if (!ro) row.append(removeButton(`Remove column ${c.name || n}`, () => { list.splice(j, 1); changed(); renderPanel(); }));
      rows.append(row);
    });
    const fs = el("fieldset", { "data-path": `${path}/${key}` }, el("legend", {}, "Columns"), rows);
    if (!ro) fs.append(el("button", { type: "button", class: "small", onclick: () => { list.push({ name: "", type: "string" }); changed(); renderPanel(); focusLast(fs); } }, "+ Column"));
    return fs;
  }
  function focusLast(container) {
    const inputs = container.querySelectorAll(".col-row input");
    if (inputs.length) inputs[inputs.length - 2 >= 0 && container.querySelector(".col-row.expr") ? inputs.length - 2 : inputs.length - 1].focus();
  }
  function deleteButton(kind, index) {
    if (ro) return null;
    return el("p", {}, el("button", { type: "button", class: "danger small", onclick: async () => {
      const item = cfg[LISTS[kind]][index];
      if (!(await K.confirm(`Delete ${KIND_NAME[kind].toLowerCase()} ${item.name || item.id}?`, "It leaves the config when you save. References to it become problems that Validate shows.", "Delete", true))) return;
      cfg[LISTS[kind]].splice(index, 1);
      problems = [];
      showProblems();
      select(null);
      changed();
    } }, `Delete this ${KIND_NAME[kind].toLowerCase()}`));
  }

  /* ---- the panels ---- */
  function sourcePanel(s, i, path) {
    const parts = [idField("source", s, path),
      field("Name", input(s, "name"), path + "/name"),
      folderField(s, "path_prefix", "Lake folder", path + "/path_prefix", "Files uploaded under this folder are read. It ends with /."),
      field("Format", select_(s, "format", [["csv", "CSV (a header row)"], ["ndjson", "NDJSON (one JSON object a line)"]], { dflt: "csv", onchange: () => renderPanel() }), path + "/format"),
      columnsEditor(s, "schema", path, s.format === "ndjson" ? "JSON path" : "CSV header")];
    if (s.format === "ndjson") {
      const [inp, err] = exprInput(s, "record_filter", "Record filter", "e.g. path != \"/health\"");
      parts.push(field("Record filter", inp, path + "/record_filter", "Keeps only the records for which this is true (empty: all)."), err);
    }
    parts.push(deleteButton("source", i));
    return parts;
  }

  function mappingPanel(m, i, path) {
    const ids = (kind) => cfg[LISTS[kind]].map((x) => [x.id, (x.name ? x.name + " (" + x.id + ")" : x.id)]);
    const table = cfg.analytic_tables.find((t) => t.id === m.analytic_table_id);
    const source = cfg.source_containers.find((t) => t.id === m.source_container_id);
    const tableCols = table ? (table.schema || []).map((c) => c.name) : [];
    const dl = el("datalist", { id: "tcols-" + i }, ...tableCols.map((c) => el("option", { value: c })));
    const rows = el("div", { class: "col-rows" });
    const cols = m.columns || (m.columns = []);
    cols.forEach((c, j) => {
      const n = j + 1;
      const [inp, err] = exprInput(c, "expr", `Expression of column ${c.name || n}`, "e.g. upper(name)");
      const row = el("div", { class: "col-row expr", "data-path": `${path}/columns/${j}` },
        input(c, "name", { aria: `Column ${n} name`, placeholder: "table column", list: "tcols-" + i }),
        ro ? el("span") : removeButton(`Remove column ${c.name || n}`, () => { cols.splice(j, 1); changed(); renderPanel(); }),
        inp, err);
      rows.append(row);
    });
    const fs = el("fieldset", { "data-path": path + "/columns" }, el("legend", {}, "Columns: table column ← expression over the source's columns"), dl, rows);
    if (!ro) {
      fs.append(el("button", { type: "button", class: "small", onclick: () => { cols.push({ name: "", expr: { kind: "null" } }); exprState(cols[cols.length - 1], "expr").text = "null"; changed(); renderPanel(); focusLast(fs); } }, "+ Column"));
      if (table) fs.append(" ", el("button", { type: "button", class: "small", onclick: () => {
        const have = new Set(cols.map((c) => c.name));
        const srcCols = new Set(source ? (source.schema || []).map((c) => c.name) : []);
        for (const tc of table.schema || []) {
          if (have.has(tc.name)) continue;
          const expr = srcCols.has(tc.name) ? { kind: "col", name: tc.name } : { kind: "null" };
          cols.push({ name: tc.name, expr });
          exprState(cols[cols.length - 1], "expr").text = srcCols.has(tc.name) ? "" : "null";
        }
        formatAll().then(() => { changed(); renderPanel(); });
      } }, "Add the table's missing columns"));
    }
    const [w, werr] = exprInput(m, "where", "Where", "e.g. status >= 400");
    const srcHint = source ? "Source columns: " + (source.schema || []).map((c) => c.name).join(", ") : "Choose a source to see its columns.";
    return [idField("mapping", m, path),
      field("Name", input(m, "name", { optional: true }), path + "/name"),
      field("Source", select_(m, "source_container_id", [["", "(choose)"], ...ids("source")], { onchange: () => renderPanel() }), path + "/source_container_id", srcHint),
      field("Table", select_(m, "analytic_table_id", [["", "(choose)"], ...ids("table")], { onchange: () => renderPanel() }), path + "/analytic_table_id"),
      fs,
      field("Where", w, path + "/where", "Rows for which this is false are left out. It names the table's columns (after the expressions)."), werr,
      el("p", { class: "hint" }, "Expressions: operators + - * / = != < <= > >= and or not; functions upper, lower, trim, substring(x, start, length), contains, concat(\"sep\", a, b), coalesce, if(cond, then, else), parse_date(x, \"%d/%m/%Y\"), from_unix(x, \"ms\"), year, month, day, cast(x, int64), dim_ref(dimension, x, \"value\"); col(\"odd name\") for a column whose name is not a plain word."),
      deleteButton("mapping", i)];
  }

  function tablePanel(t, i, path) {
    const names = (t.schema || []).map((c) => c.name).filter(Boolean).join(", ");
    return [idField("table", t, path),
      field("Name", input(t, "name"), path + "/name"),
      columnsEditor(t, "schema", path, null),
      field("Partition keys", listInput(t, "partition_keys", null, "e.g. month(day), region"), path + "/partition_keys", "At most two, comma-separated: a column, or day(col), month(col), year(col) of a date."),
      field("Dedup keys", listInput(t, "dedup_keys", null, "e.g. ts, ip"), path + "/dedup_keys", "Rows equal in these columns collapse; the first read wins. Columns: " + (names || "none yet") + "."),
      el("p", {}, el("a", { href: "/p/" + encodeURIComponent(slug) + "/data" }, "Query this table on the Data page")),
      deleteButton("table", i)];
  }

  /* A dimension's rows: inline {values, rows: [{patterns, values, priority}]}
     or a CSV in the lake {path_prefix, key, values, priority_column}. */
  function dimensionPanel(d, i, path) {
    const miss = d.on_miss && typeof d.on_miss === "object" ? "literal" : d.on_miss || "null";
    const missSel = el("select", { disabled: ro });
    for (const [v, l] of [["null", "null"], ["passthrough", "the input itself"], ["literal", "a fixed value"]]) missSel.append(el("option", { value: v, selected: v === miss }, l));
    const literal = el("input", { class: "after-select", value: miss === "literal" ? String(d.on_miss.literal ?? "") : "", readonly: ro, hidden: miss !== "literal", "aria-label": "Value when nothing matches" });
    const setMiss = () => { d.on_miss = missSel.value === "literal" ? { literal: literal.value } : missSel.value; literal.hidden = missSel.value !== "literal"; changed(); };
    missSel.addEventListener("change", setMiss);
    literal.addEventListener("input", setMiss);
    const ci = el("input", { type: "checkbox", checked: !!d.case_insensitive, disabled: ro });
    ci.addEventListener("change", () => { d.case_insensitive = ci.checked; changed(); });
    if (!d.rows || typeof d.rows !== "object" || Array.isArray(d.rows)) d.rows = { values: ["value"], rows: [] };
    const src = d.rows;
    const fromFile = src.path_prefix !== undefined;
    const kindSel = el("select", { disabled: ro });
    for (const [v, l] of [["inline", "typed in here"], ["file", "a CSV in the lake"]]) kindSel.append(el("option", { value: v, selected: (v === "file") === fromFile }, l));
    kindSel.addEventListener("change", () => {
      d.rows = kindSel.value === "file" ? { path_prefix: "", key: "key", values: src.values || ["value"] } : { values: src.values || ["value"], rows: [] };
      changed();
      renderPanel();
    });
    const parts = [idField("dimension", d, path),
      field("Name", input(d, "name", { optional: true }), path + "/name"),
      field("Match", select_(d, "match", [["exact", "exact: a pattern equals the input"], ["keyword_substring", "keyword: a pattern occurs in the input"]], { dflt: "exact" }), path + "/match"),
      el("div", { class: "field", "data-path": path + "/case_insensitive" }, el("label", { class: "check" }, ci, "Ignore case")),
      field("When nothing matches", missSel, path + "/on_miss"), literal,
      field("Rows", kindSel, path + "/rows"),
      field("Value columns", listInput(src, "values", null, "e.g. category"), path + "/rows/values", "What a match gives: dim_ref(" + (d.id || "id") + ", input, \"" + ((src.values || [])[0] || "value") + "\")")];
    if (fromFile) {
      parts.push(folderField(src, "path_prefix", "CSV file or folder in the lake", path + "/rows/path_prefix", "Its header names the key, value and priority columns.", "dims/" + (d.id || "lookup") + ".csv"),
        field("Key column", input(src, "key", { mono: true }), path + "/rows/key"),
        field("Priority column", input(src, "priority_column", { mono: true, optional: true }), path + "/rows/priority_column", "For keyword matches: the highest priority wins."));
    } else {
      const rowsJson = "[\n" + (src.rows || []).map((r) => "  " + JSON.stringify(r)).join(",\n") + "\n]";
      const rowsText = el("textarea", { rows: 8, readonly: ro, spellcheck: "false" }, rowsJson);
      const rowsErr = el("p", { class: "error", hidden: true, role: "alert" });
      rowsText.addEventListener("input", () => {
        try { src.rows = JSON.parse(rowsText.value || "[]"); rowsErr.hidden = true; rowsText.removeAttribute("aria-invalid"); changed(); }
        catch (e) { rowsErr.textContent = "Not valid JSON: " + e.message; rowsErr.hidden = false; rowsText.setAttribute("aria-invalid", "true"); }
      });
      parts.push(field("Rows: {\"patterns\": [...], \"values\": [...], \"priority\": n}", rowsText, path + "/rows/rows"), rowsErr);
    }
    parts.push(deleteButton("dimension", i));
    return parts;
  }

  function renderPanel() {
    const panel = $("panel");
    if (!selected || !cfg[LISTS[selected.kind]][selected.index]) {
      selected = null;
      const n = (k) => cfg[LISTS[k]].length;
      panel.replaceChildren(el("h2", {}, "Pipeline"),
        el("p", {}, ["source", "mapping", "table", "dimension"].map((k) => `${n(k)} ${k}${n(k) === 1 ? "" : "s"}`).join(", ") + "."),
        el("p", { class: "hint" }, "Select a box in the graph (or Tab to it and press Enter) to see and edit it."));
      return;
    }
    const { kind, index } = selected;
    const item = cfg[LISTS[kind]][index];
    const path = `/${LISTS[kind]}/${index}`;
    const build = { source: sourcePanel, mapping: mappingPanel, table: tablePanel, dimension: dimensionPanel }[kind];
    /* Drawn again: the control that had the focus (by position) keeps it. */
    const controls = () => [...panel.querySelectorAll("input, select, textarea, button")];
    const had = document.activeElement && panel.contains(document.activeElement) ? controls().indexOf(document.activeElement) : -1;
    const caret = had >= 0 && typeof document.activeElement.selectionStart === "number" ? document.activeElement.selectionStart : null;
    panel.replaceChildren(el("h2", {}, el("span", { class: "kind" }, KIND_NAME[kind]), item.name || item.id || "(new)"), ...build(item, index, path).filter(Boolean));
    placeProblems(panel, kind, index);
    const again = had >= 0 ? controls()[had] : null;
    if (again) { again.focus(); if (caret !== null && typeof again.setSelectionRange === "function") { try { again.setSelectionRange(caret, caret); } catch (e) { /* not a text field */ } } }
  }

  /* Each validation problem of the node goes beside the field its path names. */
  function placeProblems(panel, kind, index) {
    const mine = problemsAt(kind, index);
    if (!mine.length) return;
    const targets = [...panel.querySelectorAll("[data-path]")];
    const general = [];
    for (const p of mine) {
      let best = null;
      for (const t of targets) {
        const tp = t.dataset.path;
        if ((p.path === tp || p.path.startsWith(tp + "/")) && (!best || tp.length > best.dataset.path.length)) best = t;
      }
      const msg = el("p", { class: "problem", role: "alert" }, p.message);
      if (best && best.dataset.path !== `/${LISTS[kind]}/${index}`) {
        best.append(msg);
        const ctl = best.querySelector("input, select, textarea");
        if (ctl) ctl.setAttribute("aria-invalid", "true");
      } else general.push(msg);
    }
    if (general.length) panel.querySelector("h2").after(el("div", { class: "notice error" }, ...general));
  }

  /* ---- validation ---- */
  function showProblems() {
    const box = $("problems");
    if (!problems.length) { box.hidden = true; box.replaceChildren(); renderGraph(); return; }
    const items = problems.map((p) => {
      const n = nodeOf(p.path);
      const item = n && cfg[LISTS[n.kind]][n.index];
      const where = n ? `${KIND_NAME[n.kind]} ${item ? item.name || item.id : n.index}` : "Config";
      return el("li", {}, n ? el("button", { type: "button", class: "linkish", onclick: () => select(n.kind, n.index, true) }, where) : el("strong", {}, where), ": ", p.message, " ", el("code", {}, p.path));
    });
    box.replaceChildren(el("div", { class: "notice error" }, el("strong", {}, `${problems.length} problem${problems.length === 1 ? "" : "s"} found`), el("ul", { class: "problem-list" }, ...items)));
    box.hidden = false;
    renderGraph();
  }
  async function validate(quiet) {
    const textsOk = await parseTexts();
    const r = await K.api("POST", base + "/validate", cfg);
    if (!r.ok) { K.toast("Validation failed: " + K.message(r), "error"); return false; }
    problems = r.data.problems || [];
    showProblems();
    renderPanel();
    if (!quiet) K.toast(problems.length || !textsOk ? "The config has problems: see the red boxes." : "The config is valid.", problems.length || !textsOk ? "error" : null);
    return !problems.length && textsOk;
  }
  K.guard($("validate"), () => validate(false));

  /* ---- saving, and a save someone else made first ---- */
  async function put(expectVersion) {
    $("save-state").textContent = "Saving…";
    const r = await K.api("PUT", base + "/config", cfg, { headers: { "X-Karet-Config-Version": String(expectVersion) } });
    if (r.ok) {
      version = r.data.version;
      setDirty(false);
      $("conflict").hidden = true;
      problems = [];
      showProblems();
      /* A save of what is live makes no version: the page says so. */
      K.toast(r.data.unchanged ? `Nothing changed: version ${version} stays the live one.` : "Saved as version " + version + ".");
      loadHistory();
      return true;
    }
    setDirty(true);
    if (r.status === 412) { showConflict(r.data.currentVersion); return false; }
    if (r.status === 422 && r.data.problems) { problems = r.data.problems; showProblems(); renderPanel(); K.toast("Not saved: the config has problems.", "error"); return false; }
    K.toast("Not saved: " + K.message(r), "error");
    return false;
  }
  if (canEdit) K.guard($("save"), async () => {
    if (!(await parseTexts())) { K.toast("Not saved: an expression cannot be read.", "error"); renderGraph(); return; }
    await put(version);
  });

  function showConflict(current) {
    const box = $("conflict");
    const diffBox = el("div");
    box.replaceChildren(el("div", { class: "notice warn", role: "alert" },
      el("strong", {}, `Someone saved version ${current} while you were editing (you started from version ${version}).`),
      el("p", {}, "Your changes are still here. Look at what they changed, then keep theirs or save yours over it."),
      el("div", { class: "actions" },
        el("button", { type: "button", onclick: async () => {
          const [a, b] = await Promise.all([K.api("GET", `${base}/config/history/${version}`), K.api("GET", `${base}/config`)]);
          if (a.ok && b.ok) diffBox.replaceChildren(el("h3", {}, `Their changes: version ${version} → ${current}`), diffView(a.data.config, b.data));
        } }, "Show their changes"),
        el("button", { type: "button", onclick: async () => { if (await K.confirm("Discard your changes?", "The editor loads the saved version " + current + ".", "Discard mine", true)) await reload(); } }, "Load theirs, discard mine"),
        el("button", { type: "button", class: "primary", onclick: () => put(current) }, "Save mine over theirs")),
      diffBox));
    box.hidden = false;
    box.querySelector("strong").scrollIntoView({ block: "nearest" });
  }

  async function reload() {
    const r = await K.api("GET", base + "/config");
    if (!r.ok) { K.toast("Could not load the config: " + K.message(r), "error"); return; }
    cfg = normalise(r.data);
    version = Number(r.headers.get("X-Karet-Config-Version")) || version;
    pendingTexts.clear();
    await formatAll();
    problems = [];
    $("conflict").hidden = true;
    showProblems();
    setDirty(false);
    select(null);
    loadHistory();
  }

  /* ---- history: versions, a diff against the live config, revert ---- */
  function canonical(v) {
    const sort = (x) => Array.isArray(x) ? x.map(sort) : x && typeof x === "object" ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sort(x[k])])) : x;
    const c = sort(v || {});
    if (c && typeof c === "object") delete c.layout;
    return JSON.stringify(c, null, 2).split("\n");
  }
  /* Myers' diff of two line lists: [[op, line]] with op " ", "-" or "+". */
  function diffLines(a, b) {
    const n = a.length, m = b.length, max = n + m, off = max + 1;
    const v = new Int32Array(2 * max + 3), trace = [];
    let done = false;
    for (let d = 0; d <= max && !done; d++) {
      trace.push(v.slice());
      for (let k = -d; k <= d; k += 2) {
        let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
        let y = x - k;
        while (x < n && y < m && a[x] === b[y]) { x++; y++; }
        v[off + k] = x;
        if (x >= n && y >= m) { done = true; break; }
      }
    }
    const out = [];
    let x = n, y = m;
    for (let d = trace.length - 1; d >= 0; d--) {
      const vv = trace[d], k = x - y;
      const pk = k === -d || (k !== d && vv[off + k - 1] < vv[off + k + 1]) ? k + 1 : k - 1;
      const px = vv[off + pk], py = px - pk;
      while (x > px && y > py) out.push([" ", a[--x]]), y--;
      if (d > 0) { if (x === px) out.push(["+", b[--y]]); else out.push(["-", a[--x]]); }
    }
    return out.reverse();
  }
  function diffView(from, to) {
    const ops = diffLines(canonical(from), canonical(to));
    if (!ops.some(([o]) => o !== " ")) return el("p", { class: "hint" }, "No difference (apart from node positions).");
    const pre = el("pre", { class: "diff", tabindex: 0, "aria-label": "Differences, one line each: plus added, minus removed" });
    let adds = 0, dels = 0, i = 0;
    const ctx = 3;
    while (i < ops.length) {
      if (ops[i][0] === " ") { i++; continue; }
      let s = Math.max(0, i - ctx), e = i;
      while (e < ops.length) {
        if (ops[e][0] !== " ") { e++; continue; }
        let run = e;
        while (run < ops.length && ops[run][0] === " ") run++;
        if (run - e > 2 * ctx || run === ops.length) { e = Math.min(ops.length, e + ctx); break; }
        e = run;
      }
      pre.append(el("span", { class: "hunk" }, `@@ lines ${s + 1}–${e} @@`));
      for (let j = s; j < e; j++) {
        const [o, line] = ops[j];
        if (o === "+") adds++; if (o === "-") dels++;
        pre.append(el("span", { class: o === "+" ? "add" : o === "-" ? "del" : "" }, o + " " + line));
      }
      i = e;
    }
    return el("div", {}, el("p", { class: "hint" }, `${adds} line${adds === 1 ? "" : "s"} added, ${dels} removed.`), pre);
  }

  async function loadHistory() {
    const list = $("versions");
    const r = await K.api("GET", base + "/config/history");
    if (!r.ok) { list.replaceChildren(el("li", { class: "error" }, K.message(r))); return; }
    list.replaceChildren(...r.data.versions.map((v) => el("li", {}, el("button", { type: "button", "aria-pressed": "false", "data-version": v.version, onclick: (e) => showVersion(v, e.currentTarget) },
      el("span", {}, `v${v.version}`, v.live ? " · live" : "", v.note ? ` · ${v.note}` : ""),
      el("small", {}, `${v.author || "?"}, `, K.localTime(v.savedAt))))));
  }
  async function showVersion(v, button) {
    for (const b of $("versions").querySelectorAll("button")) b.setAttribute("aria-pressed", b === button ? "true" : "false");
    const view = $("version-view");
    const [a, live] = await Promise.all([K.api("GET", `${base}/config/history/${v.version}`), K.api("GET", base + "/config")]);
    if (!a.ok || !live.ok) { view.replaceChildren(el("p", { class: "error" }, K.message(a.ok ? live : a))); return; }
    const liveVersion = live.headers.get("X-Karet-Config-Version");
    const parts = [el("h3", {}, `Version ${v.version}`, v.live ? " (live)" : ""),
      el("p", { class: "hint" }, `Saved by ${v.author || "?"} at ${K.localTime(v.savedAt)}${v.note ? " — " + v.note : ""}.`)];
    if (!v.live) {
      parts.push(el("p", {}, `What reverting would change: live version ${liveVersion} → version ${v.version}.`), diffView(live.data, a.data.config));
      if (canEdit) {
        const rv = el("button", { type: "button", class: "primary" }, `Revert to version ${v.version}`);
        K.guard(rv, async () => {
          if (dirty && !(await K.confirm("Discard your unsaved changes?", "Reverting loads the reverted config into the editor.", "Revert", true))) return;
          const r = await K.api("POST", `${base}/config/history/${v.version}/revert`);
          if (!r.ok) { K.toast("Not reverted: " + K.message(r), "error"); return; }
          K.toast(r.data.unchanged ? `Nothing changed: version ${v.version}'s config is the live one (version ${r.data.version}).`
            : `Reverted: version ${r.data.version} is version ${v.version}'s config.`);
          await reload();
        });
        parts.push(el("p", {}, rv));
      }
    } else {
      parts.push(el("p", {}, "This is the live config."));
    }
    view.replaceChildren(...parts);
  }

  /* ---- adding nodes ---- */
  for (const b of document.querySelectorAll("[data-add]")) {
    b.addEventListener("click", () => {
      const kind = b.dataset.add, list = cfg[LISTS[kind]];
      const id = uniqueId(kind, list);
      const item = {
        source: () => ({ id, name: "New source", path_prefix: `pipelines/${slug}/${id}/`, format: "csv", schema: [] }),
        mapping: () => ({ id, name: "New mapping", source_container_id: (cfg.source_containers[0] || {}).id || "", analytic_table_id: (cfg.analytic_tables[0] || {}).id || "", columns: [] }),
        table: () => ({ id, name: "New table", schema: [], partition_keys: [], dedup_keys: [] }),
        dimension: () => ({ id, name: "New dimension", match: "exact", on_miss: "null", rows: { values: ["value"], rows: [] } }),
      }[kind]();
      list.push(item);
      changed();
      select(kind, list.length - 1, true);
    });
  }

  /* ---- start ---- */
  cfg = normalise(data.config);
  version = data.version;
  loadTexts(data.texts);
  setDirty(false);
  renderGraph();
  renderPanel();
  loadHistory();
  if (location.hash === "#history") $("history").scrollIntoView();
});
