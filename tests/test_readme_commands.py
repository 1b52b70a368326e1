"""Every command the README shows runs as a newcomer types it, and does what the README says.

The README's shell lines and Python blocks are read from README.md itself, so a command that
breaks, or an option a command loses, fails here. They run in a scratch folder holding what
the README's commands name (manuals/, reports/2023.pdf, .venv), against chop's stub LLM where
the model is not the point. Three kinds of line are run their own way:

- `bash scripts/test.sh` is the run this test is part of: it is not run again from inside it;
- `bash scripts/demo.sh` runs from the repository with the real local model (marker slow), and
  must print the 330C's filter interval and cite the 330C manual;
- `chop serve` runs until stopped: it is started on a free port without a browser, its page is
  fetched, and the README's `--server` line sends its batches to it; `localhost:2024` in a
  line is that server's address.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from chop_rag.cli import build_parser
from chop_rag.harness.sample_corpus import (
    SAMPLE_QUESTIONS,
    manual_filename,
    write_sample_corpus,
)
from tests.langgraph_server import chop_serve, missing_server_packages, stub_llm
from tests.pdfs import make_pdf

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
COMMAND_S = 300
THE_TEST_COMMAND = "bash scripts/test.sh"
THE_DEMO = "bash scripts/demo.sh"
DEFAULT_SERVER = "localhost:2024"


def readme_blocks(language: str) -> list[str]:
    """The README's fenced code blocks in ``language``, in order."""
    fence = re.compile(rf"^```{language}\n(.*?)^```", re.MULTILINE | re.DOTALL)
    return fence.findall(README.read_text(encoding="utf-8"))


def shell_commands() -> list[str]:
    """Each command of the README's bash blocks: a line (joined where it ends in a backslash),
    without the comment that explains it."""
    commands: list[str] = []
    for block in readme_blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(line[: comment_start(line)].strip())
    return commands


def comment_start(line: str) -> int:
    """Where a shell line's trailing comment starts (a `#` outside quotes after a space)."""
    quote: str | None = None
    for index, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] == " "):
            return index
    return len(line)


COMMANDS = shell_commands()
PYTHON_BLOCKS = readme_blocks("python")
SERVED = [c for c in COMMANDS if c.endswith("chop serve") or " chop serve " in c]
USING_SERVER = [c for c in COMMANDS if "--server" in c.split()]
PLAIN = [c for c in COMMANDS if c not in (THE_TEST_COMMAND, THE_DEMO, *SERVED, *USING_SERVER)]


def test_the_readme_shows_the_two_quickstart_commands_and_runs_only_known_kinds() -> None:
    assert THE_TEST_COMMAND in COMMANDS and THE_DEMO in COMMANDS
    assert len(SERVED) == 1, "one `chop serve` line, started once for the --server lines"
    assert PLAIN and PYTHON_BLOCKS


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    """A folder with what the README's commands name: the sample manuals, a filing, the venv.

    Not under pytest's own temporary folder: that one is readable by its owner only, and the
    embedded PostgreSQL runs its tools as another user when chop runs as root."""
    folder = Path(tempfile.mkdtemp(prefix="chop-readme-"))
    folder.chmod(0o755)
    (folder / ".venv").symlink_to(ROOT / ".venv")
    write_sample_corpus(folder / "manuals")
    (folder / "reports").mkdir()
    (folder / "reports" / "2023.pdf").write_bytes(
        make_pdf(
            [
                "Acme Corp Annual Report 2023\nForm 10-K for the fiscal year ended "
                "December 31, 2023",
                "Consolidated Statements of Income (in millions)\nRevenue 1,250\nNet income 210",
            ],
            title="Acme Corp 10-K 2023",
        )
    )
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def readme_env(scratch: Path, data_dir: Path) -> Iterator[dict[str, str]]:
    """The README's commands' environment: the stub LLM, a collection of their own holding
    the sample manuals (so each command can run alone), the test session's database."""
    with stub_llm() as stub_url:
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "LANGSMITH_TRACING": "false",
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
            "LANGGRAPH_NO_VERSION_CHECK": "1",
            "CHOP_DATA_DIR": str(data_dir),
            "CHOP_COLLECTION": f"readme_{uuid.uuid4().hex[:8]}",
            "CHOP_CHAT_PROVIDER": "openai",
            "CHOP_OPENAI_BASE_URL": stub_url,
            "CHOP_CHAT_MODEL": "stub",
            "CHOP_LLM_TIMEOUT_S": "30",
            "CHOP_SERVER_PATHS": str(scratch),
            "PYTHONPATH": str(ROOT),
        }
        ingested = run(".venv/bin/chop ingest manuals/ --quiet", scratch, env)
        assert ingested.returncode == 0, ingested.stderr
        yield env


def run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"set -euo pipefail; {command}"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_S,
        stdin=subprocess.DEVNULL,
    )


def succeeded(result: subprocess.CompletedProcess[str], what: str) -> None:
    assert result.returncode == 0, (
        f"{what} exited {result.returncode}\n--- stdout\n{result.stdout[-3000:]}"
        f"\n--- stderr\n{result.stderr[-3000:]}"
    )
    assert "Traceback" not in result.stderr, result.stderr


