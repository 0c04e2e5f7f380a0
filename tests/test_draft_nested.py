"""draft-mapping on shapes that nest their steps and name their screenshots by id (issue 47: the unedited draft
on harnesses the project has never seen). Synthetic logs, each built from what a real one does (Midscene's
`{dump: {executions: [{tasks}]}, images}`) but with other names, so that the rules are general."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

from PIL import Image

from trajcheck.commands import draft_mapping


def _png(k: int) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (40, 40), (k * 20 % 256, 10, 10)).save(buf, "PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _run(d: Path, after_first: bool = True, names: tuple[str, str] = ("seen", "later")) -> None:
    """One log: a session holding a list of records (thinking calls and actions), each naming its screens by id
    into `frames`. With ``after_first``, each action's screen after is the next action's screen before (the chain
    the draft reads); the field names say nothing of before or after."""
    d.mkdir(parents=True)
    records, frames = [], {}
    acts = [("touch", [5, 6], None), ("write", [5, 6], "hello"), ("touch", [30, 8], None), ("scroll", None, None)]
    for i, (name, pt, text) in enumerate(acts):
        frames[f"f{i}"], frames[f"f{i + 1}"] = _png(i), _png(i + 1)
        records.append({"kind": "think", "what": "Plan", "detail": {"note": "x"}, names[0]: {"ref": f"f{i}"}})
        rec = {"kind": "act", "what": name, "detail": {"target": {"middle": pt} if pt else {}},
               names[0]: {"ref": f"f{i}"}, names[1]: {"ref": f"f{i + 1}"}}
        if text:
            rec["detail"]["value"] = text
        records.append(rec)
    d.joinpath("session.json").write_text(json.dumps({"report": {"sessions": [{"title": "the goal", "log": records}]},
                                                      "frames": frames}))


def test_a_nested_list_of_records_is_flattened_filtered_and_its_screens_found_by_id(tmp_path):
    for n in range(2):
        _run(tmp_path / f"r{n}")
    d = draft_mapping(tmp_path, check=True)
    assert "steps = \"report.sessions[].log[] | [?kind=='act']\"" in d.text, d.text
    assert "type = { path = 'what'" in d.text  # the field whose values are actions, not `kind`
    assert "images = 'frames'" in d.text
    # neutral names: the chain of ids says which is the screen after (3 of 3 a run, twice)
    assert "screenshot = 'seen.ref'" in d.text and "screenshot_after = 'later.ref'" in d.text
    c = d.coverage
    assert c is not None and (c["actions"], c["actions_understood"]) == (8, 8)
    assert (c["screenshots"], c["screenshots_found"]) == (10, 10)


def test_the_chain_decides_before_and_after_whatever_the_names(tmp_path):
    # the field named `later` holds the screen before, `seen` the screen after: the chain, not the names, decides
    for n in range(2):
        _run(tmp_path / f"r{n}", names=("later", "seen"))
    d = draft_mapping(tmp_path)
    assert "screenshot = 'later.ref'" in d.text and "screenshot_after = 'seen.ref'" in d.text, d.text


def test_a_list_of_steps_each_holding_a_few_sub_records_is_not_flattened(tmp_path):
    # steps that look like steps (an action, a point) each holding a list of logs: the steps stay the steps
    for n in range(2):
        d = tmp_path / f"r{n}"
        d.mkdir()
        steps = [{"action": "click", "coordinate": [i, i], "logs": [{"t": 1}, {"t": 2}, {"t": 3}]} for i in range(3)]
        d.joinpath("log.json").write_text(json.dumps({"steps": steps}))
    text = draft_mapping(tmp_path).text
    assert "steps = 'steps'" in text, text


def test_a_call_that_ends_every_run_is_drafted_done_unsure_and_holds_the_verdicts(tmp_path):
    # `wrapup` has no type and no word that says it concludes, but it is the last action of both runs
    for n in range(2):
        d = tmp_path / f"r{n}"
        d.mkdir()
        steps = [{"action": "click", "coordinate": [i, i]} for i in range(3)] + [{"action": "wrapup"}]
        d.joinpath("log.json").write_text(json.dumps({"steps": steps}))
    d = draft_mapping(tmp_path, check=True)
    assert "'wrapup' = 'DONE'    # UNSURE: drafted as DONE by its place alone" in d.text, d.text
    assert "unsure = ['actions'" in d.text
    assert d.verdicts == {"unknown": 2}
    # one run is not evidence enough for a name that does not say it concludes
    one = tmp_path / "one"
    one.mkdir()
    (tmp_path / "r0" / "log.json").rename(one / "log.json")
    text = draft_mapping(one).text
    assert "'wrapup' = ?" in text and "unsure = ['actions'" not in text, text
