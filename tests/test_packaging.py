"""The package takes no name it does not own: its wheel installs one top-level import package,
``chop_rag``, holding the graphs, nodes, prompts and the server's pieces (``chop_rag.graphs``
...), under the distribution name ``chop-rag``; the command stays ``chop``.

The index's ``chop`` is another project (a word-segmentation library, ``import chop``): a wheel
that installed a ``chop`` package would overwrite it, so this one must not provide ``import
chop`` at all. Before, the wheel also installed ``graphs``, ``nodes``, ``prompts`` and
``deploy`` at the top of site-packages, where any other project may have the same names. The
repository keeps them at its top (the LangGraph layout); chop_rag/graphs etc. are links to
them, so a checkout imports them by the same names as the wheel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from chop_rag.harness.stub_llm import serve_stub

ROOT = Path(__file__).resolve().parent.parent
DISTRIBUTION = "chop_rag"  # chop-rag, as a wheel's file names spell it
PACKAGE = "chop_rag"  # the import package, the wheel's only top-level name
NOT_OURS = "chop"  # the index's chop, another project's import name
HOUSE = ("graphs", "nodes", "prompts", "deploy")
BUILD_LITTER = shutil.ignore_patterns("__pycache__", "*.pyc")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built offline from a copy of what it is made of (a build in the
    checkout would leave build/ there, whose stale files a later wheel would take)."""
    source, folder = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in (PACKAGE, *HOUSE):
        shutil.copytree(ROOT / package, source / package, symlinks=True, ignore=BUILD_LITTER)
    build = ["wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(folder)]
    subprocess.run(
        [sys.executable, "-m", "pip", *build, str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = folder.glob(f"{DISTRIBUTION}-*.whl")
    return built


def test_the_wheel_installs_one_top_level_name_chop_rag(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    version = wheel.name.split("-")[1]
    dist_info = f"{DISTRIBUTION}-{version}.dist-info"
    assert {name.split("/")[0] for name in names} == {PACKAGE, dist_info}
    for package in HOUSE:
        assert f"{PACKAGE}/{package}/__init__.py" in names, f"{PACKAGE}.{package} is in the wheel"
    assert {
        f"{PACKAGE}/graphs/ingest.py",
        f"{PACKAGE}/nodes/split.py",
        f"{PACKAGE}/deploy/webapp.py",
    } <= set(names)
    assert f"{PACKAGE}/prompts/extract_cnm.md" in names
    assert any(name.startswith(f"{PACKAGE}/web/static/") for name in names)


def test_the_wheel_provides_no_import_chop(wheel: Path) -> None:
    """Nothing in the wheel is importable as ``chop``: no package, no module, no .pth that
    could add one; its metadata names chop_rag as its only top-level name and the ``chop``
    command runs chop_rag's CLI."""
    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    assert not [n for n in names if n.split("/")[0] in (NOT_OURS, f"{NOT_OURS}.py")]
    assert not [n for n in names if n.endswith(".pth")]
    (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
    assert archive.read(top_level).decode().split() == [PACKAGE]
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    assert f"chop = {PACKAGE}.cli:main" in archive.read(entry_points).decode()


def shared_site_packages() -> str:
    return sysconfig.get_paths()["purelib"]


@pytest.fixture(scope="module")
def clean_python(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A new virtual environment with the wheel installed and nothing of this checkout: the
    dependencies come from this environment's site-packages as a plain path (no .pth of it
    runs, so its editable install of the checkout is not seen)."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "dependencies.pth").write_text(shared_site_packages() + "\n", encoding="utf-8")
    install = ["install", "-q", "--no-deps", "--no-index", str(wheel)]
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), *install],
        check=True,
        capture_output=True,
        timeout=300,
    )
    yield python


def run_clean(python: Path, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [str(python), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**environment, **env},
        timeout=600,
    )


def test_the_installed_wheel_imports_the_graphs_as_chop_rag_packages_only(
    clean_python: Path, tmp_path: Path
) -> None:
    """Also: the installed wheel gives no ``import chop`` (the index's chop, where the shared
    dependencies hold it, is found there, never in the new environment)."""
    check = (
        "import importlib.util, sys, chop_rag, chop_rag.deploy.graphs, chop_rag.graphs.ingest;"
        "import chop_rag.prompts;"
        "print(chop_rag.__file__);"
        "print([n for n in " + repr(HOUSE) + " if importlib.util.find_spec(n)]);"
        "print(chop_rag.prompts.template('extract_cnm')[0][:20]);"
        f"spec = importlib.util.find_spec({NOT_OURS!r});"
        "print(bool(spec and (spec.origin or '').startswith(sys.prefix)))"
    )
    shown = run_clean(clean_python, "-c", check, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    where, top_level, prompt, chop_installed = shown.stdout.splitlines()
    assert Path(where).is_relative_to(clean_python.parent.parent), "chop_rag comes from the wheel"
    assert top_level == "[]", "no graphs, nodes, prompts or deploy at the top"
    assert prompt.strip(), "the prompt files are in the wheel"
    assert chop_installed == "False", "the wheel installs no import chop"


def test_a_clean_environment_with_the_wheel_runs_the_demo(
    clean_python: Path, tmp_path: Path
) -> None:
    """``chop demo`` from the installed wheel: the sample manuals ingested into an embedded
    PostgreSQL and a question answered, the chat model being chop's stub server."""
    version = run_clean(clean_python.with_name("chop"), "--version", cwd=tmp_path)
    assert version.stdout.strip() == "chop 0.1.0", version.stderr
    with serve_stub(latency=(0.0, 0.0)) as base_url:
        demo = run_clean(
            clean_python.with_name("chop"),
            "demo",
            cwd=tmp_path,
            CHOP_DATA_DIR=str(tmp_path / "data"),
            CHOP_CHAT_PROVIDER="openai",
            CHOP_OPENAI_BASE_URL=f"{base_url}/v1",
            CHOP_CHAT_MODEL="stub",
            HF_HUB_OFFLINE="1",
            COLUMNS="200",
        )
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "added 3, updated 0" in demo.stderr  # the three sample manuals
    assert "Clean the air filter every 4 weeks" in demo.stdout  # the 330C's answer, quoted
    assert "Coolwave 330C User Manual" in demo.stdout  # and its source
