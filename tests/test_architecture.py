"""The house's floors, read from the code's own imports (with ``ast``, nothing is imported).

chop_rag/ is the floor every other stands on; nodes/ build on it; graphs/ wire nodes; the ways in
(chop_rag.api, chop_rag.cli and chop_rag.terminal.chat, the page's routes chop_rag.web.app and chop
serve's chop_rag.web.serve) stand on top. An import goes down, never up or round in a circle:
counted are module-level imports, imports inside functions and ``TYPE_CHECKING`` imports alike.
bench/ and tests/ both use the house and never each other.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOUSE = ("chop_rag", "graphs", "nodes")
TOP_FLOOR = {
    "chop_rag.api",
    "chop_rag.cli",
    "chop_rag.terminal",
    "chop_rag.web.app",
    "chop_rag.web.serve",
}
# chop's own floors from the bottom, as chop_rag/__init__.py describes them: a module imports from
# its floor and those below. The ways in (TOP_FLOOR) and chop_rag.harness stand outside them.
FLOORS_OF_CHOP = (
    # chop_rag.prompts: the prompt files and their renderer, which any floor that asks a model reads
    (
        "chop_rag.config",
        "chop_rag.setting_values",
        "chop_rag.types",
        "chop_rag.stage_profile",
        "chop_rag.text",
        "chop_rag.prompts",
    ),
    ("chop_rag.store",),
    ("chop_rag.models",),
    ("chop_rag.reading",),
    ("chop_rag.labelling",),
    ("chop_rag.questions",),
    ("chop_rag.retrieval", "chop_rag.state"),
    ("chop_rag.answers",),
)
# Inside chop_rag.questions, a question's path from the bottom: the question cleaned for search,
# what its words say without the cards (the statements it names, the line items and metrics it asks
# for, then all its facts), the filings that cover a period, the match against the identity cards,
# and a conversation's turns on top. A module imports only modules listed before it: none is called
# back by one it called.
ORDER_OF_QUESTIONS = (
    "chop_rag.questions.query",
    "chop_rag.questions.statements",
    "chop_rag.questions.line_items",
    "chop_rag.questions.metric_questions",
    "chop_rag.questions.facts",
    "chop_rag.questions.filings",
    "chop_rag.questions.codes",
    "chop_rag.questions.matching",
    "chop_rag.questions.pronouns",
    "chop_rag.questions.conversation",
)
HARNESS = "chop_rag.harness"
MAX_MODULE_LINES = 500


# graphs/, nodes/, prompts/, deploy/ sit at the repository's top and are imported as chop's
# subpackages (chop_rag/graphs etc. link to them; the wheel holds them inside chop_rag/).
LINKED_INTO_CHOP = ("graphs", "nodes", "prompts", "deploy")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[0] in LINKED_INTO_CHOP:
        parts = ("chop_rag", *parts)
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
    if within(module, "chop_rag.graphs"):
        return 2
    return 1 if within(module, "chop_rag.nodes") else 0


def test_the_finder_sees_a_circle_and_lazy_and_relative_imports() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    lazy = "def f() -> None:\n    from chop_rag.store import Store\n"
    assert "chop_rag.store" in set(imports_in(lazy, "chop_rag"))
    typing_only = "if TYPE_CHECKING:\n    from .state import Chunk\n"
    assert "chop_rag.state" in set(imports_in(typing_only, "chop_rag"))


def test_the_graph_of_imports_sees_the_graphs_use_the_nodes() -> None:
    # The rules below hold only if the imports are read under the modules' own names.
    house = import_graph(*HOUSE)
    assert {"chop_rag.nodes.split", "chop_rag.graphs.checked"} <= house["chop_rag.graphs.ingest"]
    assert "chop_rag.config" in house["chop_rag.nodes.split"]


def test_graphs_nodes_prompts_and_deploy_are_imported_only_as_chops_packages() -> None:
    """An import of graphs/ by its top-level name works from a checkout's root but not from the
    installed wheel (its only top-level name is chop_rag), and would load a second copy of it."""
    top_level = [
        f"{path.relative_to(ROOT)} imports {target}"
        for folder in (*HOUSE, "prompts", "deploy", "tests", "bench", "examples")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for target in sorted(set(imported(path)))
        if target.split(".")[0] in LINKED_INTO_CHOP
    ]
    assert top_level == []


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
        for name in modules("chop_rag")
        if name != "chop_rag"
        and floor_of_chop(name) is None
        and not within(name, HARNESS)
        and not any(within(name, top) for top in TOP_FLOOR)
        and not within(name, "chop_rag.web")
    ]
    assert homeless == []


def test_chops_packages_import_only_from_their_floor_and_below() -> None:
    """Models and the database at the bottom, reading and labelling above them, questions above
    labelling, retrieval above questions, answers on top."""
    upward = [
        f"{module} imports {target}"
        for module, targets in import_graph("chop_rag").items()
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
    assert floor_of_chop("chop_rag.questions.matching") == 5
    assert floor_of_chop("chop_rag.text.periods") == 0
    assert floor_of_chop("chop_rag.harness.stub_llm") is None
    assert floor_of_chop("chop_rag.answers.figures") > floor_of_chop("chop_rag.retrieval.retrieve")  # type: ignore[operator]


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
    module of chop_rag.questions imports only those listed before it in ORDER_OF_QUESTIONS."""
    listed = {name for name in modules("chop_rag") if name.startswith("chop_rag.questions.")}
    assert listed == set(ORDER_OF_QUESTIONS), "every module of chop_rag.questions has its place"
    assert out_of_order(import_graph("chop_rag"), ORDER_OF_QUESTIONS) == []


def test_the_order_rule_sees_a_module_called_back_by_one_it_calls() -> None:
    graph = {
        "chop_rag.questions.matching": {"chop_rag.questions.facts"},
        "chop_rag.questions.facts": {"chop_rag.questions.matching", "chop_rag.text.periods"},
        "chop_rag.questions.statements": {"chop_rag.questions.conversation"},
    }
    assert out_of_order(graph, ORDER_OF_QUESTIONS) == [
        "chop_rag.questions.facts imports chop_rag.questions.matching",
        "chop_rag.questions.statements imports chop_rag.questions.conversation",
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
        for name, path in modules("chop_rag").items()
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
