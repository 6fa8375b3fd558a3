"""The catalogue's documents stay in step with the code: a page per rule, listed in the README."""

from __future__ import annotations

import pytest

from conftest import REPO
from tf_memlint.resources import rule_page
from tf_memlint.rule import all_rules

SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead")


@pytest.mark.parametrize("code", list(all_rules()))
def test_rule_page_has_the_ruff_sections(code):
    text = rule_page(code).read_text(encoding="utf-8")
    rule = all_rules()[code]
    assert text.startswith(f"# {code}: {rule.name}\n")
    for section in SECTIONS:
        assert section in text, f"{code}: missing {section}"
    assert ("opt-in" in text.lower()) or rule.default_enabled, f"{code} is opt-in: its page must say so"
    for option in rule.options:
        assert option.replace("_", "-") in text, f"{code}: option {option} is not documented"


@pytest.mark.parametrize("code", list(all_rules()))
def test_readme_lists_every_rule(code):
    assert f"[{code}](rules/{code}.md)" in (REPO / "README.md").read_text(encoding="utf-8")


# -- the README's commands work as written ---------------------------------------------------------

import os  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

README = (REPO / "README.md").read_text(encoding="utf-8")
# Lines that install or run the suite: .ci/run runs those (the quick start and the Install block
# verbatim, in fresh environments); here they would touch the network or recurse.
_CI_ONLY = re.compile(r"\bpip (install|wheel)\b|python -m pytest|^python3 -m venv")


def _sh_commands() -> list:
    """Every command line of the README's sh blocks; the verifier's runs (minutes of TensorFlow)
    are marked slow, like the verifier's own full run."""
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", README, re.S | re.M):
        for line in block.splitlines():
            if line.strip() and not _CI_ONLY.search(line):
                slow = line.startswith("tf-memlint verify")
                commands.append(pytest.param(line, marks=pytest.mark.slow) if slow else line)
    return commands


def test_readme_does_not_promise_what_does_not_exist():
    assert "pip install tf-memlint" not in README.replace("`pip install tf-memlint` does not work", "")
    assert "tf-memlint==" not in README and "pip install 'tf-memlint[" not in README
    assert "rev: v" not in README  # no release tags exist: no pre-commit rev may name one
    assert "not on PyPI yet" in README


def test_readme_pre_commit_example_matches_the_hook():
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "repo: local" in README and "entry: tf-memlint --force-exclude" in README
    assert "- id: tf-memlint" in hooks and "entry: tf-memlint --force-exclude" in hooks


@pytest.mark.parametrize("command", _sh_commands())
def test_readme_command_runs_as_written(command):
    if command.startswith("nbqa") or " nbqa " in command:
        pytest.importorskip("nbqa")
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    plots = REPO / "plots"
    made_plots = not plots.exists()
    try:
        completed = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=REPO, env=env,
                                   capture_output=True, text=True, timeout=900)
    finally:
        if made_plots and plots.is_dir():  # `verify --plots plots/` writes into the clone
            import shutil

            shutil.rmtree(plots)
    assert completed.returncode == 0, (command, completed.stdout[-2000:], completed.stderr[-2000:])
