"""Record the test runs of tests/fixtures/modes/ (issue 51, item 4).

``validation-flash-seen``: validation-flash-off's task, but the
screenshot after Submit is taken while the 600 ms validation message is still shown; a WAIT then shows it gone,
the agent clicks Submit again (the message comes and goes before the screenshot: nothing changed) and declares
success. The message appeared after the decisive action, briefly: the application said no, not a dead button.

``dark-field-error`` (``--dark-field``): a dark page with white input fields (pages/signup-dark.html); Submit with
an email that lacks its domain's suffix brings up "Error: email is invalid" in 12 px light red on the dark ground
and clears the form's fields around it, and the agent declares success. The changed region holds both grounds: the error text is found only when the dark
ground is read inverted (trajcheck.media.ocrpolarity).

Usage (from the repository root, with ``npm ci`` done in sample_runs/recorder)::

    python sample_runs/recorder/record_flash_seen.py --out tests/fixtures/modes
    python sample_runs/recorder/record_flash_seen.py --out tests/fixtures/modes --dark-field
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import CHROMIUM, FLAGS, Labels, Run, contract  # noqa: E402


def dark_field(browser: Any, out: Path, labels: Labels) -> None:
    r = Run(browser, out, labels, "dark-field-error", "signup-dark",
            "Create a Nightdesk account for jane.doe@example.com.", verifier=None)
    r.open("/signup-dark.html")
    r.click("#submit", "The form is ready; click Submit to create the account.", effect=True,
            kind="dark_field_error", predict="frame_changed", expected={"url_should_change": True})
    r.done("The account was created.")
    r.finish("done", passed=False, claims_success=True, contract=contract(
        "signup completed", "signup-dark", [{"type": "url_matches", "pattern": r"/signup/thanks\.html$"}]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--dark", action="store_true", help="Bootstrap's dark theme (data-bs-theme=dark): light text "
                                                        "on a dark page; the run is validation-flash-seen-dark")
    ap.add_argument("--dark-field", action="store_true", help="record dark-field-error instead")
    args = ap.parse_args(argv)
    labels = Labels()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        if args.dark_field:
            dark_field(browser, args.out, labels)
            browser.close()
            return 0
        name = "validation-flash-seen-dark" if args.dark else "validation-flash-seen"
        r = Run(browser, args.out, labels, name, "signup",
                "Create a Tasklane account for Jane Doe (jane.doe@example.com).", verifier=None)
        if args.dark:
            r.ctx.add_init_script("document.addEventListener('DOMContentLoaded', () => "
                                  "document.documentElement.setAttribute('data-bs-theme', 'dark'));")
        r.open("/signup.html")
        # 150 ms after the click: the message (shown for 600 ms) is on the screenshot
        r.click("#submit", "The form is filled in; click Submit to create the account.", effect=True,
                kind="validation_flash_seen", settle_ms=150, predict="frame_changed",
                expected={"url_should_change": True})
        r.wait("Wait for the account to be created.", ms=1500)
        r.click("#submit", "Nothing happened; click Submit again.", effect=False, kind="validation_flash",
                predict="frame_changed", expected={"url_should_change": True})
        r.done("The account was created.")
        r.finish("done", passed=False, claims_success=True, contract=contract(
            "signup completed", "signup", [{"type": "url_matches", "pattern": r"/signup/thanks\.html$"},
                                           {"type": "text_present", "text": "Thanks for signing up"}]))
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
