"""Record the test run ``validation-flash-seen`` (tests/fixtures/modes/): validation-flash-off's task, but the
screenshot after Submit is taken while the 600 ms validation message is still shown; a WAIT then shows it gone,
the agent clicks Submit again (the message comes and goes before the screenshot: nothing changed) and declares
success. The message appeared after the decisive action, briefly: the application said no, not a dead button.

Usage (from the repository root, with ``npm ci`` done in sample_runs/recorder)::

    python sample_runs/recorder/record_flash_seen.py --out tests/fixtures/modes
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import CHROMIUM, FLAGS, Labels, Run, contract  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    labels = Labels()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        r = Run(browser, args.out, labels, "validation-flash-seen", "signup",
                "Create a Tasklane account for Jane Doe (jane.doe@example.com).", verifier=None)
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
