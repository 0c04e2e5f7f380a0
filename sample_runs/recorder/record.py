"""Record trajcheck's sample runs with a real headless Chromium.

A scripted agent drives Debian's Chromium through Playwright over local pages
(``pages/``) that load real third-party UI code from npm (Bootstrap 5, the
vanilla-cookieconsent banner). Every step is written in the trajcheck.run/1
format: pre/post screenshots, DOM snapshots, URLs, focus, the client witness
(network requests, DOM mutations, URL change), and what the runner's live
perceptual verifier said.

Ablation: tasks recorded in both arms run the same script; with
``perceptual_verifier`` on, the agent runs trajcheck's verifier on the run so
far after every action and, when it warns, takes the task's recovery branch.
With it off, the agent never looks and carries on. The recorder writes the
ground truth it knows to ``labels.json``.

Usage (from the repository root, with trajcheck and playwright installed)::

    cd sample_runs/recorder && npm ci && cd -
    python sample_runs/recorder/record.py --out sample_runs

It needs /usr/bin/chromium (Debian's ``chromium`` package); Playwright's own
browser download is not used.
"""

from __future__ import annotations

import argparse
import html
import json
import mimetypes
import shutil
import sys
import tempfile
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from PIL import Image, ImageChops
from playwright.sync_api import Browser, Error as PlaywrightError, sync_playwright

HERE = Path(__file__).resolve().parent
PAGES = HERE / "pages"
VENDOR = {
    "/vendor/bootstrap/": HERE / "node_modules" / "bootstrap" / "dist",
    "/vendor/cookieconsent/": HERE / "node_modules" / "vanilla-cookieconsent" / "dist",
}
ORIGIN = "http://sample.local"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
STARTED_AT = "2026-11-22T12:00:00Z"  # fixed, so re-recording gives the same run.json

# Counts DOM mutations so each step can report the client witness did_dom_mutate.
INIT_SCRIPT = """
window.__tcMutations = 0;
new MutationObserver(() => { window.__tcMutations += 1; })
  .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""

# Serializes the DOM with form state copied into attributes (value, checked, selected)
# and each interactive element's box (CSS pixels, viewport coordinates) as data-bbox.
# Works on a clone: the live page is not touched.
SNAPSHOT_JS = """
() => {
  const live = [document.documentElement, ...document.documentElement.querySelectorAll('*')];
  const root = document.documentElement.cloneNode(true);
  const copy = [root, ...root.querySelectorAll('*')];
  const interactive = 'a,button,input,select,textarea,label,[role],[aria-pressed],[tabindex],.toast,.alert,.modal';
  for (let i = 0; i < live.length; i++) {
    const el = live[i], c = copy[i];
    if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
      if (el.type === 'checkbox' || el.type === 'radio') {
        if (el.checked) c.setAttribute('checked', ''); else c.removeAttribute('checked');
      } else if (el.type !== 'password') {
        if (el.tagName === 'TEXTAREA') c.textContent = el.value; else c.setAttribute('value', el.value);
      }
    }
    if (el.tagName === 'OPTION') { if (el.selected) c.setAttribute('selected', ''); else c.removeAttribute('selected'); }
    if (el.matches(interactive)) {
      const r = el.getBoundingClientRect();
      c.setAttribute('data-bbox', [r.x, r.y, r.width, r.height].map(v => Math.round(v)).join(' '));
    }
  }
  return '<!DOCTYPE html>\\n' + root.outerHTML;
}
"""

FOCUS_JS = """
() => {
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return 'body';
  return el.tagName.toLowerCase() + (el.id ? '#' + el.id : '');
}
"""


def _field(name: str, label: str, kind: str, value: str, error: bool) -> str:
    shown = "" if kind == "password" else html.escape(value, quote=True)
    inner = (f'<label class="form-label" for="{name}">{label}</label>'
             f'<input class="form-control mb-3" id="{name}" name="{name}" type="{kind}" value="{shown}">')
    return f'<div class="field_with_errors">{inner}</div>' if error else inner


def register_page(values: dict[str, str], errors: dict[str, str]) -> str:
    """Gitforge's sign-up form as its server renders it, Rails style: an ``error_explanation`` box and
    ``field_with_errors`` wrappers after a refused POST."""
    page = (PAGES / "register" / "form.html").read_text()
    box = ""
    if errors:
        items = "".join(f"<li>{html.escape(m)}</li>" for m in errors.values())
        box = (f'<div id="error_explanation" class="alert alert-danger"><h2 class="h6">{len(errors)} error'
               f'{"s" if len(errors) > 1 else ""} prohibited this account from being saved:</h2><ul class="mb-0">'
               f'{items}</ul></div>')
    fields = "".join(_field(n, label, kind, values.get(n, ""), n in errors) for n, label, kind in (
        ("username", "Username", "text"), ("email", "Email", "email"), ("password", "Password (8 characters or more)",
                                                                         "password")))
    return page.replace("<!--ERRORS-->", box).replace("<!--FIELDS-->", fields)


def handle_register(route) -> None:
    """The server side of /register: GET shows the form; POST validates it and either re-renders the form
    with its errors (status 422, as Rails does) or redirects to the welcome page (303)."""
    if route.request.method != "POST":
        route.fulfill(status=200, body=register_page({}, {}), content_type="text/html")
        return
    form = {k: v[0] for k, v in urllib.parse.parse_qs(route.request.post_data or "").items()}
    errors = {}
    if len(form.get("password", "")) < 8:
        errors["password"] = "Password is too short (minimum is 8 characters)"
    if "@" not in form.get("email", ""):
        errors["email"] = "Email is invalid"
    if errors:
        route.fulfill(status=422, body=register_page(form, errors), content_type="text/html")
    else:
        route.fulfill(status=303, headers={"Location": ORIGIN + "/register/welcome.html"}, body="")


# Harbor Supply's order list: 60 orders, newest first, 10 to a page. Every page has the same header, table
# shape and pager; only the rows, the "Showing" line and the URL's ?page= differ.
_CUSTOMERS = ("Ines Duarte", "Tomasz Nowak", "Aiko Tanaka", "Liam O'Connor", "Fatima Zahra", "Jonas Berg",
              "Priya Raman", "Mateo Rossi", "Chloe Martin", "Kwame Mensah", "Sofia Lindqvist", "Diego Alvarez",
              "Hannah Weiss", "Omar Haddad", "Grace Kim", "Lucas Moreau", "Nadia Petrova", "Samuel Osei",
              "Elena Popescu", "Ravi Kumar")
_STATUSES = (("Delivered", "bg-success"), ("Shipped", "bg-primary"), ("Processing", "bg-secondary"),
             ("In transit", "bg-warning text-dark"))
ORDERS_PER_PAGE = 10
ORDERS_TOTAL = 60
PAGED_TARGET = "HS-10457"  # on the last page: the agent has to page through all six


def _order(i: int) -> dict[str, str]:
    """The i-th order of the list (0 = newest), derived from i alone so every page renders the same each time."""
    oid = f"HS-{10512 - i}"
    day = 21 - (i * 48) // ORDERS_TOTAL  # newest first: 21 Nov back to early October
    placed = f"2026-11-{day:02d}" if day >= 1 else f"2026-10-{31 + day:02d}"
    if oid == PAGED_TARGET:
        return {"id": oid, "customer": "Marta Quispe", "placed": placed, "items": "3", "total": "$1,318.40",
                "status": "On hold", "badge": "bg-danger", "note": "Payment not confirmed by the bank"}
    status, badge = _STATUSES[(i * 7) % len(_STATUSES)] if i >= 8 else _STATUSES[2 + i % 2]
    return {"id": oid, "customer": _CUSTOMERS[(i * 3) % len(_CUSTOMERS)], "placed": placed,
            "items": str(1 + (i * 5) % 7), "total": f"${40 + (i * 7919) % 1500:,}.{(i * 37) % 100:02d}",
            "status": status, "badge": badge, "note": "-"}


def handle_orders(route) -> None:
    """GET /orders?page=N: one page of the order list, each row linking to /orders/view?id=..."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(route.request.url).query)
    pages = ORDERS_TOTAL // ORDERS_PER_PAGE
    page = min(max(int((query.get("page") or ["1"])[0] or 1), 1), pages)
    first = (page - 1) * ORDERS_PER_PAGE
    rows = "".join(
        f'<tr><td><a href="/orders/view?id={o["id"]}" data-order="{o["id"]}">{o["id"]}</a></td>'
        f'<td>{html.escape(o["customer"])}</td><td>{o["placed"]}</td><td class="text-end">{o["items"]}</td>'
        f'<td class="text-end">{o["total"]}</td><td><span class="badge {o["badge"]}">{o["status"]}</span></td></tr>'
        for o in map(_order, range(first, first + ORDERS_PER_PAGE)))

    def item(label: str, target: int, *, ident: str = "", active: bool = False, disabled: bool = False) -> str:
        cls = "page-item" + (" active" if active else "") + (" disabled" if disabled else "")
        attr = f' id="{ident}"' if ident else ""
        return f'<li class="{cls}"><a class="page-link"{attr} href="/orders?page={target}">{label}</a></li>'

    pager = (item("‹ Previous", page - 1, ident="prev", disabled=page == 1)
             + "".join(item(str(n), n, active=n == page) for n in range(1, pages + 1))
             + item("Next ›", page + 1, ident="next", disabled=page == pages))
    body = (PAGES / "orders" / "list.html").read_text()
    for key, value in (("PAGE", str(page)), ("PAGES", str(pages)), ("FIRST", str(first + 1)),
                       ("LAST", str(first + ORDERS_PER_PAGE)), ("TOTAL", str(ORDERS_TOTAL)), ("ROWS", rows),
                       ("PAGER", pager)):
        body = body.replace(f"<!--{key}-->", value)
    route.fulfill(status=200, body=body, content_type="text/html")


