"""The docs say what the code does: the settings table is the one chop_rag/config.py makes, every
variable the code reads is a defined setting and is in .env.example, deploy.md lists the
graphs langgraph.json serves, and reference.md's build flags are install.sh's.

A setting added to Context (or a CHOP_* variable read anywhere in the package) without
regenerating the docs (`chop settings --write docs/deploy.md`) and adding it to
.env.example fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chop_rag.config import Context, setting_names
from chop_rag.terminal.settings_docs import (
    SETTINGS_TABLE_END,
    SETTINGS_TABLE_START,
    settings_markdown,
)

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("chop_rag", "deploy", "graphs", "nodes", "prompts")
VARIABLE = re.compile(r"\bCHOP_[A-Z0-9_]*[A-Z0-9]\b")


def table_in(document: str) -> str:
    start = document.index(SETTINGS_TABLE_START) + len(SETTINGS_TABLE_START) + 1
    return document[start : document.index(SETTINGS_TABLE_END)]


def test_the_settings_table_is_the_generated_one() -> None:
    text = (ROOT / "docs/deploy.md").read_text(encoding="utf-8")
    assert table_in(text) == settings_markdown(), (
        "docs/deploy.md's settings table is stale: run `chop settings --write docs/deploy.md`"
    )


def test_every_variable_the_code_reads_is_a_documented_setting() -> None:
    read = {
        (name, str(path.relative_to(ROOT)))
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        for name in VARIABLE.findall(path.read_text(encoding="utf-8"))
    }
    unknown = sorted((name, where) for name, where in read if name not in setting_names())
    assert not unknown, f"not in chop_rag/config.py (Context or PROCESS_SETTINGS): {unknown}"
    assert {name for name, _ in read} >= {"CHOP_LLM_THREADS", "CHOP_PG_SHARED_BUFFERS"}


def test_env_example_lists_every_setting_with_a_value_that_parses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    assigned = dict(re.findall(r"^#? ?([A-Z][A-Z0-9_]*)=(\S*)", example, flags=re.M))
    missing = [name for name in setting_names() if name not in assigned]
    assert not missing, f".env.example lacks {missing}"
    for name, value in assigned.items():
        if name.startswith("CHOP_") and value:
            monkeypatch.setenv(name, value)
    Context()  # every example value parses and passes Context's checks


def test_deploy_md_lists_the_graphs_langgraph_json_serves() -> None:
    served = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))["graphs"]
    deploy = (ROOT / "docs/deploy.md").read_text(encoding="utf-8")
    snippet = re.search(r"```json\n(\{\n  \"dependencies\".*?)\n```", deploy, flags=re.S)
    assert snippet, "docs/deploy.md shows langgraph.json in a ```json block"
    assert json.loads(snippet.group(1))["graphs"] == served


def test_reference_md_builds_llama_cpp_with_install_sh_flags() -> None:
    flags = re.compile(r'CMAKE_ARGS="([^"]*)"')
    (installed,) = flags.findall((ROOT / "scripts/install.sh").read_text(encoding="utf-8"))
    documented = flags.findall((ROOT / "docs/reference.md").read_text(encoding="utf-8"))
    assert documented == [installed]


README_MOST_LINES = 200
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(document: Path) -> set[str]:
    """The #anchors GitHub gives a Markdown file's headings."""
    return {
        re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in document.read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    }


def test_the_readme_is_a_page_a_newcomer_reads() -> None:
    """The rest lives in docs/, linked from it."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MOST_LINES


def test_every_link_between_the_docs_leads_to_a_file_and_heading_that_exist() -> None:
    broken = []
    for document in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        for target in LINK.findall(document.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            linked = (document.parent / path).resolve() if path else document
            if not linked.exists():
                broken.append(f"{document.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{document.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []
