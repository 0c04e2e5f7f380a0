"""The README's "Exit codes" table, generated from every command's exit rules and outcomes (cli/exits.py).

    python -m devtools.exitdoc     # prints the table; tests/test_readme.py fails when the README's is stale
"""

from __future__ import annotations

from trajcheck.cli.common import Exit
from trajcheck.cli.exits import codes_of
from trajcheck.cli.main import COMMANDS, command


def _who(names: list[str], everyone: list[str]) -> str:
    """The commands ``names`` in a few words: every command, every command but one or two, or each one."""
    others = [n for n in everyone if n not in names]
    if not others:
        return "every command"
    if len(others) <= 2:
        return "every command but " + " and ".join(f"`{n}`" for n in others)
    return ", ".join(f"`{n}`" for n in names)


def table() -> str:
    """The table: each code, what it says, and when each command exits with it (its help's words)."""
    codes = {n: codes_of(command(n)) for n in COMMANDS}
    lines = ["| code | meaning | when, by command |", "|---|---|---|"]
    for code in Exit:
        when: dict[str, list[str]] = {}
        for name, means in codes.items():
            for text in means.get(code, ()):
                when.setdefault(text, []).append(name)
        cases = "; ".join(f"{_who(names, list(COMMANDS))}: {text}" for text, names in when.items())
        lines.append(f"| {int(code)} | {code.meaning} | {cases.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(table(), end="")
