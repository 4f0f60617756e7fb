"""A real browser for the tests of Karet's pages: Debian's headless Chromium
driven through chromedriver (selenium), with the flags that keep it from
calling any Google host, a fresh profile per browser, screenshots of every
page visited (under $TL_BUILD/screenshots/<test>/), and the checks every page
must pass: no JavaScript error in the console, no control without a label, no
text below WCAG AA contrast."""

import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from store_servers import clean_env

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps",
         "--disable-extensions", "--no-default-browser-check", "--disable-dev-shm-usage",
         "--disable-features=Translate,MediaRouter,OptimizationHints", "--lang=en-US",
         "--force-prefers-reduced-motion"]

# Names of every control on the page that has no accessible name: inputs,
# selects and textareas without a <label for>, wrapping label, aria-label or
# aria-labelledby; buttons and links without text or a label; images without
# alt; SVGs that claim role=img without a name.
UNLABELED_JS = r"""
const out = [];
const named = (el) => {
  if ((el.getAttribute('aria-label') || '').trim()) return true;
  const by = el.getAttribute('aria-labelledby');
  if (by && by.split(/\s+/).some((id) => { const t = document.getElementById(id); return t && t.textContent.trim(); })) return true;
  return false;
};
for (const el of document.querySelectorAll('input, select, textarea')) {
  if (el.type === 'hidden') continue;
  if (named(el)) continue;
  if (el.id && document.querySelector('label[for="' + CSS.escape(el.id) + '"]')) continue;
  if (el.closest('label')) continue;
  if (el.title && el.title.trim()) continue;
  out.push(el.outerHTML.slice(0, 160));
}
for (const el of document.querySelectorAll('button, a[href], [role=button], summary')) {
  if (named(el) || el.textContent.trim() || (el.title || '').trim()) continue;
  const img = el.querySelector('img[alt]:not([alt=""])');
  if (img) continue;
  out.push(el.outerHTML.slice(0, 160));
}
for (const el of document.querySelectorAll('img')) if (!el.hasAttribute('alt')) out.push(el.outerHTML.slice(0, 160));
for (const el of document.querySelectorAll('svg[role=img], [role=img]')) if (!named(el) && !el.querySelector('title')) out.push(el.outerHTML.slice(0, 160));
for (const el of document.querySelectorAll('[tabindex="0"], g[tabindex]')) {
  if (el.matches('input,select,textarea,button,a[href],main')) continue;
  if (!named(el) && !el.textContent.trim()) out.push(el.outerHTML.slice(0, 160));
}
return out;
"""


# Text whose contrast with what is behind it is under WCAG AA: 4.5:1, or 3:1
# for large text (24 px, or 18.66 px bold). Disabled controls are exempt, as
# WCAG has it. Returns [ratio, text, colour, background] of each offender.
LOW_CONTRAST_JS = r"""
const parse = (c) => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null;
  const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
const over = (top, under) => { const a = top[3]; return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)).concat([1]); };
function background(el) {
  const layers = [];
  for (let e = el; e; e = e.parentElement) {
    const c = parse(getComputedStyle(e).backgroundColor);
    if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
  }
  let bg = [255, 255, 255, 1];
  for (const c of layers.reverse()) bg = over(c, bg);
  return bg;
}
const out = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const seen = new Set();
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  const el = n.parentElement;
  if (!el || seen.has(el) || !n.textContent.trim()) continue;
  seen.add(el);
  if (el.closest('[hidden], [aria-hidden="true"], :disabled, [aria-disabled="true"], option, title, script, style')) continue;
  const r = el.getBoundingClientRect();
  if (!r.width || !r.height) continue;
  let faded = false;
  for (let e = el; e; e = e.parentElement) if (Number(getComputedStyle(e).opacity) < 1) faded = true;
  if (faded) continue;
  const cs = getComputedStyle(el);
  if (cs.visibility === 'hidden' || el.closest('svg')) continue;
  const bg = background(el), fg = over(parse(cs.color), bg);
  const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  const ratio = (a + 0.05) / (b + 0.05);
  const size = parseFloat(cs.fontSize), bold = Number(cs.fontWeight) >= 700;
  const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
  if (ratio < need) out.push([Math.round(ratio * 100) / 100, n.textContent.trim().slice(0, 40), cs.color, 'rgb(' + bg.slice(0, 3).map(Math.round).join(',') + ')']);
}
return out;
"""


def shots_dir(test_name):
    build = Path(os.environ.get("TL_BUILD", ROOT / "build-asan"))
    d = build / "screenshots" / re.sub(r"[^A-Za-z0-9_.-]+", "_", test_name)
    d.mkdir(parents=True, exist_ok=True)
    return d


