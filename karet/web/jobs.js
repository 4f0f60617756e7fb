/* The Jobs page, live: the server-sent event stream says when a job (or the
   batch of uploads waiting to start one) changed, and the page fetches its
   live region again from the server, which renders it. Without the stream
   (a proxy that buffers, a lost connection) it polls every 5 seconds. */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const slug = K.slug();
  const region = document.getElementById("jobs-live");
  const single = document.getElementById("job-one");
  const live = document.getElementById("live");
  const POLL_FAST = 5000, POLL_SLOW = 30000;

  /* ---- opening a run ---- */
  function toggle(button, open) {
    const details = document.getElementById(button.getAttribute("aria-controls"));
    if (!details) return;
    const want = open === undefined ? button.getAttribute("aria-expanded") !== "true" : open;
    button.setAttribute("aria-expanded", want ? "true" : "false");
    details.hidden = !want;
  }
  /* The run opened last is in the address (?open=<id>), as the server
     renders it: a reload or a copied link shows the same view. */
  function remember(button) {
    const id = button.getAttribute("aria-controls").replace(/^d-/, "");
    const url = new URL(location.href);
    if (button.getAttribute("aria-expanded") === "true") url.searchParams.set("open", id);
    else if (url.searchParams.get("open") === id) url.searchParams.delete("open");
    history.replaceState(null, "", url);
  }
  if (region) {
    region.addEventListener("click", (e) => {
      const b = e.target.closest("button.toggle");
      if (b) { toggle(b); remember(b); }
    });
  }

  /* ---- refreshing what the server renders ---- */
  let inFlight = false, again = false, lastRefresh = 0;

  async function fetchHtml(url) {
    const r = await fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } });
    if (r.redirected && new URL(r.url).pathname === "/sign-in") {
      location.reload();
      return null;
    }
    return r.ok ? r.text() : null;
  }

  /* Only the rows that changed are put in (the server signs each row):
     a refresh after every event must not replace the rows the reader is
     looking at, has open or is about to click. */
  function patchRegion(html) {
    const t = document.createElement("template");
    t.innerHTML = html; // rendered and escaped by the server
    const fresh = t.content;
    const body = region.querySelector("tbody"), freshBody = fresh.querySelector("tbody");
    const pager = region.querySelector(".pager"), freshPager = fresh.querySelector(".pager");
    if (!body || !freshBody || !pager !== !freshPager) {
      region.replaceChildren(fresh);
      return;
    }
    K.patchList(body, freshBody, (r) => r.id);
    if (pager && pager.outerHTML !== freshPager.outerHTML) pager.replaceWith(freshPager);
  }

  async function refreshRegion() {
    const open = new Set([...region.querySelectorAll('button.toggle[aria-expanded="true"]')].map((b) => b.getAttribute("aria-controls")));
    const focused = document.activeElement && region.contains(document.activeElement) ? document.activeElement.getAttribute("aria-controls") : null;
    const html = await fetchHtml(region.dataset.fragment);
    if (html === null) return false;
    patchRegion(html);
    for (const b of region.querySelectorAll("button.toggle")) {
      if (open.has(b.getAttribute("aria-controls"))) toggle(b, true);
      if (focused && b.getAttribute("aria-controls") === focused && document.activeElement !== b) b.focus();
    }
    K.localTimes(region);
    tick();
    return true;
  }

  async function refreshSingle() {
    const html = await fetchHtml(location.pathname);
    if (html === null) return false;
    const doc = new DOMParser().parseFromString(html, "text/html");
    const fresh = doc.getElementById("job-one");
    if (fresh && fresh.dataset.sig !== single.dataset.sig) {
      single.replaceChildren(...fresh.childNodes);
      single.dataset.sig = fresh.dataset.sig;
    }
    const head = doc.querySelector(".page-head .actions");
    const mine = document.querySelector(".page-head .actions");
    if (head && mine && head.innerHTML !== mine.innerHTML) mine.replaceChildren(...head.childNodes);
    K.localTimes(document);
    return true;
  }

  /* Coalesces bursts of events into at most a few fetches a second. */
  async function refresh() {
    if (inFlight) { again = true; return; }
    inFlight = true;
    const wait = 300 - (Date.now() - lastRefresh);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    try {
      if (region) await refreshRegion();
      else if (single) await refreshSingle();
    } catch (e) {
      /* the next event or poll tries again */
    } finally {
      lastRefresh = Date.now();
      inFlight = false;
      if (again) { again = false; refresh(); }
    }
  }

  /* ---- the event stream, and polling when it is down ---- */
  let pollTimer = null, connected = false;
  function setPolling(ms) {
    if (pollTimer) clearInterval(pollTimer);
    pollTimer = setInterval(refresh, ms);
  }
  function showLive() {
    if (!live) return;
    live.textContent = connected ? "● Live" : "Updating every 5 s";
    live.classList.toggle("on", connected);
    live.title = connected ? "Changes appear as they happen" : "The live stream is not connected; the list is fetched every 5 seconds";
  }
  if ((region || single) && "EventSource" in window && slug) {
    const es = new EventSource("/api/p/" + encodeURIComponent(slug) + "/jobs/events");
    es.onopen = () => { connected = true; showLive(); setPolling(POLL_SLOW); refresh(); };
    es.onerror = () => { connected = false; showLive(); setPolling(POLL_FAST); };
    es.onmessage = (e) => {
      if (single) {
        try { if (JSON.parse(e.data).id !== single.dataset.job) return; } catch (x) { return; }
      }
      refresh();
    };
    es.addEventListener("scheduled", () => refresh());
    window.addEventListener("pagehide", () => es.close());
  }
  showLive();
  setPolling(POLL_FAST);

  /* ---- countdowns and running durations ---- */
  function tick() {
    const now = Date.now();
    for (const c of document.querySelectorAll("[data-due]")) {
      const s = Math.ceil((Number(c.dataset.due) - now) / 1000);
      c.textContent = s > 0 ? "runs in " + s + " s" : "starting…";
    }
    for (const d of document.querySelectorAll("[data-since]")) {
      d.textContent = K.duration(now - Number(d.dataset.since));
    }
  }
  tick();
  setInterval(tick, 250);

  /* ---- the Run button ---- */
  const run = document.getElementById("run");
  if (run) {
    const full = document.getElementById("full-run");
    K.guard(run, async () => {
      const clean = full && full.checked;
      const r = await K.api("POST", "/api/p/" + encodeURIComponent(slug) + "/jobs" + (clean ? "?clean=true" : ""));
      if (!r.ok) {
        K.toast("Could not start a run: " + K.message(r), "error");
        return;
      }
      K.toast((clean ? "Full run " : "Run ") + r.data.id + " queued.");
      if (full) full.checked = false;
      await refresh();
    });
  }
});
