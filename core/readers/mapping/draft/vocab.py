"""What a drafted mapping guesses from names: a log's action names as trajcheck's types, and which keys of a
step or a run hold the action, its point, text, reasoning, screenshot, the goal and a recorded outcome."""

from __future__ import annotations

import re
from typing import Any

from ..schema import action_key

#: A log's action names (lower case, spaces and dashes as ``_``) -> trajcheck's types.
ACTIONS = {
    "CLICK": ("click", "left_click", "tap", "click_element", "click_text", "touch", "left_single", "single_click",
              "click_at", "mouse_click", "select", "click_button", "press_button", "left"),
    "DOUBLE_CLICK": ("double_click", "doubleclick", "left_double", "double_tap"),
    "RIGHT_CLICK": ("right_click", "right_single", "context_click"),
    "TRIPLE_CLICK": ("triple_click",),
    "LONG_PRESS": ("long_press", "long_click", "press_and_hold"),
    "TYPE": ("type", "input", "type_text", "typing", "input_text", "write", "enter_text", "fill", "text", "typewrite",
             "send_keys", "set_text"),
    "KEY_PRESS": ("key", "hotkey", "keypress", "press_key", "key_press", "press", "keyboard", "keydown", "enter",
                  "press_enter", "home", "press_home", "clear_input", "clear_text", "clear_field",
                  "keyboard_press"),
    "SCROLL": ("scroll", "scroll_down", "scroll_up", "swipe", "page_down", "page_up", "swipe_up", "swipe_down",
               "scroll_left", "scroll_right", "wheel"),
    "WAIT": ("wait", "sleep", "screenshot", "noop", "no_op", "pause"),
    "DONE": ("done", "finish", "finished", "stop", "complete", "completed", "answer", "terminate", "end",
             "task_complete", "exit", "submit_answer", "respond", "final_answer", "status_task_complete"),
    "FAIL": ("fail", "infeasible", "give_up", "status_task_impossible"),
    "NAVIGATE": ("navigate", "goto", "go_to", "open_url", "visit", "back", "go_back", "open_app", "launch",
                 "launch_app", "open", "press_back", "navigate_back", "go_forward", "new_tab", "url",
                 "open_application"),
    "DRAG": ("drag", "left_click_drag", "drag_to", "drag_and_drop"),
    "MOUSE_MOVE": ("move", "mouse_move", "hover", "move_to", "moveto"),
}
SYNONYMS = {name: t for t, names in ACTIONS.items() for name in names}

ACTION_KEYS = ("action_type", "action", "actions", "type", "name", "operation", "act", "op", "command", "tool",
               "function",
               "action_name", "kind", "event")
POINT_KEYS = ("coordinate", "coordinates", "coords", "point", "position", "pos", "location", "start_box", "xy")
X_KEYS, Y_KEYS = ("x", "x_coord", "left", "col"), ("y", "y_coord", "top", "row")
TEXT_KEYS = ("text", "content", "value", "input", "typed_text", "keys_text", "string", "query")
KEYS_KEYS = ("keys", "key", "hotkey", "combo")
THOUGHT_KEYS = ("thought", "thoughts", "reasoning", "reason", "thinking", "rationale", "explanation", "plan",
                "analysis", "response", "think", "reflection")
SHOT_KEYS = ("screenshot", "screenshot_path", "screenshot_file", "image", "image_path", "img", "obs", "observation",
             "screen", "frame", "before_screenshot", "screenshot_before")
GOAL_KEYS = ("task", "task_prompt", "goal", "instruction", "intent", "query", "prompt", "question", "objective",
             "task_description",
             "instructions", "user_request", "confirmed_task")
SUCCESS_KEYS = ("success", "is_success", "succeeded", "passed", "pass", "task_success", "completed", "resolved",
                "correct", "solved", "eval_success", "successful")
SCORE_KEYS = ("score", "reward", "eval_score", "final_score", "result_score")
URL_KEYS = ("url", "page_url", "current_url")


def norm(name: str) -> str:
    """A log's action name as the vocabulary looks it up (``Stop.`` as ``stop``): the mapping's own rule."""
    return action_key(name)


def type_of(name: str) -> tuple[str | None, str]:
    """trajcheck's type for a log's action name and how sure the guess is: ``name`` (a known name), ``word`` (by
    its first word), or ``""`` (none: None)."""
    n = norm(name)
    if n in SYNONYMS:
        return SYNONYMS[n], "name"
    camel = norm(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name))  # ClearInput as clear_input
    if camel in SYNONYMS:
        return SYNONYMS[camel], "name"
    bare = re.sub(r"_?action$", "", n)  # WaitAction, click_action
    if bare in SYNONYMS:
        return SYNONYMS[bare], "name"
    first = n.split("_", 1)[0]
    if first in SYNONYMS:
        return SYNONYMS[first], "word"
    return None, ""


def pick(keys: dict[str, Any], names: tuple[str, ...]) -> str | None:
    """The first of ``names`` (case-insensitive) among ``keys``: the key as the log spells it."""
    lower = {k.lower(): k for k in keys}
    return next((lower[n] for n in names if n in lower), None)


def jkey(key: str) -> str:
    """A key as a JMESPath identifier (quoted where it is not a plain name)."""
    return key if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else '"' + key.replace('"', '\\"') + '"'


def toml_str(s: str) -> str:
    """A TOML string: a literal ('...') where it can be, else a basic one with every control character escaped
    (text from a log never reaches a terminal as a control code)."""
    if "'" not in s and not any(ord(c) < 32 or 127 <= ord(c) < 160 for c in s):
        return f"'{s}'"
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 32 or 127 <= ord(c) < 160:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'