def handle_order_view(route) -> None:
    """GET /orders/view?id=HS-...: one order's details (404 for an id the list does not hold)."""
    oid = (urllib.parse.parse_qs(urllib.parse.urlsplit(route.request.url).query).get("id") or [""])[0]
    found = [i for i in range(ORDERS_TOTAL) if _order(i)["id"] == oid]
    if not found:
        route.fulfill(status=404, body="no such order", content_type="text/plain")
        return
    o = _order(found[0])
    labels = (("customer", "Customer"), ("placed", "Placed"), ("items", "Items"), ("total", "Total"),
              ("status", "Status"), ("note", "Note"))
    fields = "".join(f'<tr><th class="w-25">{label}</th><td id="{key}">{html.escape(o[key])}</td></tr>'
                     for key, label in labels)
    body = (PAGES / "orders" / "view.html").read_text()
    for key, value in (("ID", o["id"]), ("PAGE", str(found[0] // ORDERS_PER_PAGE + 1)), ("FIELDS", fields)):
        body = body.replace(f"<!--{key}-->", value)
    route.fulfill(status=200, body=body, content_type="text/html")


#: Paths answered by a server-side handler (the recorder plays the server), not by a file.
SERVER = {"/register": handle_register, "/orders": handle_orders, "/orders/view": handle_order_view}


def serve(route) -> None:
    path = route.request.url[len(ORIGIN):].split("?")[0].split("#")[0]
    if path in SERVER:
        SERVER[path](route)
        return
    target: Path | None = None
    for prefix, root in VENDOR.items():
        if path.startswith(prefix):
            target = root / path[len(prefix):]
    if target is None:
        target = PAGES / path.lstrip("/")
        if target.is_dir():
            target = target / "index.html"
    if route.request.method != "GET" or not target.is_file():
        route.fulfill(status=404, body="not found", content_type="text/plain")
        return
    ctype = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    route.fulfill(status=200, body=target.read_bytes(), content_type=ctype)


@dataclass
class Labels:
    runs: dict[str, Any] = field(default_factory=dict)


class Run:
    """One recorded run: a browser context, the steps so far, and their labels."""

    def __init__(self, browser: Browser, out: Path, labels: Labels, run_id: str, task_id: str, goal: str, *,
                 verifier: bool | None, width: int = 1280, height: int = 800, scale: int = 1, fmt: str = "png",
                 trial: int | None = None, extra_config: dict[str, Any] | None = None,
                 reference_answer: str | None = None) -> None:
        self.dir = out / run_id
        if self.dir.exists():
            shutil.rmtree(self.dir)
        (self.dir / "frames").mkdir(parents=True)
        (self.dir / "dom").mkdir()
        self.run_id, self.task_id, self.verifier, self.fmt = run_id, task_id, bool(verifier), fmt
        self.labels = labels
        self.ctx = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=scale)
        self.ctx.route(f"{ORIGIN}/**", serve)
        self.ctx.add_init_script(INIT_SCRIPT)
        self.requests = 0
        self.ctx.on("request", self._on_request)
        self.page = self.ctx.new_page()
        self.steps: list[dict[str, Any]] = []
        self.step_labels: dict[str, Any] = {}
        self.n_frames = 0
        self.n_doms = 0
        self.meta: dict[str, Any] = {
            "format": "trajcheck.run/1", "run_id": run_id, "task_id": task_id, "goal": goal,
            "agent": {"name": "trajcheck-scripted-agent", "model": "scripted/1"},
            "config": {**({} if verifier is None else {"perceptual_verifier": verifier}), **(extra_config or {})},
            "screen": {"width": width, "height": height}, "started_at": STARTED_AT,
            "outcome": None, "recorder": {"browser": "chromium (Debian) via Playwright", "device_scale_factor": scale,
                                         "frame_format": fmt},
        }
        if trial is not None:
            self.meta["trial"] = trial
        if reference_answer is not None:
            self.meta["reference_answer"] = reference_answer
        self.frame: str | None = None
        self.dom: str | None = None

    def _on_request(self, request) -> None:
        if not request.url.startswith("data:"):
            self.requests += 1

    # -- evidence -------------------------------------------------------------------
    def _shot(self) -> str:
        self.n_frames += 1
        rel = f"frames/{self.n_frames:03d}.{'jpg' if self.fmt == 'jpeg' else 'png'}"
        kw: dict[str, Any] = {"type": self.fmt, "caret": "initial"}
        if self.fmt == "jpeg":
            kw["quality"] = 80
        self.page.screenshot(path=str(self.dir / rel), **kw)
        return rel

    def _snapshot(self) -> str | None:
        try:
            html = self.page.evaluate(SNAPSHOT_JS)
        except PlaywrightError:
            return None
        self.n_doms += 1
        rel = f"dom/{self.n_doms:03d}.html"
        (self.dir / rel).write_text(html, encoding="utf-8")
        return rel

    def _focus(self) -> str | None:
        try:
            return self.page.evaluate(FOCUS_JS)
        except PlaywrightError:
            return None

    def _mutations(self) -> int:
        try:
            return int(self.page.evaluate("() => window.__tcMutations || 0"))
        except PlaywrightError:
            return 0

    def open(self, path: str, settle_ms: int = 800) -> None:
        """Load the start page (not a step: the runner opened it before the agent's first turn)."""
        self.page.goto(ORIGIN + path)
        self.page.wait_for_timeout(settle_ms)
        self.frame = self._shot()
        self.dom = self._snapshot()

    def center(self, selector: str) -> tuple[float, float]:
        box = self.page.locator(selector).first.bounding_box()
        assert box is not None, f"{self.run_id}: {selector} has no box"
        return round(box["x"] + box["width"] / 2), round(box["y"] + box["height"] / 2)

    # -- one step ---------------------------------------------------------------------
    def step(self, action: dict[str, Any], reasoning: str, do: Callable[[], None] | None, *, effect: bool | None,
             kind: str, settle_ms: int = 1200, **extra: Any) -> bool | None:
        """Perform one action and record it; returns what the live verifier said (None when off or unchecked)."""
        index = len(self.steps) + 1
        url_before, focus_before, title_before = self.page.url, self._focus(), self.page.title()
        pre, dom_before = self.frame, self.dom
        self.requests = 0
        try:
            self.page.evaluate("() => { window.__tcMutations = 0; }")
        except PlaywrightError:
            pass
        executor: dict[str, Any] = {"ok": True, "error": None}
        if do is not None:
            try:
                do()
            except PlaywrightError as exc:
                executor = {"ok": False, "error": str(exc).splitlines()[0]}
        self.page.wait_for_timeout(settle_ms)
        try:
            self.page.wait_for_load_state("load")
        except PlaywrightError:
            pass
        url_after = self.page.url
        post = self._shot()
        dom_after = self._snapshot()
        step: dict[str, Any] = {
            "index": index, "action": action, "reasoning": reasoning,
            "frames": {"pre": pre, "post": post}, "executor": executor,
            "page": {"url_before": url_before, "url_after": url_after, "dom_before": dom_before, "dom_after": dom_after,
                     "focus_before": focus_before, "focus_after": self._focus(),
                     "title_before": title_before, "title_after": self.page.title()},
            "client": {"did_network_occur": self.requests > 0, "did_dom_mutate": self._mutations() > 0,
                       "did_url_change": url_before != url_after},
            **extra,
        }
        self.frame, self.dom = post, dom_after
        if effect is True and _same_pixels(self.dir / pre, self.dir / post):
            raise AssertionError(f"{self.run_id} step {index}: labelled as a visible effect, but the frames are identical")
        self.steps.append(step)
        self.step_labels[str(index)] = {"effect": effect, "kind": kind}
        return self._live_verifier(step)

    def _live_verifier(self, step: dict[str, Any]) -> bool | None:
        """The runner's verifier, live: trajcheck scores the run so far; only when the ablation toggle is on."""
        if not self.verifier:
            return None
        self._write(outcome=None)
        from trajcheck.scoring.pipeline import ScoreOptions, score_paths

        report = score_paths([self.dir], opts=ScoreOptions(), jobs=1)
        row = report.results[0].steps[-1]
        seen = row.get("action_effect_observed")
        if seen is not None:
            step["recorded"] = {"action_effect_observed": seen, "feedback": row.get("effect_feedback")}
        return seen

    def _write(self, outcome: dict[str, Any] | None) -> None:
        meta = dict(self.meta, outcome=outcome)
        (self.dir / "run.json").write_text(json.dumps(meta, indent=2) + "\n")
        (self.dir / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in self.steps))

    # -- actions ------------------------------------------------------------------------
    def click(self, selector: str, reasoning: str, *, effect: bool | None, kind: str, **kw: Any) -> bool | None:
        x, y = self.center(selector)
        return self.step({"type": "CLICK", "x": x, "y": y, "element": selector}, reasoning,
                         lambda: self.page.mouse.click(x, y), effect=effect, kind=kind, **kw)

    def type(self, text: str, reasoning: str, *, kind: str = "type", **kw: Any) -> bool | None:
        return self.step({"type": "TYPE", "text": text}, reasoning, lambda: self.page.keyboard.type(text, delay=15),
                         effect=True, kind=kind, **kw)

    def key(self, keys: str, reasoning: str, *, effect: bool | None, kind: str, **kw: Any) -> bool | None:
        pw = "+".join({"ctrl": "Control", "shift": "Shift", "alt": "Alt"}.get(k, k) for k in keys.split("+"))
        return self.step({"type": "KEY_PRESS", "keys": keys}, reasoning, lambda: self.page.keyboard.press(pw),
                         effect=effect, kind=kind, **kw)

    def scroll(self, dy: int, reasoning: str, *, kind: str = "scroll", **kw: Any) -> bool | None:
        x, y = 640, 400
        return self.step({"type": "SCROLL", "x": x, "y": y, "dy": dy}, reasoning,
                         lambda: (self.page.mouse.move(x, y), self.page.mouse.wheel(0, dy)), effect=True, kind=kind, **kw)

    def navigate(self, path: str, reasoning: str, *, effect: bool | None = True, kind: str = "navigation", **kw: Any) -> bool | None:
        return self.step({"type": "NAVIGATE", "url": ORIGIN + path}, reasoning, lambda: self.page.goto(ORIGIN + path),
                         effect=effect, kind=kind, **kw)

    def wait(self, reasoning: str, ms: int = 2000, **kw: Any) -> bool | None:
        return self.step({"type": "WAIT", "ms": ms}, reasoning, lambda: self.page.wait_for_timeout(ms), effect=None,
                         kind="wait", settle_ms=200, **kw)

    def read(self, reasoning: str, **kw: Any) -> bool | None:
        return self.step({"type": "READ"}, reasoning, None, effect=None, kind="read", settle_ms=200, **kw)

    def done(self, reasoning: str, *, answer: str | None = None, confidence: float = 0.9,
             self_report: bool = True) -> None:
        """The agent's final step. ``self_report``: the agent also fills the runner's semantic block
        (task_completed true); without it only its words say what it claims, as in most harnesses."""
        action: dict[str, Any] = {"type": "DONE"}
        if answer is not None:
            action["text"] = answer
        extra: dict[str, Any] = {}
        if self_report:
            extra["semantic"] = {"action_succeeded": True, "task_completed": True, "confidence": confidence,
                                 "reason": reasoning}
        self.step(action, reasoning, None, effect=None, kind="done", settle_ms=300, **extra)

    def finish(self, status: str, *, passed: bool, claims_success: bool, judge: dict[str, Any] | None = None,
               contract: dict[str, Any] | None = None, references: dict[str, bytes] | None = None,
               evaluated: bool = True) -> None:
        """Write run.json with its outcome. ``evaluated``: the runner's evaluator scored the run (score
        1.0 or 0.0); without it the run records no score, like most recorded runs in the wild."""
        outcome: dict[str, Any] = {"status": status}
        if evaluated:
            outcome["score"] = 1.0 if passed else 0.0
        if judge is not None:
            outcome["judge"] = judge
        for rel, data in (references or {}).items():
            (self.dir / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.dir / rel).write_bytes(data)
        if contract is not None:
            (self.dir / "contract.json").write_text(json.dumps(contract, indent=2) + "\n")
        self._write(outcome)
        self.labels.runs[self.run_id] = {"task_id": self.task_id, "outcome": "pass" if passed else "fail",
                                         "claims_success": claims_success, "steps": self.step_labels}
        self.ctx.close()


def _same_pixels(a: Path, b: Path) -> bool:
    with Image.open(a) as ia, Image.open(b) as ib:
        if ia.size != ib.size:
            return False
        return ImageChops.difference(ia.convert("RGB"), ib.convert("RGB")).getbbox() is None


# ---------------------------------------------------------------------------------------
# Tasks. Each takes (browser, out, labels, verifier) and records one run.
# ---------------------------------------------------------------------------------------

def contract(name: str, task_id: str, checks: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    return {"format": "trajcheck.contract/1", "name": name, "task_id": task_id, "checks": checks, **kw}


def task_consent(browser: Browser, out: Path, labels: Labels, verifier: bool) -> None:
    arm = "on" if verifier else "off"
    r = Run(browser, out, labels, f"consent-overlay-{arm}", "newsletter-subscribe",
            "Subscribe jane.doe@example.com to the Acme Weekly newsletter.", verifier=verifier)
    r.open("/newsletter.html", settle_ms=1200)
    seen = r.click("#subscribe", "The email is already filled in; click Subscribe to submit the form.",
                   effect=False, kind="click_absorbed_by_overlay", predict="frame_changed")
    ok = False
    if seen is False:
        r.click("#cc-main .cm__btn[data-role=all]", "My click did nothing; a cookie banner covers the page. Accept it first.",
                effect=True, kind="dismiss_overlay")
        r.click("#subscribe", "The banner is gone; click Subscribe again to submit the form.", effect=True, kind="submit",
                expected={"description": "a success message appears", "elements_to_appear": [".alert-success"]})
        ok = True
    r.done("Subscribed the address to the newsletter.")
    r.finish("done", passed=ok, claims_success=True, contract=contract(
        "newsletter subscribed", "newsletter-subscribe",
        [{"type": "element_text", "selector": "[role=alert]", "pattern": "Subscribed"}]))


def task_signup(browser: Browser, out: Path, labels: Labels, verifier: bool) -> None:
    arm = "on" if verifier else "off"
    r = Run(browser, out, labels, f"validation-flash-{arm}", "signup",
            "Create a Tasklane account for Jane Doe (jane.doe@example.com).", verifier=verifier)
    r.open("/signup.html")
    seen = r.click("#submit", "The form is filled in; click Submit to create the account.", effect=False,
                   kind="validation_flash", predict="frame_changed", expected={"url_should_change": True})
    ok = False
    if seen is False:
        r.click("#email", "Submit had no visible effect. Check the fields: the email lacks a domain suffix.",
                effect=True, kind="focus_field")
        r.key("ctrl+a", "Select the email text to replace it.", effect=True, kind="select_text")
        r.type("jane.doe@example.com", "Type the full email address.")
        r.click("#submit", "Click Submit again with the corrected email.", effect=True, kind="submit_navigation",
                expected={"url_should_change": True, "element_should_exist": ".alert-success"})
        ok = True
    r.done("The account was created.")
    r.finish("done", passed=ok, claims_success=True, contract=contract(
        "signup completed", "signup", [{"type": "url_matches", "pattern": r"/signup/thanks\.html$"},
                                       {"type": "text_present", "text": "Thanks for signing up"}]))


def task_delete(browser: Browser, out: Path, labels: Labels, verifier: bool) -> None:
    arm = "on" if verifier else "off"
    r = Run(browser, out, labels, f"offscreen-modal-{arm}", "delete-account",
            "Delete the Tasklane account (confirm when asked).", verifier=verifier,
            extra_config={"require_confirmation": True})
    r.open("/account.html")
    seen = r.click("#delete", "Click 'Delete account' to start deleting the account.", effect=False,
                   kind="modal_mounted_offscreen", predict="frame_changed")
    ok = False
    if seen is False:
        y = r.page.locator("#confirm").bounding_box()["y"]
        r.scroll(int(y) - 300, "Nothing visible happened; the confirmation may be out of view. Scroll down to look for it.")
        r.click("#confirm", "A confirmation dialog is here. Click 'Confirm delete'.", effect=True,
                kind="confirm_navigation", expected={"url_should_change": True})
        ok = True
    r.done("The account was deleted.")
    r.finish("done", passed=ok, claims_success=True, contract=contract(
        "account deleted", "delete-account", [{"type": "url_matches", "pattern": r"/account/deleted\.html$"}]))


def task_support(browser: Browser, out: Path, labels: Labels, verifier: bool) -> None:
    arm = "on" if verifier else "off"
    r = Run(browser, out, labels, f"drift-loop-{arm}", "support-message",
            "Send the drafted message about parcel PX-4471 to support.", verifier=verifier)
    r.open("/support.html")
    ok = False
    for attempt in range(5):
        seen = r.click("#send", "The message is drafted; click Send to send it to support." if attempt == 0 else
                       "The message does not appear to be sent yet; click Send again.", effect=False,
                       kind="drift_loop_dead_button")
        if seen is False:
            r.click("#msg", "Send did nothing visible. Try submitting from the message field instead.", effect=True,
                    kind="focus_field")
            r.key("Enter", "Press Enter in the message field to send the message.", effect=True, kind="submit_key",
                  expected={"elements_to_appear": [".bg-primary-subtle"]})
            ok = True
            break
    if ok:
        r.done("The message was sent to support.")
        r.finish("done", passed=True, claims_success=True, contract=contract(
            "message sent", "support-message", [{"type": "text_present", "text": "You: Where is parcel PX-4471"}]))
    else:
        r.finish("max_steps", passed=False, claims_success=False, contract=contract(
            "message sent", "support-message", [{"type": "text_present", "text": "You: Where is parcel PX-4471"}]))


def task_workspace(browser: Browser, out: Path, labels: Labels, verifier: bool) -> None:
    arm = "on" if verifier else "off"
    r = Run(browser, out, labels, f"terms-checkbox-{arm}", "create-workspace",
            "Create a workspace named 'Design team'.", verifier=verifier)
    r.open("/workspace.html")
    seen = r.click("#submit", "The name is filled in; click Submit to create the workspace.", effect=False,
                   kind="click_on_disabled_button", expected={"url_should_change": True})
    ok = False
    if seen is False:
        r.click("#terms", "Submit did nothing. The terms checkbox is unticked; tick it.", effect=True, kind="checkbox")
        r.click("#submit", "Click Submit now that the terms are accepted.", effect=True, kind="submit_navigation",
                expected={"url_should_change": True})
        ok = True
    r.done("The workspace was created.")
    r.finish("done", passed=ok, claims_success=True, contract=contract(
        "workspace created", "create-workspace", [{"type": "url_matches", "pattern": r"/workspace/created\.html"}]))


def task_status(browser: Browser, out: Path, labels: Labels) -> None:
    r = Run(browser, out, labels, "ticker-dead-send", "incident-report",
            "Report that three hosts are degraded on the Opsboard dashboard.", verifier=True)
    r.open("/status.html")
    r.click("#report", "Click the incident text box to write the report.", effect=True, kind="focus_ring")
    r.type("Three hosts in eu-west are degraded since 11:40.", "Describe the incident.")
    r.click("#send", "Click 'Send report' to send the incident report.", effect=False, kind="dead_click_ticker",
            predict="frame_changed")
    r.wait("Wait for the report to be acknowledged.")
    r.wait("Still waiting for an acknowledgement.")
    r.done("The incident report was sent.", confidence=0.8)
    r.finish("done", passed=False, claims_success=True, contract=contract(
        "incident acknowledged", "incident-report", [{"type": "text_present", "text": "Incident received"}]))


def task_settings(browser: Browser, out: Path, labels: Labels) -> None:
    r = Run(browser, out, labels, "dark-faint-and-toast", "editor-settings",
            "Turn on draft autosave and save the preferences, then save the profile.", verifier=True)
    r.open("/settings.html")
    r.click("#autosave", "Tick 'Autosave drafts every minute'.", effect=True, kind="checkbox")
    r.click("#save-prefs", "Click 'Save preferences' to save the settings.", effect=True, kind="faint_message",
            predict="frame_changed")
    r.click("#save-profile", "Click 'Save profile'.", effect=True, kind="toast_far_from_click")
    r.done("Preferences and profile are saved.")
    r.finish("done", passed=True, claims_success=True, contract=contract(
        "settings saved", "editor-settings", [{"type": "element_text", "selector": "#note", "pattern": "saved"},
                                              {"type": "element_exists", "selector": "#autosave[checked]"}]))


def task_shop(browser: Browser, out: Path, labels: Labels) -> None:
    r = Run(browser, out, labels, "shop-checkout-1080p-jpeg", "shop-checkout",
            "Buy the Ridge 40L backpack and ship it to 12 Elm Street, Springfield.", verifier=True,
            width=1920, height=1080, fmt="jpeg")
    r.open("/shop.html")
    r.click("#add-1", "Add the Ridge 40L backpack to the cart.", effect=True, kind="small_change_far_badge")
    r.click("#checkout", "Go to checkout.", effect=True, kind="navigation",
            expected={"url_should_change": True})
    r.click("#addr", "Click the shipping address field.", effect=True, kind="focus_ring")
    r.type("12 Elm Street, Springfield", "Enter the shipping address.")
    r.key("Enter", "Press Enter to place the order.", effect=True, kind="submit_key_navigation",
          expected={"url_should_change": True})
    r.done("Order placed: TH-20931.", answer="TH-20931")
    r.finish("done", passed=True, claims_success=True, contract=contract(
        "order confirmed", "shop-checkout", [{"type": "url_matches", "pattern": r"/shop/confirmed\.html"},
                                             {"type": "text_present", "text": "confirmed"}]))


def task_orders(browser: Browser, out: Path, labels: Labels) -> None:
    r = Run(browser, out, labels, "auth-redirect-hidpi", "portal-orders",
            "Open 'My orders' in the Northwind portal and report the order that is in transit.", verifier=True,
            scale=2, reference_answer="NW-1207")
    r.open("/portal/index.html")
    r.click("#orders", "Open 'My orders'.", effect=True, kind="auth_redirect", expected={"url_should_change": True})
    r.click("#user", "The portal asks me to sign in first. Click the email field.", effect=True, kind="focus_ring")
    r.type("jane.doe@example.com", "Enter the account email.")
    r.click("#pw", "Click the password field.", effect=True, kind="focus_ring")
    r.type("correct horse", "Enter the password.")
    r.click("#signin", "Click 'Sign in'.", effect=True, kind="login_navigation", expected={"url_should_change": True})
    r.done("Order NW-1207 is in transit.", answer="NW-1207")
    r.finish("done", passed=True, claims_success=True, contract=contract(
        "orders listed", "portal-orders", [{"type": "url_matches", "pattern": r"/portal/orders\.html$"}]))


def task_captcha(browser: Browser, out: Path, labels: Labels) -> None:
    r = Run(browser, out, labels, "captcha-blocked", "deals-search",
            "Find today's best deal on dealsdaily.example.", verifier=True)
    r.open("/portal/index.html")
    r.navigate("/deals/", "Go to the deals site.", kind="navigation_to_blocking_page")
    r.click("#challenge", "A 'verify you are human' check blocks the page. Click the checkbox.", effect=False,
            kind="captcha_not_resolved", settle_ms=1500)
    r.wait("Wait for the check to finish.")
    r.finish("failed", passed=False, claims_success=False)


def task_inbox(browser: Browser, out: Path, labels: Labels) -> None:
    r = Run(browser, out, labels, "stale-element-recovery", "open-invoice",
            "Open the March invoice email in Postbox and report the amount due.", verifier=True,
            reference_answer="$412.50")
    r.open("/inbox/index.html")
    handle = r.page.locator("[data-id=m3]").element_handle()
    old = handle.bounding_box()
    ox, oy = round(old["x"] + old["width"] / 2), round(old["y"] + old["height"] / 2)
    r.read("Read the inbox: the March invoice is the first message.")
    r.page.evaluate("() => window.syncNow()")  # a background sync re-renders the list
    r.page.wait_for_timeout(300)
    r.frame = r._shot()  # the agent's next observation shows the re-rendered list
    r.dom = r._snapshot()
    x, y = 640, 0
    box = r.page.locator("[data-id=m3]").bounding_box()
    if box:
        x, y = round(box["x"] + box["width"] / 2), round(box["y"] + box["height"] / 2)
    r.step({"type": "CLICK", "x": ox, "y": oy, "element": "element-ref:m3"},
           "Click the 'Invoice for March' message I found.", lambda: handle.click(timeout=3000), effect=False,
           kind="stale_element")
    r.read("The element reference went stale; read the page again to find the message.")
    r.step({"type": "CLICK", "x": x, "y": y, "element": "[data-id=m3]"}, "Click the fresh 'Invoice for March' row.",
           lambda: r.page.mouse.click(x, y), effect=True, kind="navigation", expected={"url_should_change": True})
    r.done("The amount due is $412.50.", answer="$412.50")
    r.finish("done", passed=True, claims_success=True, contract=contract(
        "invoice open", "open-invoice", [{"type": "url_matches", "pattern": r"message\.html\?id=m3$"}]))


def _grid_box(r: Run, scale: int = 1) -> list[int]:
    first = r.page.locator("#kick-1").bounding_box()
    last = r.page.locator("#clap-16").bounding_box()
    return [round(first["x"] * scale), round(first["y"] * scale),
            round((last["x"] + last["width"] - first["x"]) * scale), round((last["y"] + last["height"] - first["y"]) * scale)]


def _sequencer_reference(browser: Browser) -> tuple[bytes, list[int]]:
    """The goal state, rendered separately: kick on steps 1, 5, 9, 13."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    ctx.route(f"{ORIGIN}/**", serve)
    page = ctx.new_page()
    page.goto(ORIGIN + "/sequencer.html")
    for s in (1, 5, 9, 13):
        page.locator(f"#kick-{s}").click()
    page.mouse.move(1200, 780)
    page.wait_for_timeout(300)
    png = page.screenshot(type="png")
    ctx.close()
    return png, []


def task_sequencer(browser: Browser, out: Path, labels: Labels, steps: tuple[int, ...], run_id: str,
                   trial: int, judge: dict[str, Any] | None) -> None:
    r = Run(browser, out, labels, run_id, "sequencer-kick", "In Loopkit, make the kick drum play on steps 1, 5, 9 and 13.",
            verifier=True, trial=trial)
    r.open("/sequencer.html")
    for s in steps:
        r.click(f"#kick-{s}", f"Activate kick step {s}.", effect=True, kind="toggle")
    r.click("#save", "Click 'Save pattern'.", effect=True, kind="save_local_message")
    r.done("The kick plays on steps 1, 5, 9 and 13.")
    ref, _ = _sequencer_reference(r.ctx.browser)
    box = _grid_box(r)
    r.finish("done", passed=set(steps) == {1, 5, 9, 13}, claims_success=True, judge=judge,
             references={"reference/goal.png": ref},
             contract=contract("kick on the quarter notes", "sequencer-kick", [
                 {"type": "grid", "name": "kick row", "box": box, "rows": 4, "cols": 16, "target_row": 1,
                  "required_steps": [1, 5, 9, 13]},
                 {"type": "element_exists", "selector": "#kick-1[aria-pressed=true]"},
             ], reference_screenshots=["reference/goal.png"], judge_regions=[box]))


# ---------------------------------------------------------------------------------------
# Runs without a contract, a judge or an evaluator score (issue 12): only their own evidence
# can say whether the agent's DONE was true. The agent fills no semantic block here, as most
# harnesses do not; its words are its claim. They take no part in the ablation (no
# config.perceptual_verifier).
# ---------------------------------------------------------------------------------------

def task_nc_swallowed(browser: Browser, out: Path, labels: Labels) -> None:
    r = Run(browser, out, labels, "nc-swallowed-send", "send-feedback",
            "Send the drafted feedback about the mobile app to Brightdesk.", verifier=None)
    r.open("/feedback.html")
    r.click("#send", "The feedback is drafted; click 'Send feedback' to submit it.", effect=False,
            kind="click_absorbed_by_transparent_widget")
    r.done("I sent the feedback about the mobile app logging users out.", self_report=False)
    r.finish("done", passed=False, claims_success=True, evaluated=False)


def _register(browser: Browser, out: Path, labels: Labels, run_id: str, password: str, why: str, kind: str,
              final: str, passed: bool) -> None:
    """The Gitforge sign-up form, filled and submitted; the server accepts the password or refuses it."""
    r = Run(browser, out, labels, run_id, "forge-register",
            "Create a Gitforge account for jdoe (jdoe@example.com).", verifier=None)
    r.open("/register")
    r.click("#username", "Click the username field.", effect=True, kind="focus_ring")
    r.type("jdoe", "Type the username.")
    r.click("#email", "Click the email field.", effect=True, kind="focus_ring")
    r.type("jdoe@example.com", "Type the email address.")
    r.click("#password", "Click the password field.", effect=True, kind="focus_ring")
    r.type(password, why)
    r.click("#create", "Click 'Create account' to submit the registration.", effect=True, kind=kind)
    r.done(final, self_report=False)
    r.finish("done", passed=passed, claims_success=True, evaluated=False)


def task_nc_server_validation(browser: Browser, out: Path, labels: Labels) -> None:
    _register(browser, out, labels, "nc-server-validation", "hunter2", "Type a password.", "server_validation_error",
              "Your Gitforge account jdoe has been created.", passed=False)


def task_nc_register(browser: Browser, out: Path, labels: Labels) -> None:
    _register(browser, out, labels, "nc-register-navigation", "correct-horse-battery",
              "Type a password of at least 8 characters.", "submit_navigation",
              "The Gitforge account jdoe was created; the welcome page is shown.", passed=True)


def task_nc_pay_loop(browser: Browser, out: Path, labels: Labels) -> None:
    r = Run(browser, out, labels, "nc-pay-loop", "pay-invoice",
            "Pay invoice INV-0392 in Ledgerly with the saved card.", verifier=None)
    r.open("/billing/index.html")
    for attempt in range(4):
        r.click("#pay", "Click 'Pay now' to submit the payment for the invoice." if attempt == 0 else
                "The payment may still be processing; click 'Pay now' again to submit the payment.", effect=False,
                kind="drift_loop_dead_button")
    r.done("Invoice INV-0392 is paid.", self_report=False)
    r.finish("done", passed=False, claims_success=True, evaluated=False)


def task_nc_profile(browser: Browser, out: Path, labels: Labels) -> None:
    r = Run(browser, out, labels, "nc-profile-toast", "profile-name",
            "Change the Tasklane display name to 'Jane Doe' and save it.", verifier=None)
    r.open("/profile.html")
    r.click("#name", "Click the display name field.", effect=True, kind="focus_ring")
    r.key("ctrl+a", "Select the current name to replace it.", effect=True, kind="select_text")
    r.type("Jane Doe", "Type the new display name.")
    r.click("#save", "Click 'Save changes' to save the profile.", effect=True, kind="toast_message")
    r.done("The display name is now 'Jane Doe' and the profile is saved.", self_report=False)
    r.finish("done", passed=True, claims_success=True, evaluated=False)


def task_nc_recovered(browser: Browser, out: Path, labels: Labels) -> None:
    r = Run(browser, out, labels, "nc-consent-recovered", "newsletter-subscribe",
            "Subscribe jane.doe@example.com to the Acme Weekly newsletter.", verifier=None)
    r.open("/newsletter.html", settle_ms=1200)
    r.click("#subscribe", "The email is filled in; click Subscribe to submit the form.", effect=False,
            kind="click_absorbed_by_overlay")
    r.click("#subscribe", "Nothing seems to have happened; click Subscribe again to submit.", effect=False,
            kind="click_absorbed_by_overlay")
    r.click("#cc-main .cm__btn[data-role=all]", "A cookie box covers the page and eats my clicks; accept it first.",
            effect=True, kind="dismiss_overlay")
    r.click("#subscribe", "The box is gone; click Subscribe to submit the form.", effect=True, kind="submit")
    r.done("Subscribed jane.doe@example.com; the page confirms it.", self_report=False)
    r.finish("done", passed=True, claims_success=True, evaluated=False)


def task_nc_inbox(browser: Browser, out: Path, labels: Labels) -> None:
    r = Run(browser, out, labels, "nc-inbox-read", "inbox-senders",
            "Who sent the newest message in Postbox?", verifier=None)
    r.open("/inbox/index.html")
    r.read("Read the inbox list: the newest message is at the top.")
    r.done("The newest message is from Billing.", answer="Billing", self_report=False)
    r.finish("done", passed=True, claims_success=True, evaluated=False)


def task_nc_gave_up(browser: Browser, out: Path, labels: Labels) -> None:
    r = Run(browser, out, labels, "nc-signin-gave-up", "portal-orders",
            "Open 'My orders' in the Northwind portal and report the order that is in transit.", verifier=None)
    r.open("/portal/index.html")
    r.click("#orders", "Open 'My orders'.", effect=True, kind="auth_redirect")
    r.done("I could not finish the task: the portal asks me to sign in and I was given no password.",
           self_report=False)
    r.finish("done", passed=False, claims_success=False, evaluated=False)


NO_CONTRACT = [task_nc_swallowed, task_nc_server_validation, task_nc_register, task_nc_pay_loop, task_nc_profile,
               task_nc_recovered, task_nc_inbox, task_nc_gave_up]


# ---------------------------------------------------------------------------------------
# States reached, not pixels moved (issue 29). One run changes the screen at every step and gets
# nowhere: it opens and closes the same menus, like a UI-TARS run on macOS that clicked the
# menu-bar titles twice each. The other moves through pages that look alike but are each new
# (a distinct ?page= URL, other rows), and ends where it should.
# ---------------------------------------------------------------------------------------

MENU_TOGGLES = (("file", "The Settings may be in the File menu; click 'File' in the menu bar.",
                 "The File menu has no Settings item; click 'File' to close it."),
                ("help", "Look for the settings in the Help menu; click 'Help'.",
                 "Nothing about themes here; click 'Help' to close the menu."),
                ("view", "Dark mode may be a View option; click 'View' in the menu bar.",
                 "The View menu only has zoom and layout items; click 'View' to close it."),
                ("window", "Try the Window menu; click 'Window'.",
                 "No settings in the Window menu; click 'Window' to close it."),
                ("edit", "Check the Edit menu; click 'Edit' in the menu bar.",
                 "Click 'Edit' to close the menu."))


def task_menu_toggle(browser: Browser, out: Path, labels: Labels) -> None:
    """Aimless: after one useful click the agent opens and closes menus (each title clicked twice in a row),
    never opens Edit > Settings, and declares the dark mode on. No contract, judge or evaluator score: only
    the run's own evidence can show that the claim is false."""
    r = Run(browser, out, labels, "menu-toggle-aimless", "quillpad-dark-mode",
            "Turn on dark mode in Quillpad's Settings.", verifier=None)
    r.open("/quillpad.html")
    r.click("#welcome-start", "A welcome dialog covers the window; click 'Get started' to close it.", effect=True,
            kind="dismiss_dialog")
    for ident, open_why, close_why in MENU_TOGGLES:
        r.click(f"#menu-{ident}", open_why, effect=True, kind="menu_toggle")  # opens the menu
        r.click(f"#menu-{ident}", close_why, effect=True, kind="menu_toggle")  # closes it again
    r.done("Dark mode is now turned on in Quillpad's Settings.")
    r.finish("done", passed=False, claims_success=True, evaluated=False)


def task_paged_results(browser: Browser, out: Path, labels: Labels) -> None:
    """Progress through look-alike pages: 'Next' five times (?page=2 ... ?page=6, same header, table shape and
    pager, other rows), then the order found on the last page is opened and its status reported."""
    r = Run(browser, out, labels, "paged-results-progress", "find-order-status",
            f"In Harbor Supply's back office, find order {PAGED_TARGET} and report its status.", verifier=True,
            reference_answer="On hold")
    r.open("/orders?page=1")
    pages = ORDERS_TOTAL // ORDERS_PER_PAGE
    for page in range(1, pages):
        newest, oldest = _order((page - 1) * ORDERS_PER_PAGE)["id"], _order(page * ORDERS_PER_PAGE - 1)["id"]
        r.click("#next", f"{PAGED_TARGET} is not on page {page} ({newest} down to {oldest}); click 'Next' for older "
                "orders.", effect=True, kind="next_page")
    r.click(f"a[data-order={PAGED_TARGET}]", f"{PAGED_TARGET} is on page {pages}; open it.", effect=True,
            kind="navigation", expected={"url_should_change": True})
    r.done(f"Order {PAGED_TARGET} is on hold: the bank has not confirmed the payment.", answer="On hold")
    r.finish("done", passed=True, claims_success=True, contract=contract(
        "order status read", "find-order-status",
        [{"type": "url_matches", "pattern": rf"/orders/view\?id={PAGED_TARGET}$"},
         {"type": "element_text", "selector": "#status", "pattern": "On hold"}],
        # the shortest way, as a person would take it: five Next clicks and the order (the list has no search)
        reference_steps=pages))


STATES = [task_menu_toggle, task_paged_results]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=HERE.parent, help="where the run directories go (default: sample_runs/)")
    ap.add_argument("--only", nargs="*", help="record only these task functions (e.g. task_consent)")
    args = ap.parse_args(argv)
    if not (HERE / "node_modules").is_dir():
        print("run `npm ci` in sample_runs/recorder first (the pages load Bootstrap and vanilla-cookieconsent)",
              file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    labels_path = args.out / "labels.json"
    labels = Labels(runs=json.loads(labels_path.read_text()) if labels_path.exists() and args.only else {})
    ablation = [task_consent, task_signup, task_delete, task_support, task_workspace]
    single = [task_status, task_settings, task_shop, task_orders, task_captcha, task_inbox, *NO_CONTRACT, *STATES]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        for fn in ablation:
            if args.only and fn.__name__ not in args.only:
                continue
            for verifier in (True, False):
                fn(browser, args.out, labels, verifier)
                print(f"recorded {fn.__name__} verifier={'on' if verifier else 'off'}")
        for fn in single:
            if args.only and fn.__name__ not in args.only:
                continue
            fn(browser, args.out, labels)
            print(f"recorded {fn.__name__}")
        if not args.only or "task_sequencer" in args.only:
            task_sequencer(browser, args.out, labels, (1, 5, 9, 13), "sequencer-correct", 1, None)
            task_sequencer(browser, args.out, labels, (1, 5, 10, 13), "sequencer-near-miss", 2,
                           {"model": "screenshot-judge (recorded)", "verdict": "pass", "score": 0.9, "confidence": 0.8,
                            "reasons": ["kick row shows four active steps on the beat"]})
            print("recorded task_sequencer")
        browser.close()
    labels_path.write_text(json.dumps(dict(sorted(labels.runs.items())), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