class Browser:
    """One Chromium with its own profile. `expected_network` lists URL parts
    whose failed requests a test provokes on purpose (a 412, a 403...)."""

    def __init__(self, base, shots, width=1280, height=900):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        if not Path(CHROMIUM).exists() or not Path(DRIVER).exists():
            pytest.skip("chromium and chromium-driver are missing (scripts/setup.sh --test installs them)")
        self.base, self.shots, self.n = base, Path(shots), 0
        self.profile = tempfile.mkdtemp(prefix="karet-chromium-")
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for f in FLAGS + [f"--user-data-dir={self.profile}", f"--window-size={width},{height}"]:
            opts.add_argument(f)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        # The sanitizer preload of the test process must not reach Chromium.
        service = Service(DRIVER, env=clean_env())
        self.d = webdriver.Chrome(service=service, options=opts)
        self.d.set_page_load_timeout(60)
        self.console = []
        self.expected_network = []

    # ---- navigation and lookup ----
    def get(self, path):
        self.d.get(self.base + path)
        self.wait_ready()
        return self

    def wait_ready(self):
        self.wait(lambda: self.d.execute_script("return document.readyState") == "complete", what="page load")

    def wait(self, pred, timeout=30, what="condition", interval=0.1):
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            try:
                v = pred()
                if v:
                    return v
            except Exception as e:  # an element replaced while we looked
                last = e
            time.sleep(interval)
        raise AssertionError(f"timed out waiting for {what}" + (f" (last error: {last!r})" if last else ""))

    def click(self, selector):
        """Clicks what the selector finds, finding it again when the page
        replaced it in between: live lists re-render while a test acts."""
        def attempt():
            self.css(selector).click()
            return True
        self.wait(attempt, what=f"a click on {selector}")

    def css(self, selector):
        from selenium.webdriver.common.by import By

        return self.d.find_element(By.CSS_SELECTOR, selector)

    def all(self, selector):
        from selenium.webdriver.common.by import By

        return self.d.find_elements(By.CSS_SELECTOR, selector)

    def text(self, selector):
        """The text of what the selector finds, found again when the page
        replaced it between the find and the read."""
        return self.fresh(lambda: self.css(selector).text)

    def attr(self, selector, name):
        """An attribute of what the selector finds, found afresh as text() is."""
        return self.fresh(lambda: self.css(selector).get_attribute(name))

    def fresh(self, read, tries=10):
        """read(), again when an element it found was replaced while it read
        (a live list put in a changed row): never a wait for a state."""
        from selenium.common.exceptions import StaleElementReferenceException

        for i in range(tries):
            try:
                return read()
            except StaleElementReferenceException:
                if i == tries - 1:
                    raise

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def type(self, selector, text, clear=True):
        e = self.css(selector)
        if clear:
            e.clear()
        e.send_keys(text)
        return e

    def path(self):
        return self.d.current_url[len(self.base):]

    # ---- checks ----
    def logs(self):
        self.console += self.d.get_log("browser")
        return self.console

    def js_errors(self):
        """Console errors other than failed requests the test expected."""
        bad = []
        for entry in self.logs():
            if entry["level"] != "SEVERE":
                continue
            msg = entry["message"]
            if entry.get("source") == "network" or "Failed to load resource" in msg:
                if any(part in msg for part in self.expected_network):
                    continue
            if "/jobs/events" in msg and ("ERR_" in msg or "net::" in msg):
                continue  # an event stream cut by the server's stop
            bad.append(msg)
        return bad

    def unlabeled(self):
        return self.js(UNLABELED_JS)

    def low_contrast(self):
        return self.js(LOW_CONTRAST_JS)

    def check_page(self, name, width=None):
        """Screenshot (full height), then the page must have no unlabeled
        control, no text below AA contrast and no JavaScript error so far."""
        self.screenshot(name, width)
        missing = self.unlabeled()
        assert not missing, f"{name}: controls without a label: {missing}"
        faint = self.low_contrast()
        assert not faint, f"{name}: text below AA contrast: {faint}"
        errors = self.js_errors()
        assert not errors, f"{name}: console errors: {errors}"

    def screenshot(self, name, width=None):
        """The whole page, at `width` CSS pixels (a phone: 390) or the window's."""
        w = width or self.d.get_window_size()["width"]
        metrics = {"width": w, "height": 800, "deviceScaleFactor": 1, "mobile": w < 600}
        self.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        self.next_frames()
        h = self.js("return Math.ceil(Math.max(document.documentElement.scrollHeight, document.body.scrollHeight))")
        self.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**metrics, "height": min(max(h, 500), 8000)})
        self.next_frames()
        self.n += 1
        path = self.shots / f"{self.n:02d}-{name}.png"
        self.d.save_screenshot(str(path))
        self.d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        return path

    def next_frames(self):
        """Until the page has drawn two frames since the call: a resize is
        laid out and painted by then (rather than a fixed wait for it)."""
        self.d.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "requestAnimationFrame(() => requestAnimationFrame(() => done(true)));")

    def sign_in(self, username, password, next_path=None):
        self.get("/sign-in" + (f"?next={next_path}" if next_path else ""))
        self.type("#username", username)
        self.type("#password", password)
        self.css("#sign-in-form button[type=submit]").click()
        self.wait(lambda: not self.path().startswith("/sign-in"), what="sign-in to finish")
        self.wait_ready()

    def cookie(self):
        c = self.d.get_cookie("karet_session")
        return c["value"] if c else None

    def quit(self):
        try:
            self.d.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)
