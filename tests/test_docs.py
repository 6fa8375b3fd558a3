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


ADOPTING = "## Adopting tf-memlint in an existing repository"


def _section(heading: str) -> str:
    start = README.index(heading)
    end = README.find("\n## ", start + len(heading))
    return README[start:end if end >= 0 else len(README)]


def _blocks(text: str, kind: str) -> list[str]:
    return re.findall(rf"^```{kind}\n(.*?)^```", text, re.S | re.M)


def _sh_commands() -> list:
    """Every command line of the README's sh blocks, but the adoption section's (they run in a
    project of their own, below); the verifier's runs (minutes of TensorFlow) are marked slow,
    like the verifier's own full run."""
    commands = []
    for block in _blocks(README.replace(_section(ADOPTING), ""), "sh"):
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


def test_readme_adoption_section_runs_as_written(tmp_path):
    """The adoption section, as a user would follow it in a repository with old findings: its
    configuration blocks in pyproject.toml, then its commands, in order, each exiting 0."""
    import shutil

    section = _section(ADOPTING)
    project = tmp_path / "legacy"
    for source, target in (("TFM101/bad_aliases.py", "src/model.py"),
                           ("TFM406/bad_compile_in_loop.py", "src/train.py"),
                           ("TFM405/bad_fit_per_sample.py", "scripts/one_off_fit.py"),
                           ("TFM101/bad_aliases.py", "qa/check_model.py")):
        (project / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "fixtures" / source, project / target)
    (project / "pyproject.toml").write_text("\n".join(_blocks(section, "toml")), encoding="utf-8")
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
               PYTHONPATH=str(REPO))
    commands = [line for block in _blocks(section, "sh") for line in block.splitlines() if line.strip()]
    assert any("--write-baseline" in c for c in commands) and any("--baseline" in c for c in commands)
    before = subprocess.run(["tf-memlint", "--isolated", "--format", "json", "."], cwd=project, env=env,
                            capture_output=True, text=True, timeout=300)
    assert before.returncode == 1, before.stderr  # there are old findings to record
    for command in commands:
        completed = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=project, env=env,
                                   capture_output=True, text=True, timeout=300)
        assert completed.returncode == 0, (command, completed.stdout[-2000:], completed.stderr[-2000:])


def test_readme_configuration_blocks_load(tmp_path):
    """Every TOML block of the README is a configuration tf-memlint accepts."""
    from tf_memlint.config import load_config

    blocks = _blocks(README, "toml")
    assert len(blocks) >= 2
    for block in blocks:
        (tmp_path / "pyproject.toml").write_text(block, encoding="utf-8")
        assert load_config(tmp_path / "pyproject.toml").source is not None
