"""bench/README.md is the index of bench/: a newcomer finds there which module makes which
published number, with its one command. It goes stale when a module is added, moved or
removed, when a command's options change, or when a docs section it names is renamed; these
tests say which."""

from __future__ import annotations

import argparse
import ast
import re
import runpy
import sys
from pathlib import Path
from typing import Any, NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
README = BENCH / "README.md"
ROW = re.compile(r"^\| `(bench\.[\w.]+)` \|(.*)\|\s*$")
COMMAND = re.compile(r"`python -m ([\w.]+)([^`]*)`")
SECTION = re.compile(r'(?:((?:docs/)?[\w.-]+\.md): )?"([^"]+)"')
RESULT = re.compile(r"`([\w.-]+?)(?:/|\.\{json,md\})`")


def rows() -> dict[str, list[str]]:
    """The README's table rows by module: the cells after the module's."""
    found: dict[str, list[str]] = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        if match := ROW.match(line):
            assert match.group(1) not in found, f"{match.group(1)} has two rows"
            found[match.group(1)] = [cell.strip() for cell in match.group(2).split("|")]
    return found


def bench_modules() -> set[str]:
    """bench's modules on disk, packages' __init__ aside (bench/tests holds tests, not benches)."""
    return {
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for folder in (BENCH, BENCH / "studies")
        for path in folder.glob("*.py")
        if path.name != "__init__.py"
    }


def commands() -> list[tuple[str, str, list[str]]]:
    """(row's module, the module its command runs, the command's arguments) of every row."""
    return [
        (module, match.group(1), match.group(2).split())
        for module, cells in rows().items()
        for cell in cells[1:2]  # shared modules' rows have no command cell
        for match in COMMAND.finditer(cell)
    ]


def test_every_bench_module_has_a_row_and_every_row_names_a_module() -> None:
    indexed, on_disk = set(rows()), bench_modules()
    assert sorted(on_disk - indexed) == [], "bench/README.md has no row for these modules"
    assert sorted(indexed - on_disk) == [], "bench/README.md names modules that do not exist"


def test_the_index_reads_the_tables_it_has() -> None:
    # The parsing above must see the README's rows, or the test before proves nothing.
    assert {"bench.answers", "bench.studies.gil_contention", "bench.report"} <= set(rows())
    assert len(commands()) >= 15


class Parsed(Exception):
    """Raised instead of running the benchmark once its command line has parsed."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog)
        self.prog = prog


@pytest.mark.parametrize(("row", "module", "args"), commands(), ids=[c[0] for c in commands()])
def test_every_command_in_the_index_parses_as_written(
    row: str, module: str, args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command is run as ``python -m`` runs it, up to its parser: the arguments as written
    must parse (options, choices, types), and nothing is measured."""
    assert module == row or row == "bench.ingest_profile", f"{row}'s row runs {module}"
    parse = argparse.ArgumentParser.parse_args

    def parsed_then_stop(self: argparse.ArgumentParser, *a: Any, **k: Any) -> NoReturn:
        parse(self, *a, **k)  # exits 2 with argparse's message if the command is wrong
        raise Parsed(self.prog)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parsed_then_stop)
    monkeypatch.setattr(sys, "argv", [module, *args])
    sys.modules.pop(module, None)  # run it fresh as __main__, as ``python -m`` would
    with pytest.raises(Parsed) as stopped:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    assert stopped.value.prog == f"python -m {module}", "its --help names the command"


def test_every_results_entry_is_named_in_the_index() -> None:
    named = set(RESULT.findall(README.read_text(encoding="utf-8")))
    entries = {
        path.name if path.is_dir() else path.name.removesuffix(path.suffix)
        for path in (BENCH / "results").iterdir()
    }
    assert sorted(entries - named) == [], "bench/results/ entries bench/README.md does not name"
    assert sorted(named - entries) == [], "bench/README.md names results that are not there"


def test_every_docs_section_the_index_names_exists() -> None:
    missing = []
    for line in README.read_text(encoding="utf-8").splitlines():
        document = ""
        for match in SECTION.finditer(line):
            document = match.group(1) or document
            if not document:
                continue  # a quotation in prose, not a section
            headings = [
                h
                for h in (ROOT / document).read_text(encoding="utf-8").splitlines()
                if h.startswith("#")
            ]
            if not any(match.group(2) in h for h in headings):
                missing.append(f"{document}: {match.group(2)}")
    assert missing == []


def test_the_docs_run_only_modules_that_exist() -> None:
    """After a module moves (bench.X to bench.studies.X), no document keeps the old command."""
    documents = [ROOT / "README.md", README, *(ROOT / "docs").glob("*.md")]
    documents += (ROOT / "scripts").glob("*.sh")
    stale = {
        f"{document.relative_to(ROOT)}: python -m {module}"
        for document in documents
        for module in re.findall(r"python -m (bench\.[\w.]*\w)", document.read_text("utf-8"))
        if module not in bench_modules()
    }
    assert sorted(stale) == []


def test_a_benchmark_never_imports_a_study() -> None:
    """Studies may use the benchmarks' code; the product's measurements never depend on a
    finished study."""
    crossing = []
    for path in BENCH.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            crossing += [f"{path.name} imports {n}" for n in names if n.startswith("bench.studies")]
    assert crossing == []
