"""Issue 47: a drafted mapping types an action by what the harness's own prompt says it does, when the prompt sits
beside the runs (a README or prompt file in the folder) or inside the log (a member holding the prompt): an
action that goes back to the home screen is not an answer, one that ends the task is, with the prompt's line
quoted as the evidence. Synthetic folders, and the real AppAgent logs (tests/fixtures/real/appagent), whose
prompt names FINISH as the answer though no run of the fixture reaches it."""

from __future__ import annotations

import json
from pathlib import Path

from trajcheck.commands import draft_mapping
from trajcheck.readers.mapping.draft import prompt
from trajcheck.readers.mapping.schema import Mapping

from conftest import ROOT

#: A phone harness's action list, worded as Mobile-Agent v1's prompt words it (MobileAgent/prompt.py).
PHONE_PROMPT = """You are operating a phone. The instruction is given below.
You can perform the following 4 actions:
1. open App (parameter). Click on the name of an App on your desktop home page.
2. click text (parameter). The parameter is the text you need to click.
7. exit. Exit the app and go back to the desktop.
8. stop. If you think you have completed the instruction, then you can stop the whole process.
"""


def phone_runs(root: Path, endings: list[list[str]]) -> None:
    """Runs in Mobile-Agent's shape (``<n>/data.json``: {"1": {"Thought", "Action"}, ...}), one per list of
    actions."""
    for n, actions in enumerate(endings, 1):
        d = root / str(n)
        d.mkdir(parents=True)
        d.joinpath("data.json").write_text(json.dumps(
            {str(i): {"Thought": "next", "Action": a} for i, a in enumerate(actions, 1)}))


def types_of(text: str) -> dict[str, str]:
    """The ``[step.types]`` lines of a draft: name -> the whole line."""
    body = text.split("[step.types]", 1)[1].split("\n[", 1)[0]
    return {ln.split(" = ")[0].strip("'\""): ln for ln in body.splitlines()[1:] if " = " in ln}


RUNS = [["open App (Gmail)", "click text (Compose)", "exit"], ["open App (Notes)", "exit"],
        ["open App (Clock)", "click text (Alarm)", "stop"]]


def test_without_its_prompt_an_exit_that_ends_runs_is_drafted_as_their_answer(tmp_path):
    phone_runs(tmp_path / "results", RUNS)
    got = types_of(draft_mapping(tmp_path / "results").text)
    assert got["exit"].startswith("'exit' = 'DONE'") and "prompt" not in got["exit"]


def test_a_readme_beside_the_runs_says_exit_goes_home_and_stop_answers(tmp_path):
    phone_runs(tmp_path / "results", RUNS)
    (tmp_path / "results" / "README.md").write_text("# Phone runs\n\nThe agent was prompted so:\n\n" + PHONE_PROMPT)
    text = draft_mapping(tmp_path / "results").text
    got = types_of(text)
    assert got["exit"] == ("'exit' = 'NAVIGATE'    # the harness's prompt (README.md): '7. exit. Exit the app and go "
                           "back to the desktop.'"), text
    assert got["stop"] == ("'stop' = 'DONE'    # the harness's prompt (README.md): '8. stop. If you think you have "
                           "completed the instruction, then you can stop the whole process.'")
    assert got["open App"].startswith("'open App' = 'NAVIGATE'") and "prompt" not in got["open App"]
    # a prompt file in a run folder is read as well (the first that decides a name wins)
    (tmp_path / "results" / "README.md").unlink()
    (tmp_path / "results" / "2" / "system_prompt.txt").write_text(PHONE_PROMPT)
    assert "(2/system_prompt.txt)" in types_of(draft_mapping(tmp_path / "results").text)["exit"]


def test_a_prompt_inside_the_log_types_actions_the_vocabulary_does_not_know(tmp_path):
    system = ("You control a phone with these calls:\n- tap(x, y): tap the point.\n- leave(): return to the home "
              "screen.\n- report(text): give the final answer to the user and end the task.\n")
    for n in range(3):
        d = tmp_path / f"run{n}"
        d.mkdir()
        steps = [{"action": "tap", "coordinate": [10, 20]}, {"action": "leave"}, {"action": "tap", "coordinate": [5, 5]},
                 {"action": "report", "text": "done it"}]
        d.joinpath("log.json").write_text(json.dumps({"task": "x", "system_prompt": system, "steps": steps}))
    text = draft_mapping(tmp_path).text
    got = types_of(text)
    assert got["leave"].startswith("'leave' = 'NAVIGATE'    # the harness's prompt (the log's 'system_prompt' "
                                   "member): '- leave(): return to the home screen.'"), text
    assert got["report"].startswith("'report' = 'DONE'    # the harness's prompt"), text
    assert got["tap"].startswith("'tap' = 'CLICK'") and "prompt" not in got["tap"]
    assert "UNSURE: no type guessed" not in text


def test_a_prompt_is_data_quoted_on_one_line_without_control_codes(tmp_path):
    phone_runs(tmp_path / "results", RUNS)
    (tmp_path / "results" / "prompt.txt").write_text(
        "exit: go back to the home screen \x1b[31m[bold red]now[/bold red]\x07 ''' \"\"\"\n"
        "stop: the task is complete; stop here\r\n" + "x" * 500_000)
    text = draft_mapping(tmp_path / "results").text
    line = types_of(text)["exit"]
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert line.startswith("'exit' = 'NAVIGATE'") and "?[31m[bold red]now[/bold red]?" in line
    m = tmp_path / "drafted.toml"
    m.write_text(text)
    assert Mapping(m).types["exit"] == "NAVIGATE"  # the quote does not break the TOML


def test_a_description_that_both_answers_and_goes_home_decides_nothing_nor_does_a_heading():
    texts = [("p", "quit: finish the task and go back to the home screen\n"
                   "Observation: describe what you see\nThought: plan how to complete the task\n")]
    assert "quit" not in prompt.meanings(texts)
    types = {"quit": ("DONE", "")}
    assert prompt.apply(types, texts) == [] and types == {"quit": ("DONE", "")}  # "Thought:" is not added


def test_the_real_appagent_prompt_names_finish_as_its_answer():
    """AppAgent's log holds the prompt of each call; neither fixture run reached FINISH, which its prompt defines
    in a sentence, not a list ("... you should output FINISH.")."""
    text = draft_mapping(ROOT / "tests/fixtures/real/appagent").text
    got = types_of(text)
    assert got["FINISH"] == ("'FINISH' = 'DONE'    # the harness's prompt (the log's 'prompt' member): 'If you "
                             "believe the task is completed or there is nothing to be done, you should output "
                             "FINISH.'"), text
    assert set(got) == {"FINISH", "tap"}  # its headings (Action:, Summary:) are not actions


def test_a_definition_padded_with_blanks_is_read_as_with_one():
    # Lines padded with runs of blanks are read with each run as one blank: the same meaning, and the pattern's
    # optional blanks in a row have one way to match (unpadded, a 2000-blank line took 7 s of backtracking)
    padded = "7.   exit" + " " * 1500 + ".   Exit the app and go back to the desktop.\n" + "ab" + " " * 1999 + "x"
    said = prompt.meanings([("prompt.txt", padded)])
    assert {k: (m.type, m.quote) for k, m in said.items()} == {
        "exit": ("NAVIGATE", "7. exit . Exit the app and go back to the desktop.")}
