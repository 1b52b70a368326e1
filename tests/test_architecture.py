"""The house's floors, read from the code's own imports (with ``ast``, nothing is imported).

chop/ is the floor every other stands on; nodes/ build on it; graphs/ wire nodes; the ways in
(chop.api, chop.cli and chop.terminal.chat, the page's routes chop.web.app and chop serve's
chop.web.serve) stand on top. An import goes down, never up or round in a circle:
counted are module-level imports, imports inside functions and ``TYPE_CHECKING`` imports alike.
bench/ and tests/ both use the house and never each other.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOUSE = ("chop", "graphs", "nodes")
TOP_FLOOR = {"chop.api", "chop.cli", "chop.terminal", "chop.web.app", "chop.web.serve"}
# chop's own floors from the bottom, as chop/__init__.py describes them: a module imports from
# its floor and those below. The ways in (TOP_FLOOR) and chop.harness stand outside them.
FLOORS_OF_CHOP = (
    ("chop.config", "chop.types", "chop.stage_profile", "chop.text"),
    ("chop.store",),
    ("chop.models",),
    ("chop.reading",),
    ("chop.labelling",),
    ("chop.questions",),
    ("chop.retrieval", "chop.state"),
    ("chop.answers",),
)
# Inside chop.questions, a question's path from the bottom: the question cleaned for search,
# what its words say without the cards (the statements it names, then all its facts), the
# filings that cover a period, the match against the identity cards, and a conversation's
# turns on top. A module imports only modules listed before it: none is called back by one it
# called.
ORDER_OF_QUESTIONS = (
    "chop.questions.query",
    "chop.questions.statements",
    "chop.questions.facts",
    "chop.questions.filings",
    "chop.questions.matching",
    "chop.questions.conversation",
)
HARNESS = "chop.harness"
MAX_MODULE_LINES = 500


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(*packages: str) -> dict[str, Path]:
    return {
        module_name(path): path
        for package in packages
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def imported(path: Path) -> Iterator[str]:
    package = module_name(path) if path.name == "__init__.py" else module_name(path.parent)
    return imports_in(path.read_text(encoding="utf-8"), package)


def imports_in(source: str, package: str) -> Iterator[str]:
    """Every module ``source`` (a module of ``package``) imports, wherever the import stands
    (``from a import b`` gives ``a`` and ``a.b``: b may be a module)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph(*packages: str) -> dict[str, set[str]]:
    """Module -> the modules of ``packages`` it imports (a package's import of its own
    submodules is not an edge of the graph: it is how the package is made)."""
    known = modules(*packages)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        targets = {target for target in imported(path) if target in known and target != name}
        graph[name] = {t for t in targets if not t.startswith(f"{name}.")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def floor(module: str) -> int:
    if any(within(module, top) for top in TOP_FLOOR):
        return 3
    return {"chop": 0, "nodes": 1, "graphs": 2}[module.split(".")[0]]


def test_the_finder_sees_a_circle_and_lazy_and_relative_imports() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    lazy = "def f() -> None:\n    from chop.store import Store\n"
    assert "chop.store" in set(imports_in(lazy, "chop"))
    typing_only = "if TYPE_CHECKING:\n    from .state import Chunk\n"
    assert "chop.state" in set(imports_in(typing_only, "chop"))


def test_chop_graphs_and_nodes_import_each_other_in_no_circle() -> None:
    assert cycles(import_graph(*HOUSE)) == []


def test_imports_go_down_the_floors_chop_nodes_graphs_then_api_and_cli() -> None:
    upward = [
        f"{module} imports {target}"
        for module, targets in import_graph(*HOUSE).items()
        for target in sorted(targets)
        if floor(target) > floor(module)
    ]
    assert upward == []


def floor_of_chop(module: str) -> int | None:
    """Which of chop's floors ``module`` stands on; None for the ways in and the harness."""
    for level, packages in enumerate(FLOORS_OF_CHOP):
        if any(within(module, package) for package in packages):
            return level
    return None


def test_every_module_of_chop_has_a_floor_or_is_a_way_in_or_the_harness() -> None:
    homeless = [
        name
        for name in modules("chop")
        if name != "chop"
        and floor_of_chop(name) is None
        and not within(name, HARNESS)
        and not any(within(name, top) for top in TOP_FLOOR)
        and not within(name, "chop.web")
    ]
    assert homeless == []


def test_chops_packages_import_only_from_their_floor_and_below() -> None:
    """Models and the database at the bottom, reading and labelling above them, questions above
    labelling, retrieval above questions, answers on top."""
    upward = [
        f"{module} imports {target}"
        for module, targets in import_graph("chop").items()
        if (level := floor_of_chop(module)) is not None
        for target in sorted(targets)
        if (used := floor_of_chop(target)) is None or used > level
    ]
    assert upward == []


def test_only_the_ways_in_use_the_harness() -> None:
    users = [
        f"{module} imports {target}"
        for module, targets in import_graph(*HOUSE).items()
        if not any(within(module, top) for top in TOP_FLOOR) and not within(module, HARNESS)
        for target in sorted(targets)
        if within(target, HARNESS)
    ]
    assert users == []


def test_the_floor_rule_sees_an_upward_import() -> None:
    assert floor_of_chop("chop.questions.matching") == 5
    assert floor_of_chop("chop.text.periods") == 0
    assert floor_of_chop("chop.harness.stub_llm") is None
    assert floor_of_chop("chop.answers.figures") > floor_of_chop("chop.retrieval.retrieve")  # type: ignore[operator]


def out_of_order(graph: dict[str, set[str]], order: tuple[str, ...]) -> list[str]:
    """Each import, among the modules of ``order``, of a module not listed before the importer."""
    rank = {module: number for number, module in enumerate(order)}
    return [
        f"{module} imports {target}"
        for module, targets in graph.items()
        if module in rank
        for target in sorted(targets)
        if target in rank and rank[target] >= rank[module]
    ]


def test_a_questions_path_inside_chop_questions_reads_top_to_bottom() -> None:
    """Read the question's words, match them against the cards, then the conversation: each
    module of chop.questions imports only those listed before it in ORDER_OF_QUESTIONS."""
    listed = {name for name in modules("chop") if name.startswith("chop.questions.")}
    assert listed == set(ORDER_OF_QUESTIONS), "every module of chop.questions has its place"
    assert out_of_order(import_graph("chop"), ORDER_OF_QUESTIONS) == []


def test_the_order_rule_sees_a_module_called_back_by_one_it_calls() -> None:
    graph = {
        "chop.questions.matching": {"chop.questions.facts"},
        "chop.questions.facts": {"chop.questions.matching", "chop.text.periods"},
        "chop.questions.statements": {"chop.questions.conversation"},
    }
    assert out_of_order(graph, ORDER_OF_QUESTIONS) == [
        "chop.questions.facts imports chop.questions.matching",
        "chop.questions.statements imports chop.questions.conversation",
    ]


@pytest.mark.parametrize(("user", "used"), [("bench", "tests"), ("tests", "bench")])
def test_bench_and_tests_do_not_import_each_other(user: str, used: str) -> None:
    crossing = [
        f"{module} imports {target}"
        for module, path in modules(user).items()
        for target in sorted(set(imported(path)))
        if target == used or target.startswith(f"{used}.")
    ]
    assert crossing == []


def test_no_module_of_chop_is_over_500_lines() -> None:
    long = {
        name: lines
        for name, path in modules("chop").items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_a_test_module_never_imports_another_test_module() -> None:
    """What several test modules share is a harness module of its own (tests/fakes.py,
    tests/ingest_runs.py, tests/langgraph_server.py, ...), named for what it provides, never
    a test module that others import for its helpers."""
    crossing = [
        f"{module} imports {target}"
        for module, path in modules("tests", "bench/tests").items()
        for target in sorted(set(imported(path)))
        if target.rsplit(".", 1)[-1].startswith("test_") and target != module
    ]
    assert crossing == []
