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
| `run_id`, `task_id`, `goal`, `model`, `screen_width`, `screen_height` | fields of the log (of the first step file; of a text log read with `lines` or `blocks`: of `{text = the log's text}`, so `goal = { path = "text", regex = '(?m)^Task: (?P<goal>.*)$' }`), or templates of the groups of `path` (`task_id = { value = "task-{task}" }`) |
| `path` | a regular expression with named groups, searched in the run folder's path (below): values the harness writes into its folder names |
| `[run.config]` | config values of the run (`runs.config`, read by `--by config.NAME`): each a field of the log or a template of the groups of `path` (`condition = { value = "{condition}" }`) |
| `wall_seconds`, `cost_usd`, `tokens_input`, `tokens_output` | the run's recorded elapsed seconds, cost in USD and token totals (`runs` columns of time and spend; a number written as text is a number) |
| `images` | JMESPath to a map of id -> image in the log (`{"3f2a...": "data:image/jpeg;base64,..."}`; a value may be base64, a data: URL or a path inside the run folder): a step's `screenshot` or `screenshot_after` that is one of its ids stands for its image. Only the images a step names are decoded, each once, each within the inline frame size limit (64 MiB); `--check` counts as the log's screenshots the map's images that the steps name (by any of their values) |
| `screen` | `[width, height]` when the log records none |
| `coordinates` | the space of the log's points (below) |
| `ends` | how the harness ends a run: `"answer"` or `"external"` (below) |
| `unsure` | the readings of the log its screenshots did not decide: a list of `alignment` (which screenshot is each step's), `coordinates` (the space of the points), `actions` (what an action name means). A run read through the mapping is warned `reading_unsure` and gets no verdict of its own evidence nor of the no-answer rule (unknown, `not_read`); a contract, the benchmark's evaluator and a judge still decide. `draft-mapping` writes it (below); remove a reading once checked by eye |

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

### `[run] path`: values from the run folder's name

A harness often writes what a run was into its folder's name: a start time, a condition, a task, a run number
(`results/2025-03-01_12-30-05_gpt4o_task-17_run2/`). `path` is a regular expression whose named groups take
them. It is *searched* (anchor it with `^` and `$` to match the whole) in the run folder's path relative to the
folder given to `score`, with `/` between folders: `2025-03-01_12-30-05_gpt4o_task-17_run2` when `results/` is
given, `results/2025-...` when the folder above it is, the folder's own name when the run folder itself is.
Its groups are the names the run fields' templates, `[run.config]` and `[outcome.join]` use; a group that took
nothing is no value, and a run whose path it does not match gets a `mapping_matches_nothing` warning (field
`run.path`) and none of those values.

```toml
[run]
path = '(?P<time>[^_]+_[^_]+)_(?P<condition>[^_]+)_task-(?P<task>\d+)_run(?P<run>\d+)$'
task_id = { value = "task-{task}" }        # runs.task_id = "task-17"
goal = { value = "suite task {task}" }     # a field of the log, when it has one, is the better goal

[run.config]
condition = { value = "{condition}" }      # runs.config = {"condition": "gpt4o"}: --by config.condition
```

`draft-mapping` drafts `path` when the run folders' names share a structure: cut at `_` (a time stamp kept
whole), every name has as many fields; a field equal in all is written as it is, digits after the same word
in all (`task-17`, `run2`) are that word and a group named after it (`task`, `run`), the time stamp is
`time`, another field that varies is `condition`; the expression must match every run folder's name and one
group must vary. It then looks for a results file (CSV, TSV, JSON, JSON Lines) in the folders above the runs
whose records hold a success flag or a score, matches each group to the record field holding most of its
values (at least half, compared as `[outcome.join]` compares them, with a prefix such as `task-` when the
values carry one), and writes `[outcome.join]` with its count ("3 of 4 runs find their record"), the groups
no field holds left out and named. Runs without a record and records without a run are UNSURE. A join that
would give two runs one record (fields matched by chance, or a key not specific enough) is not written.

### `[step]`: what a step did

