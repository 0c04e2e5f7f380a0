"""Four harness log shapes (issue 38's table), made from their descriptions as tiny folders of runs with real
PNG/JPEG screenshots: each builder writes the runs under a folder and returns what a full read must find."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

COLOURS = [(200, 30, 30), (30, 200, 30), (30, 30, 200), (200, 200, 30), (30, 200, 200), (200, 30, 200),
           (120, 120, 120), (240, 240, 240)]


def shot(path: Path, i: int, size: tuple[int, int] = (320, 200)) -> None:
    """A real image (PNG or JPEG by the suffix), one colour per ``i`` with a block that moves."""
    path.parent.mkdir(parents=True, exist_ok=True)
    im = Image.new("RGB", size, COLOURS[i % len(COLOURS)])
    im.paste((0, 0, 0), (10 * i % size[0], 10, 10 * i % size[0] + 20, 30))
    im.save(path, "JPEG" if path.suffix.lower() in (".jpg", ".jpeg") else "PNG")


def ui_tars_chat(root: Path, runs: int = 2) -> dict[str, int]:
    """(a) A UI-TARS-1.5 rollout saved as a chat list: final_messages.json with system, user and assistant
    messages; assistant turns are UI-TARS replies; user turns reference the next screenshot by name
    ("image_0002"), and image_0002.png sits beside the log."""
    replies = ["Thought: The settings icon is at the top.\nAction: click(start_box='(100,200)')",
               "Thought: I type the name.\nAction: type(content='hello world')",
               "Thought: Save with the shortcut.\nAction: hotkey(key='ctrl s')",
               "Thought: Scroll to the result.\nAction: scroll(start_box='(640,400)', direction='down')",
               "Thought: It is saved.\nAction: finished(content='saved')"]
    for r in range(runs):
        d = root / f"rollout-{r}"
        msgs: list[dict[str, object]] = [{"role": "system", "content": "You are a GUI agent."}]
        for i, reply in enumerate(replies):
            name = f"image_{i + 1:04d}"
            shot(d / f"{name}.png", i + r, (1280, 800))
            parts: list[dict[str, object]] = [{"type": "image_url", "image_url": {"url": name}}]
            if i == 0:
                parts.insert(0, {"type": "text", "text": "Rename the file to hello world and save it."})
            msgs.append({"role": "user", "content": parts})
            msgs.append({"role": "assistant", "content": reply})
        (d / "final_messages.json").write_text(json.dumps(msgs, indent=1))
    return {"runs": runs, "actions": runs * len(replies), "screenshots": runs * len(replies)}


PHONE = [("open App (Chrome)", "The app is closed."), ("click text (Sign in)", "A sign-in button."),
         ("type (alice@example.com)", "An email field."), ("page down", "More below."), ("back", "Wrong page."),
         ("click text (Next)", "Next button."), ("stop", "Done.")]


def phone_agent(root: Path) -> dict[str, int]:
    """(b) Phone-agent runs in nested folders results/<App>/<n>/data.json = {"1": {Observation, Thought, Action},
    ...}, actions as strings, N.jpg the screen before step N (and one more after the last step)."""
    runs = actions = shots = 0
    for app, n_runs in (("Gmail", 3), ("Maps", 2)):
        for n in range(1, n_runs + 1):
            d = root / "results" / app / str(n)
            steps = PHONE[: 4 + n]
            data = {str(k): {"Observation": obs, "Thought": f"step {k}", "Action": act}
                    for k, (act, obs) in enumerate(steps, 1)}
            (d).mkdir(parents=True)
            (d / "data.json").write_text(json.dumps(data, indent=1))
            for k in range(1, len(steps) + 2):
                shot(d / f"{k}.jpg", k + n, (216, 384))
            runs, actions, shots = runs + 1, actions + len(steps), shots + len(steps) + 1
    return {"runs": runs, "actions": actions, "screenshots": shots}


LOG_LINES = ["Step 01: left_click - at (251, 37)", "Step 02: type - text: hello world", "Step 03: key - keys: ctrl+s",
             "Step 04: scroll - at (640, 400) down", "Step 05: left_click - at (900, 610)"]


def actions_log(root: Path) -> dict[str, int]:
    """(c) Computer-use runs with a plain-text actions.log, step_NN.png before and step_NN_action.png after each
    action, and beside the runs a results JSON with each run's success, task and condition. The harness stops
    as soon as its own state check passes: no run ends with DONE."""
    results = []
    for r, (task, cond, ok) in enumerate((("rename", "baseline", True), ("rename", "verifier", True),
                                          ("upload", "baseline", False), ("upload", "verifier", True))):
        d = root / "runs" / f"{task}_{cond}"
        d.mkdir(parents=True)
        n = 3 + r % 3
        (d / "actions.log").write_text("starting episode\n" + "\n".join(LOG_LINES[:n]) + "\nstate check: "
                                       + ("passed" if ok else "failed") + "\n")
        for i in range(1, n + 1):
            shot(d / f"step_{i:02d}.png", i + r, (1280, 800))
            shot(d / f"step_{i:02d}_action.png", i + r + 1, (1280, 800))
        results.append({"run": d.name, "task": task, "condition": cond, "success": ok})
    (root / "runs" / "results.json").write_text(json.dumps(results, indent=1))
    return {"runs": 4, "actions": sum(3 + r % 3 for r in range(4)), "screenshots": 2 * sum(3 + r % 3 for r in range(4)),
            "passed": 3}


CALLS = [("I open the menu.", {"action": "left_click", "coordinate": [290, 177]}),
         ("I type the query.", {"action": "type", "text": "weather"}),
         ("Submit it.", {"action": "key", "text": "Return"}),
         ("Look at the result.", {"action": "left_click", "coordinate": [640, 300]})]


def tool_call_strings(root: Path) -> dict[str, int]:
    """(d) result.json whose steps are strings holding a thought and a Python-literal list of tool calls, with
    screenshots trajectory/1.png... by position (one before each step, one after the last); points in a model
    space scaled 1.25 from the screenshot (1280x800 for 1600x1000 screenshots), which the log never records."""
    for r in range(2):
        d = root / f"episode_{r}"
        steps = [f"{thought}\n<action>{[{'name': 'computer', 'input': inp}]!r}</action>" for thought, inp in CALLS]
        (d / "trajectory").mkdir(parents=True)
        (d / "result.json").write_text(json.dumps({"task": "Find the weather", "steps": steps}, indent=1))
        for i in range(1, len(CALLS) + 2):
            shot(d / "trajectory" / f"{i}.png", i + r, (1600, 1000))
    return {"runs": 2, "actions": 2 * len(CALLS), "screenshots": 2 * (len(CALLS) + 1)}
