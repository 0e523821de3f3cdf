"""Imports run one way: foundation → env → episodes → buffers → module → callback → entry points.

The graph is read from the source (every ``import`` statement, those inside functions included, so a
"lazy" upward import counts), not from ``sys.modules``. Imports under ``if TYPE_CHECKING:`` are left
out: they never run, and annotating a parameter with a class from a layer above couples no code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("imaginebench", "modules", "datamodules", "callbacks")

# Lowest layer first; a module belongs to the layer of the longest prefix that names it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "foundation",
        (
            "imaginebench.errors",
            "imaginebench.storage",
            "imaginebench.provenance",
            "imaginebench.robust_statistics",
            "imaginebench.plotting",
            "imaginebench.locks",
            "imaginebench.assets",
            "imaginebench.checkpoints",
            "imaginebench.levels",
            "imaginebench.env_spec",
            "imaginebench.upstream",
            "imaginebench.instructions",
            "imaginebench.processes",
            "imaginebench.stage_costs",
        ),
    ),
    ("env", ("imaginebench.envs", "imaginebench.registry", "imaginebench.experts", "imaginebench.evaluation")),
    (
        "episodes",
        (
            "imaginebench.datasets",
            "imaginebench.collect",
            "imaginebench.rollout_quality",
            "imaginebench.shipped",
        ),
    ),
    ("buffers", ("datamodules",)),
    ("module", ("modules",)),
    ("callback", ("callbacks", "imaginebench.run_groups", "imaginebench.report_plots", "imaginebench.report")),
    ("entry points", ("imaginebench.commands", "imaginebench.benchmark", "imaginebench")),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    best, best_length = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_length:
                best, best_length = index, len(prefix)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in {Path(__file__).name}")
    return best


def _runtime_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement except those under ``if TYPE_CHECKING:``."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for statement in node.body for child in ast.walk(statement))
    return [
        node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skipped
    ]


def import_graph() -> dict[str, set[str]]:
    """module → the project modules it imports (a name imported from a package counts as the package's
    ``__init__`` unless it is a submodule)."""
    files = {module_name(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _runtime_imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in files else base for alias in node.names]
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
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


def test_no_module_imports_a_layer_above_its_own():
    upward = [
        f"{source} ({LAYERS[layer_of(source)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
        for source, targets in sorted(import_graph().items())
        for target in sorted(targets)
        if layer_of(target) > layer_of(source)
    ]
    assert upward == []


def test_no_imports_run_in_a_circle():
    assert cycles(import_graph()) == []


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set()}, []),
    ],
)
def test_the_cycle_finder_finds_circles(graph, expected):
    assert cycles(graph) == expected


def test_the_graph_sees_imports_inside_functions_and_skips_type_checking_ones(tmp_path):
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\ndef f():\n    import b\n")
    assert [node.names[0].name for node in _runtime_imports(tree) if isinstance(node, ast.Import)] == ["b"]