| key | meaning |
|---|---|
| `type` | the log's name for the action; `[step.types]` maps names to trajcheck's types (names are matched as written, in lower case, then without the punctuation around them: `stop.` and `Stop` find `stop`; a name not there is kept when it upper-cases to one trajcheck knows, else the step is `UNKNOWN` with an `action_unparsed` warning naming it) |
| `grammar` | `ui-tars`, `anthropic`, `openai`, `pyautogui` or `webarena`: the value of `action` (default: the step, or a chat turn's `content_text`) is parsed as trajcheck's readers parse it: a UI-TARS reply (`Thought: ... Action: click(start_box='(1,2)')`) or its parsed structure; a `computer` tool call, its input or a list of calls; an OpenAI `computer_call` or its action; pyautogui code (with `ast`, never run) or `DONE`/`FAIL`/`WAIT`; WebArena's and VisualWebArena's id-based actions (`click [8]`, `hover [8]`, `type [12] [text] [1]`, `press [Meta+a]`, `scroll [down]`, `goto [url]`, `new_tab`, `go_back`, `go_forward`, `tab_focus [1]`, `close_tab`, `stop [answer]`, and `none`, the harness's no-op for a reply it could not parse: `WAIT`), alone or in a reply's first ``` fence: the element id is the action's `element` (its target), never a point. A reply may have a section after its action (`Summary: ...`), and a bare name (`FINISH`) is a call without arguments. A value holding several actions (a list of calls, a reply with several) gives one step per action that acts (look-only calls beside them, a screenshot, give none), in order: the first has the log step's screen before, its reasoning and cost, the last its screen after; each has `extra.log_step` and `extra.action_of` = [k, n]. A call the grammar does not know (`tap(6)`) is typed by `[step.types]`. Fields given beside it (`type`, `x`, `text`...) override what the grammar found for the first action (with `type`, the step has that one action); the reply's thought is the reasoning unless `reasoning` is given |
| `x`, `y`, `keys`, `text`, `url`, `url_after`, `reasoning`, `error` | fields |
| `target` | the element the action names (an id, a label, a selector, its text): the action's `element`, kept in the step record (the loop and follow-up checks compare it) |
| `scroll_direction`, `scroll_amount` | a scroll's direction (`up`, `down`, `left`, `right`) and amount: the action's `extra.direction` and `extra.amount`, as the built-in readers keep them |
| `url_before` | the URL of the page the step acted on (the page it saw); without `url_after`, a step's URL after is the next step's `url_before` (the last step's is unknown) |
| `screenshot` | a path inside the run folder (relative to a step file's folder), base64 or a data: URL (a text log's `![alt](src)`: `{ path = "block", regex = '!\[[^\]]*\]\((?P<screenshot>[^)]+)\)' }`; a screenshot field's regex sees as much text as one inline frame at the frame size limit, 64 MiB decoded); a harness's annotated copy (`3_labeled.png`, `_som`, `_annotated`, `_marked`...) is read as the screenshot it was made from (`3.png`) when that file is beside it: the screen as it was; with `pre`, the screen after the last step is the file named like the last one with its last number one higher, when it exists |
| `screenshot_after` | a field: the screen after the step, where each step names its own (a path, base64, a data: URL or an id of `[run] images`); `screenshot` is then the screen before (`screenshot_is` stays `pre`, no `screenshots_offset`), and a step without one takes the next step's screen before |
| `screenshot_file` | a template of the screenshot's file name; with `screenshot_after_file`, the pre and post frames from two templates (`step_{step:02}.png`, `step_{step:02}_action.png`) |
| `screenshots` | a glob of screenshots paired with the steps by position (natural order) |
| `screenshots_offset` | a whole number: each step's screenshot is the one `screenshots_offset` steps later gives (`screenshot`, `screenshot_file` or `screenshots`; not a chat's images): `1` when each step names the screen one step before the one it acted on, `-1` one step after; past either end, the file named like its neighbour with its last number one higher (lower) when it exists |
| `screenshot_is` | `pre` (the screen the step acted on, default) or `post`; with one screenshot a step, a step's other frame is its neighbour's, and the screen after the last step (before the first) is used when its file exists |
| `tokens_input`, `tokens_output`, `tokens_cached`, `tokens_reasoning`, `cost_usd`, `wall_seconds`, `timestamp` | what the step's model call used and its time, where the log records them (nothing is estimated) |
| `harness_stop` | the answers that are the harness's own stop, not the agent's (below, "How runs end"): a regular expression searched in the text of each answer (`'^(?:Early stop\|ERROR): '`), or a field of the step (`{ path = "stopped_by", regex = '.+' }`: the answer is the harness's where it gives a value) |

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

### How runs end

`[run] ends` declares how the harness ends a run: `"answer"` when it ends one only by the agent's answer (a
DONE, a FAIL, an infeasible report) or by a limit that cuts the agent off (a step or time budget, a crash);
`"external"` when it may also stop a run itself (its own state check passed, a person stopped it). Only under
`"answer"` is a run that ended without an answer failed (`verdict_source` `no_answer`); under `"external"`
it is `unknown` (`harness_may_stop`), and with no `ends`, `unknown` too (`ends_undeclared`): a mapping that
does not say never fails a run for the answer it did not give. `draft-mapping` never declares it: it writes
the key commented out, with how many of the sampled runs end in an answer (a sample cannot show that the
harness never stops a run itself). `trajcheck validate` says, for each reader (a mapping or a built-in one)
and declaration, how many runs end without an answer and what the declaration makes of them, as a line of
information on stderr (`endings` in its JSON), not a finding:

```
2 of 10 runs read by mapping:harness@1a2b3c4d end without an answer; declared ends = answer: they fail for no answer unless another source decides
```

A harness that stops a run itself may write its stop as an answer: VisualWebArena's `run.py` writes `stop
[Early stop: Reach max steps 30]` (or `Failed to parse actions for 3 times`, `Same action for 5 times`) when its
early-stop rules fire, and `stop [ERROR: ...]` when the agent raised. Read as the agent's answer, the harness
giving up is a claim of success. `[step] harness_stop` says which answers are the harness's, and
`[step.types]` may type an action name `HARNESS_STOP` when the harness has its own (`max_steps_reached =
"HARNESS_STOP"`). Such a step stays in the run as what it did to the screen, nothing (a `WAIT`, with the
harness's words in its action's `extra.harness_stop`), and the run records `extra.harness_stop` = `{"step":
13, "text": "Early stop: ..."}`. The run then ended without an answer of the agent's, and `ends` says what
that means. `draft-mapping` writes `harness_stop`, marked UNSURE with the answers it saw, when a sampled run's
last answer starts as harnesses word their own messages (an early stop, an error or exception, a time-out, a
step, turn or iteration limit, a budget exceeded, an abort); an answer that only mentions an error later on
stays the agent's.

### Readings checked against the screenshots

What a log means is chosen by what its screenshots show. Under the right frame alignment and the right
coordinate space, a click changes the screen where it lands (a blob of the pixel diff, other than rendering
noise, within 8 px of the point) and typing changes it on the line of the last click. `draft-mapping` reads
the sampled runs through its draft with the points as logged and counts, for each candidate, the clicks and
typing that land: `pre`, `post`, `pre` with `screenshots_offset = 1` and `post` with `-1` (every pairing
within one step of `pre` or `post`);
the spaces `screenshot`, `model` with `model_scale` 1.25, 1.5, 2, 0.8, 0.667 or 0.5, `relative-1000` and
`smart-resize` (those that put every point within 8 px or 1% of another are one). A reading is chosen only
when, against every other, it wins the actions on which the two disagree by a one-sided sign test at 1%
shared among the comparisons (7 of 7 decide between two readings; 10 against 6 do not: the module
docstring of `trajcheck.analyzers.readings`). The choice is written with its counts:

```toml
screenshot_is = 'post'   # clicks and typing change the screen where they land: 41 of 50 as post; 23 of 68 as pre; ...
coordinates = 'model'
model_scale = 1.25   # clicks and typing change the screen where they land: 56 of 69 as model_scale 1.25; 21 of 69 as screenshot; ...
```

A log whose steps each name the screenshot taken one step before the screen they acted on is drafted so:

```toml
screenshot_is = 'pre'   # clicks and typing change the screen where they land: 56 of 68 as pre, offset +1; 24 of 50 as pre; 10 of 37 as post; 8 of 24 as post, offset -1
screenshots_offset = 1   # each step's screenshot is the one the step after it names: ...
```

Where the counts do not separate the readings (clicks that change nothing, too few of them), the line says
`UNSURE` with them and `[run] unsure` names the reading, so the runs' verdicts are held until a person has
looked. An action name drafted as DONE that most runs it appears in go on after (an `exit` that goes back to
the home screen) is left out of `[step.types]` with why.

The harness's own prompt, where it sits beside the runs, says what its actions mean: a text file named as a
prompt or a README (`prompt.txt`, `system_prompt.md`, `README.md`) in a sampled run folder or a folder above
it, or a member of the log that holds the prompt (`prompt`, `system_prompt`, a chat's `system` turn). A line
that defines an action (`exit: go back to the home screen`, `- stop(answer): ...`, `8. stop. If you think you
have completed the instruction, ...`, a call alone on its line with its description on the next) or a
sentence that tells the model to output a name when the task is complete (AppAgent's "If you believe the task
is completed ..., you should output FINISH.") types that name: one that goes home or back is `NAVIGATE`, not
DONE; one that ends the task is `DONE`, even when no sampled run used it. A name drafted as another action (a
click) is left as drafted, and a description that says both decides nothing. The line is quoted as the
evidence, on one line, with every character that is not printable replaced (the prompt is data, read in
bounded amounts):

```toml
'exit' = 'NAVIGATE'    # the harness's prompt (README.md): '7. exit. Exit the app and go back to the desktop.'
'FINISH' = 'DONE'    # the harness's prompt (the log's 'prompt' member): 'If you believe the task is completed or there is nothing to be done, you should output FINISH.'
``` `trajcheck validate` makes the same count over up to
20 runs of each reader, a mapping or a built-in one, and warns `reading_contradicted` where another
alignment (one step earlier or later than declared, `screenshots_offset` included) or another scale of the
points wins by the same rule; for a mapping's alignment, its hint names the lines that read the frames as they
choose ("the screenshots support screenshot_is = 'pre' and screenshots_offset = 1").

### `[outcome]`: a recorded result is the evaluator

```toml
[outcome]
success = "success"        # a flag: true/false, "success"/"fail", "passed", 1/0 ...
score = "reward"           # ... or a score (1 passes; score --evaluator-pass lowers it)
file = "results.json"      # optional: a results file (below: where it is looked for)
records = "runs"           # the records in it: a list, or an object keyed by the run's name
key = "run"                # a record's name: JMESPath, or a template of its fields ("{task}_{condition}")
joins = "folder"           # what the name is: folder (the run folder's name), path (under the scored
                           # folder), run_id, task_id or goal
```

Without `file`, `success` and `score` are read from the log. With it, they are read from the run's record
in the results file:

- **Where**: `file` without a `/` is a name or a glob looked for in the run folder, then in each folder
  above it up to the folder given to `score`, nearest first: `results.csv` beside the run folders is in the
  folder above each of them. `file` with a `/` is a path relative to the run folder, a glob allowed:
  `../results.csv` (beside it), `eval/result.json` (below it), `../../summary/*.jsonl` (above it). Nothing
  outside the folder given to `score` is read: give `score` the folder that holds the results file. The
  results files a run looked in are part of its input digest: a changed record rescores it.
- **What**: a `.csv` (or `.tsv`) file is a list of records by its header's names; any other file is JSON (a
  list of records, or an object of records keyed by their names; `records` finds them inside it) or JSON
  Lines, one record a line.
- **Which record**: with `key` and `joins`, the record whose name (the member's name in an object of records,
  else `key`) equals the run's, exactly. With `[outcome.join]`, the record whose fields match the groups
  `[run] path` took from the run's path: each entry names a group and the record field it matches (a column
  or member name, else JMESPath: `meta.task`). The nearest file holding a match decides, and its first match
  in file order is used.

```toml
[outcome]
file = "results.csv"       # beside the run folders: task_id,condition,run,success
success = "success"

[outcome.join]             # each named group of [run] path = the record field it matches
task = { field = "task_id", prefix = "task-" }     # "task-17" (or "Task-17") matches the group's "17"
condition = "condition"                            # "GPT4o " matches "gpt4o"
run = { field = "attempt", pattern = 'run(\d+)' }  # "gpt4o/run02" is cut to "02", which matches "2"
```

The tolerance is exactly this: both values are compared as text without surrounding blanks, with each run
of blanks as one space, in any case; a `prefix` (a text or a list of texts) is dropped from the start of
either value when it starts with it; a `pattern` (a regular expression) is searched in the record's value,
which becomes its group named like the path's group, else its first group, else the whole match (no match:
the record has no key); two values written in digits (`17`, `017`, `17.0`) are equal when their numbers
are. Nothing else is guessed: `task-17` does not match `17` without `prefix`.

A run without a record keeps no outcome: it is judged by its evidence, never failed for want of a record.
`score` and `validate` print a **join report** in their summary, and give it as JSON (`join`): runs
joined, runs without a record (and how many of them `[run] path` does not match), records without a run,
with up to three examples of each:

```
results joined: 3 of 4 runs have a record in [outcome] file 'results.csv' (results.csv); 1 without a record, 1 of 4 records without a run
  runs without a record, e.g. 2025-03-01_13-15-00_claude_task-9_run1
  records without a run, e.g. task_id='task-23', condition='claude', run='1'
```

A join that joins *no* run is an error, not an empty column: `score` stops before scoring anything (exit
2) and `validate` reports a `mapping_matches_nothing` error (field `outcome.file`), saying why: `[run]
path` matches no run's path (one is shown), no run finds the file, the file holds no record (or could not
be read), or a run's groups and the first record's key values, each as written and as compared:

```
[outcome] file 'results.csv' joins none of the 4 runs to a record: run '2025-03-01_12-30-05_gpt4o_task-17_run1' gives time='2025-03-01_12-30-05', condition='gpt4o', task='17', run='1' (compared as ('17', 'gpt4o', '1')); the first record of results.csv has task_id='task-17', condition='GPT4o', run='1' (compared as ('task-17', 'gpt4o', '1')); check [outcome.join] (the record field each group matches, prefix, pattern) against them
```

The report is made from the runs' paths, so a join on a value of the log (`joins = "run_id"`, `task_id`
or `goal`) has none. The result becomes `runs.outcome_score` and the
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
- `draft-mapping` on a JSON log whose steps are nested: a list of one or a few records (up to 5: a run's
  executions, sessions) each holding a longer list of records is read as one list, `executions[].tasks[]`,
  when those records look more like steps (an action name trajcheck knows, a point, a screenshot). The action
  is the field whose values are known actions (`subType: 'Tap'` beside `type: 'Action Space'`); when only the
  steps of one kind act (a field every step holds, one of whose values marks every step it types and more of
  its steps than not, none of the others), the steps are filtered (`... | [?type=='Action Space']`) and the
  step drafted again from them, a point or text deeper in the step (`param.locate.center`, `param.value`)
  included. Screenshots named by id: a map in the log whose members are mostly images becomes `[run] images`,
  and the fields of the steps whose values are its ids (through objects, and lists by the label of their
  entries, `recorder[?timing=='after-calling'] | [0].screenshot.id`) `screenshot` and `screenshot_after`:
  which is the screen after is read from the log's own chain (the screen after a step is the next one's
  before, the same id), then from the names (`after`, `post`), else UNSURE. An action name with no type that
  is the last action of every sampled run it is in (of two runs or more, or of one when its name says it
  concludes: `result`, `assert`, `report`, `answer`, `final`...) is drafted as DONE marked UNSURE, and
  `[run] unsure` holds `actions` until a person has checked it.
- `draft-mapping` guesses from names and shapes in a sample: a vocabulary it has no type for is left to you
  (`UNSURE`), the coordinate space of a resized model image cannot be seen in the data, and a results file
  is found only beside the runs when its records name the run folders or their paths.
'''
