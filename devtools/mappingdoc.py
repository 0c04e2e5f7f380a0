# ruff: noqa: E501  (markdown tables: one row a line)
"""The "Logs of any other shape: mapping files" section of docs/formats.md (appended by
:mod:`devtools.formatsdoc`): the whole mapping file format, and what its expressions cannot do."""

from __future__ import annotations

MAPPING_DOC = r'''## Mapping files: logs of any other shape, read with --mapping

A harness trajcheck has no reader for is read through a *mapping file*: a TOML file that says where the
log's steps are and, for a step, its action, point, text, reasoning and screenshots. `trajcheck
draft-mapping FOLDER` writes one from a sample of the runs (what it is unsure of is a comment marked
`UNSURE`); `--check` reads and scores the folder with it and prints the actions understood, the
screenshots found and the runs read. docs/mappings/ holds mappings of real harnesses and of the shapes
the tests read.

```sh
trajcheck draft-mapping runs/ > mine.toml      # a draft from at most --sample runs (20), spread over runs/
trajcheck draft-mapping runs/ --check          # ... read and scored with it: how much of runs/ it reads
trajcheck validate runs/ --mapping mine.toml   # every problem score would report, duplicate run_ids included
trajcheck score runs/ --mapping mine.toml --out LEDGER
```

Every folder holding a file that matches `[run] files` (or `step_files`) and whose steps expression gives
at least one step is one run, read as `mapping:<file stem>@<hash of the mapping>` (`runs.source_format`;
editing the mapping rescores its runs). A run's id is the log's `run_id` field, else its path under the
folder given to `score` (`Gmail/2`): runs in nested folders never collide. The mapping is the call's own: it
travels with the score options, so `--engine dask` workers read the runs through it (they need not see the
file), and a later call without `--mapping` does not use it.

### Fields

A field is a [JMESPath](https://jmespath.org) expression (`"action.point[0]"`) or a table:

| key | what it does |
|---|---|
| `path` | JMESPath to the value (default `@`, the whole step) |
| `regex` | a regular expression searched in the value (a string; another value as its JSON text); the field is the named group of the field's name (`(?P<text>...)`), else `group` (a name or a number), else the first group that matched, else the whole match; stripped of surrounding blanks |
| `parse` | the value is text holding data: `json`, `python` (a Python literal, read with `ast.literal_eval`: never evaluated, no call, no name) or `auto` (JSON, else a Python literal); a value that does not parse is nothing |
| `then` | JMESPath applied to the parsed value |
| `value` | a template (below) instead of `path`: the step's place |
| `for` | the action types the field applies to (`["TYPE", "NAVIGATE"]`): it is read only for them, and a run with none of them does not warn that it matched nothing |

```toml
text = { path = "Action", regex = 'type \((?P<text>.*)\)', for = ["TYPE"] }
action = { path = "@", regex = '(?s)<action>(.*)</action>', parse = "python" }
x = { path = "rest", regex = 'at \((?P<x>\d+), *\d+\)' }   # numbers written as text are numbers
```

A field that matches nothing in any step of a run (where it applies) is a `mapping_matches_nothing`
warning naming the field; `[run] steps` that gives nothing makes the run invalid, and with no run read,
`validate` and `score` say what the first files hold (their top-level keys, a list, or "not JSON").

### `[run]`: where the steps are

| key | meaning |
|---|---|
| `files` | the log's file name in a run folder (a glob; the first match is read; default `*.json`, `*.log` with `lines` or `blocks`); a `.csv` or `.tsv` file is its rows, a `.jsonl` file, or one under any name whose first two lines are each a JSON object or array (AppAgent's `log_*.txt`), is JSON Lines: the list of its lines |
| `steps` | JMESPath to the steps: a list, or an object whose members are the steps in natural key order (`{"1": ..., "2": ...}`; the member's key is the step's `{key}`) |
| `members` | with an object: a regular expression the member keys must match (others are not steps) |
| `lines` | the log is text: each line this regular expression matches is a step, its named groups the step's fields (`line` is the whole line) |
| `blocks` | the log is text and a step spans several lines: each match of this regular expression over the whole text is a step, its named groups the step's fields and `block` the whole match (fields cut more out of it: `{ path = "block", regex = ... }`); e.g. `'(?ms)^## Step (?P<step>\d+)$.*?(?=^## Step|\Z)'`, from each heading to the next |
| `chat` | `true`: `steps` gives a message list; the turns of one role are the steps (`[chat]` below) |
| `step_files` | one file per step: a glob relative to the run folder, in natural order (`step_10` after `step_9`); with `steps`, each file gives that expression's list (a file may give none: `[@][?status=='acting']` keeps the acting calls of a log that records every model call) |
| `step_files_not` | a glob of file names `step_files` matches that are not steps (`*_neg_eval.json`) |
| `goal_file` | the goal as a text file in the run folder |
| `run_id`, `task_id`, `goal`, `model`, `screen_width`, `screen_height` | fields of the log (of the first step file; of a text log read with `lines` or `blocks`: of `{text = the log's text}`, so `goal = { path = "text", regex = '(?m)^Task: (?P<goal>.*)$' }`) |
| `wall_seconds`, `cost_usd`, `tokens_input`, `tokens_output` | the run's recorded elapsed seconds, cost in USD and token totals (`runs` columns of time and spend; a number written as text is a number) |
| `screen` | `[width, height]` when the log records none |
| `coordinates` | the space of the log's points (below) |

Logs that are text: a `*.csv` log (`*.tsv`: tab-separated) is read with Python's `csv` module, as the list of
its rows, each an object of its columns by the header's names (`steps = "@"`; `type = "action"` names a
column; a number written in a cell is a number). An HTML log (`*.html`, `*.htm`, or text that starts as an
HTML document) is parsed with an HTML5 parser (selectolax) and read as its text: each block element on its own
lines, scripts, styles and the head left out, and each `<img>` as a line `![alt](src)`, its `src` a path or an
inline `data:` URL, as a Markdown log writes an image; `lines` and `blocks` see that text. A Markdown or plain
log is read as it is. `blocks` and every field's `regex` are matched with the `regex` library under a time
limit: a pattern that backtracks without end ends the run's read (`blocks`) or gives nothing with a
`mapping_matches_nothing` warning (a field), never a hang. At most 1,000,000 rows or blocks are steps.

With `step_files`, a file that gives no step still gives its screenshot (`[step] screenshot`) as the screen
after the step before it: a judging call's screenshot is the post frame of the action it judges.

`[chat]` (with `chat = true`): `role` (JMESPath to a message's role, default `role`), `steps` (the role of the
step turns, default `assistant`), `image` (a regular expression naming an image in the other turns, default
`\bimage_\d+\b`) and `image_file` (a template of its file, `{name}.png`; by default the name with the first
of .png, .jpg, .jpeg, .webp that exists beside the log). A step's value is its message plus
`content_text` (its text, or its text parts joined); the last image of the other turns before it is its
pre frame, the first one after it its post frame. Inline images (data: URLs, base64) and paths ending in an
image suffix count too.

### `[step]`: what a step did

| key | meaning |
|---|---|
| `type` | the log's name for the action; `[step.types]` maps names to trajcheck's types (a name not there is kept when it upper-cases to one trajcheck knows, else the step is `UNKNOWN` with an `action_unparsed` warning naming it) |
| `grammar` | `ui-tars`, `anthropic`, `openai`, `pyautogui` or `webarena`: the value of `action` (default: the step, or a chat turn's `content_text`) is parsed as trajcheck's readers parse it: a UI-TARS reply (`Thought: ... Action: click(start_box='(1,2)')`) or its parsed structure; a `computer` tool call, its input or a list of calls; an OpenAI `computer_call` or its action; pyautogui code (with `ast`, never run) or `DONE`/`FAIL`/`WAIT`; WebArena's and VisualWebArena's id-based actions (`click [8]`, `hover [8]`, `type [12] [text] [1]`, `press [Meta+a]`, `scroll [down]`, `goto [url]`, `new_tab`, `go_back`, `go_forward`, `tab_focus [1]`, `close_tab`, `stop [answer]`, and `none`, the harness's no-op for a reply it could not parse: `WAIT`), alone or in a reply's first ``` fence: the element id is the action's `element` (its target), never a point. A reply may have a section after its action (`Summary: ...`), and a bare name (`FINISH`) is a call without arguments. A value holding several actions (a list of calls, a reply with several) gives one step per action that acts (look-only calls beside them, a screenshot, give none), in order: the first has the log step's screen before, its reasoning and cost, the last its screen after; each has `extra.log_step` and `extra.action_of` = [k, n]. A call the grammar does not know (`tap(6)`) is typed by `[step.types]`. Fields given beside it (`type`, `x`, `text`...) override what the grammar found for the first action (with `type`, the step has that one action); the reply's thought is the reasoning unless `reasoning` is given |
| `x`, `y`, `keys`, `text`, `url`, `url_after`, `reasoning`, `error` | fields |
| `target` | the element the action names (an id, a label, a selector, its text): the action's `element`, kept in the step record (the loop and follow-up checks compare it) |
| `scroll_direction`, `scroll_amount` | a scroll's direction (`up`, `down`, `left`, `right`) and amount: the action's `extra.direction` and `extra.amount`, as the built-in readers keep them |
| `url_before` | the URL of the page the step acted on (the page it saw); without `url_after`, a step's URL after is the next step's `url_before` (the last step's is unknown) |
| `screenshot` | a path inside the run folder (relative to a step file's folder), base64 or a data: URL (a text log's `![alt](src)`: `{ path = "block", regex = '!\[[^\]]*\]\((?P<screenshot>[^)]+)\)' }`; a screenshot field's regex sees as much text as one inline frame at the frame size limit, 64 MiB decoded); a harness's annotated copy (`3_labeled.png`, `_som`, `_annotated`, `_marked`...) is read as the screenshot it was made from (`3.png`) when that file is beside it: the screen as it was; with `pre`, the screen after the last step is the file named like the last one with its last number one higher, when it exists |
| `screenshot_file` | a template of the screenshot's file name; with `screenshot_after_file`, the pre and post frames from two templates (`step_{step:02}.png`, `step_{step:02}_action.png`) |
| `screenshots` | a glob of screenshots paired with the steps by position (natural order; `screenshots_offset` skips some) |
| `screenshot_is` | `pre` (the screen the step acted on, default) or `post`; with one screenshot a step, a step's other frame is its neighbour's, and the screen after the last step (before the first) is used when its file exists |
| `tokens_input`, `tokens_output`, `tokens_cached`, `tokens_reasoning`, `cost_usd`, `wall_seconds`, `timestamp` | what the step's model call used and its time, where the log records them (nothing is estimated) |

Templates name the step's place and its fields: `{index}` (from 0), `{index1}` and `{n}` (from 1), `{key}`
(an object member's key), `{stem}` (a step file's name without suffix) and any field of the step
(`{step}`, a named group of a text line); `{n:02}` pads with zeros, `{index+1}` adds an offset. A template
with a name the step does not have names no file.

### Coordinates

`[run] coordinates` declares the space of the points: `screen` (or `pixels`), `screenshot`,
`relative-1000` (0-1000 across the screen), `smart-resize` (UI-TARS-1.5's), or `model`: the image the model
saw, given by `model_scale` (screenshot pixels per model pixel: `1.25` for a 1280x800 model space of
1600x1000 screenshots) or `model_size` (`[1280, 800]`, scaled to the screen or the first screenshot).
Undeclared, the points decide as the built-in readers decide: with `grammar = "ui-tars"` among
relative-1000, smart-resize, screen and screenshot (default relative-1000; smart-resize for a `model` named
UI-TARS 1.5); otherwise between the screen (when the log or `screen` gives its size) and the first
screenshot. A relative grid is never guessed for a pixel harness: declare it. Where several spaces fit
every point, the default is used with a `coord_space_ambiguous` warning. `runs.coord_space` and
`runs.coord_space_source` say which and how.

### `[outcome]`: a recorded result is the evaluator

```toml
[outcome]
success = "success"        # a flag: true/false, "success"/"fail", "passed", 1/0 ...
score = "reward"           # ... or a score (1 passes; score --evaluator-pass lowers it)
file = "results.json"      # optional: a results file in the run's folder or one above it (nearest first,
                           # up to the folder given to score)
records = "runs"           # the records in it: a list, or an object keyed by the run's name
key = "run"                # a record's name: JMESPath, or a template of its fields ("{task}_{condition}")
joins = "folder"           # what the name is: folder (the run folder's name), path (under the scored
                           # folder), run_id, task_id or goal
```

Without `file`, `success` and `score` are read from the log. The result becomes `runs.outcome_score` and the
referee takes it as the benchmark's own evaluator (`verdict_source` `evaluator`), above the evidence and the
no-answer rule: a harness that stops as soon as its own check passes ends without a DONE, and its recorded
success decides. The agent's own words (a DONE, "task completed") are never read as an outcome: they are the
claim that is checked.

### What the expressions cannot do

- A step holding several actions is several steps only through a grammar; a list of action objects read
  with fields (`type = "actions[0].type"`) gives its first action, the one the fields name.
- No arithmetic and no joins across steps or files, except the screenshot pairing above, the one results
  file of `[outcome]`, a template's offset and a step's URL after from the next step's. A point computed from
  two fields, a screenshot named by a time stamp the log does not record: these need a reader.
- A field's regex sees one string (with `lines`: one line; with `blocks`: the step's block); values are cut at
  1 MiB (a screenshot's at the frame size limit), and each search has a time limit of 1 s.
- An HTML log is read as its text and its images' `src`: its tags, classes and attributes are not fields.
- Embedded data is JSON or a Python literal: no expressions, calls or names (they parse to nothing).
- `files` reads the first matching log of a folder: a folder of several runs' files is one run; one run a
  folder is needed (or `step_files` for one file a step).
- `draft-mapping` first asks the readers trajcheck has: when one reads every run under the folder, it drafts
  nothing and names that reader ("no mapping is needed: the webvoyager reader reads these runs (trajcheck
  formats webvoyager)"). On a text log (HTML, Markdown, CSV, plain) it drafts `blocks` from a short line that
  repeats (a heading, a separator) when blocks hold actions, the action from a labelled line (`Action: ...`)
  or the last line that starts with an action's name, the image, a labelled thought (up to the next label),
  URL, time and target, and the goal and model from the lines above the first block; an unlabelled thought is
  left to you (`UNSURE`).
- `draft-mapping` guesses from names and shapes in a sample: a vocabulary it has no type for is left to you
  (`UNSURE`), the coordinate space of a resized model image cannot be seen in the data, and a results file
  is found only beside the runs when its records name the run folders or their paths.
'''