@pytest.mark.parametrize("command", PLAIN)
def test_a_readme_command_runs(command: str, scratch: Path, readme_env: dict[str, str]) -> None:
    succeeded(run(command, scratch, readme_env), command)


@pytest.mark.parametrize("number", range(len(PYTHON_BLOCKS)))
def test_a_readme_python_block_runs(number: int, scratch: Path, readme_env: dict[str, str]) -> None:
    script = scratch / f"readme_block_{number}.py"
    script.write_text(PYTHON_BLOCKS[number], encoding="utf-8")
    result = run(f".venv/bin/python {script.name}", scratch, readme_env)
    succeeded(result, f"the README's Python block {number + 1}:\n{PYTHON_BLOCKS[number]}")
    assert result.stdout.strip(), "each block prints what it shows"


@pytest.mark.server
def test_chop_serve_serves_the_page_and_the_server_lines_run_on_it(
    scratch: Path, readme_env: dict[str, str]
) -> None:
    if missing := missing_server_packages():
        pytest.skip(missing)
    data_dir = Path(readme_env["CHOP_DATA_DIR"])
    with chop_serve(scratch, data_dir, readme_env, shlex.split(SERVED[0])) as url:
        address = url.removeprefix("http://")
        with urllib.request.urlopen(f"{url}/chop/", timeout=10) as page:
            assert page.status == 200 and b"<html" in page.read().lower()
        for command in USING_SERVER:
            succeeded(run(command.replace(DEFAULT_SERVER, address), scratch, readme_env), command)


@pytest.mark.slow
def test_the_demo_answers_the_330c_interval_and_cites_the_330c_manual(data_dir: Path) -> None:
    """`bash scripts/demo.sh` from the repository, with the real local model."""
    env = {
        **os.environ,
        "CHOP_DATA_DIR": str(data_dir),
        "CHOP_COLLECTION": f"demo_{uuid.uuid4().hex[:8]}",
    }
    for name in ("CHOP_CHAT_PROVIDER", "CHOP_OPENAI_BASE_URL", "CHOP_CHAT_MODEL"):
        env.pop(name, None)
    result = subprocess.run(
        THE_DEMO.split(), cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200
    )
    succeeded(result, THE_DEMO)
    expected = SAMPLE_QUESTIONS[0]
    answer_and_sources = result.stdout
    assert expected["expected_phrase"] in answer_and_sources
    cited = [line for line in answer_and_sources.splitlines() if re.match(r"\W*\d+\*", line)]
    assert cited, f"no cited source in:\n{answer_and_sources}"
    assert all(
        manual_filename(expected["model"]).removesuffix(".md") in line.lower()
        or expected["model"] in line
        for line in cited
    ), answer_and_sources


def subcommand_parsers() -> dict[str, object]:
    parser = build_parser()
    actions = [a for a in parser._actions if a.dest == "command"]
    return dict(actions[0].choices or {})  # type: ignore[arg-type]


def test_every_option_a_command_reads_is_one_its_parser_gives() -> None:
    """The bug class of `chop demo` reading `args.server` that its namespace lacked: every
    `args.NAME` a command's function (or a function it hands `args` to) reads is a
    destination of that command's parser."""
    sources = [ROOT / "chop_rag" / "cli.py", ROOT / "chop_rag" / "web" / "serve.py"]
    sources += sorted((ROOT / "chop_rag" / "terminal").glob("*.py"))
    functions: dict[str, ast.FunctionDef] = {}
    for source in sources:
        tree = ast.parse(source.read_text(encoding="utf-8"))
        functions |= {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}

    def reads(name: str, seen: set[str]) -> set[str]:
        """``args.X`` and ``getattr(args, "X", ...)`` in ``name`` and what it passes args to."""
        seen.add(name)
        found: set[str] = set()
        for node in ast.walk(functions[name]):
            if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "args":
                found.add(node.attr)
            if isinstance(node, ast.Call):
                callee = getattr(node.func, "id", None)
                passes_args = any(getattr(a, "id", None) == "args" for a in node.args)
                if callee == "getattr" and passes_args:
                    continue  # optional by design: read with a default
                if callee in functions and passes_args and callee not in seen:
                    found |= reads(callee, seen)
        return found

    for command, sub in subcommand_parsers().items():
        namespace_of = {a.dest for a in sub._actions}  # type: ignore[attr-defined]
        func = sub.get_default("func")  # type: ignore[attr-defined]
        missing = reads(func.__name__, set()) - namespace_of - {"func", "command", "debug"}
        assert not missing, f"`chop {command}` reads options its parser lacks: {missing}"


def test_an_unexpected_error_is_one_line_and_debug_shows_the_trace(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import chop_rag.cli

    def broken(args: object) -> int:
        raise KeyError("a bug")

    monkeypatch.setattr(chop_rag.cli, "cmd_settings", broken)
    assert chop_rag.cli.main(["settings"]) == chop_rag.cli.EXIT_INTERNAL
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "KeyError" in err and "--debug" in err
    with pytest.raises(KeyError):
        chop_rag.cli.main(["--debug", "settings"])


def test_a_reader_that_goes_away_ends_the_output_without_a_trace() -> None:
    result = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m chop_rag.cli graphs | true"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr, result.stderr
