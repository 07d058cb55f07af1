"""The package's layering, read from the source: no import circle, no engine reaching up.

Every module of ``ccrawl/`` is parsed with ``ast``; imports inside functions count (they still
tie the modules together at run time), imports under ``if TYPE_CHECKING:`` do not (they never
run). The graph's nodes are modules; an import of a package is an edge to its ``__init__``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ccrawl"

# The engines and the layers below them: none of them may import the layers above.
ENGINES = (
    "recrawl", "crawl", "markdown", "commoncrawl", "extract", "url", "warc", "net", "fetch",
    "store", "scale", "content", "hub",
)
UPPER = ("ops", "cli", "serve", "datasets")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node``, skipping the bodies of ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for orelse in child.orelse:
                yield from _import_nodes_of(orelse)
            continue
        yield from _import_nodes_of(child)


def _import_nodes_of(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    else:
        yield from _import_nodes(node)


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module ``name`` names, or its nearest enclosing package known here."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                base = name.split(".")
                drop = node.level - 1 if is_package else node.level
                base = base[: len(base) - drop] if drop else base
                prefix = ".".join(base)
                module = f"{prefix}.{node.module}" if node.module else prefix
            else:
                module = node.module or ""
            # ``from pkg import sub`` imports the submodule when there is one.
            targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules else module
                       for alias in node.names]
        for target in targets:
            if not target.startswith("ccrawl"):
                continue
            resolved = _resolve(target, modules)
            if resolved is not None and resolved != name:
                found.add(resolved)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports_of(name, path, modules) for name, path in modules.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_one_cycle(graph, set(c)) for c in components]


def _one_cycle(graph: dict[str, set[str]], members: set[str]) -> list[str]:
    """A concrete path ``a -> b -> ... -> a`` inside one strongly connected component."""
    start = min(members)
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for nxt in sorted(graph[node] & members):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [*reversed(path), start]
                if nxt not in parents:
                    parents[nxt] = node
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    raise AssertionError(f"no cycle through {start}")


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items() if _package(module) in ENGINES
        for target in targets if _package(target) in UPPER
    )


def test_the_graph_sees_the_package() -> None:
    graph = import_graph()
    assert "ccrawl.cli.main" in graph
    assert "ccrawl.ops" in graph["ccrawl.ops.url"] or "ccrawl.ops.caps" in graph["ccrawl.ops.url"]


def test_function_level_imports_count_and_type_checking_ones_do_not(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ccrawl.cli import main\n"
        "def f():\n    from ccrawl.ops import url\n"
    )
    path = tmp_path / "probe.py"
    path.write_text(source)
    modules = {"ccrawl.cli.main": path, "ccrawl.ops.url": path, "ccrawl.ops": path, "ccrawl.cli": path}
    assert _imports_of("ccrawl.probe", path, modules) == {"ccrawl.ops.url"}


def test_find_cycles_reports_a_path() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(graph) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle() -> None:
    cycles = find_cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_no_engine_imports_an_upper_layer() -> None:
    upward = upward_imports(import_graph())
    assert not upward, "engines importing ops/cli/serve/datasets:\n" + "\n".join(upward)


def test_datasets_import_no_operation_cli_or_server() -> None:
    """The dataset layer sits below the operations: ``datasets/verify_kinds.py`` once imported ``ops.news``
    for ``month_paths`` (now :mod:`ccrawl.commoncrawl.news.monthpaths`); type-only imports do not count."""
    upward = sorted(f"{module} -> {target}" for module, targets in import_graph().items()
                    if _package(module) == "datasets"
                    for target in targets if _package(target) in ("ops", "cli", "serve"))
    assert not upward, "datasets importing ops/cli/serve:\n" + "\n".join(upward)


# Private modules a sibling may name: the compiled extensions' package, the generated build stamp and the
# console entry point (``python -m ccrawl`` runs it too).
PRIVATE_MODULES_OPEN_TO_THE_PACKAGE = {"ccrawl._native", "ccrawl._build_info", "ccrawl._entry"}


def private_imports(modules: dict[str, Path] | None = None) -> list[str]:
    """``from ccrawl.x import _name`` (or ``import ccrawl._x``) in one module for a name another module
    keeps private; what a module shares with others gets a public name."""
    modules = modules if modules is not None else _modules()
    found = []
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("ccrawl"):
                names = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith("ccrawl.")]
            else:
                continue
            for name in names:
                private = [p for p in name.split(".")[1:] if p.startswith("_") and not p.startswith("__")]
                if private and not any(name == m or name.startswith(m + ".")
                                       for m in PRIVATE_MODULES_OPEN_TO_THE_PACKAGE):
                    found.append(f"{module}: {name}")
    return sorted(found)


def test_private_import_check_finds_one(tmp_path: Path) -> None:
    path = tmp_path / "probe.py"
    path.write_text("from ccrawl.crawl.run import _Crawl, Crawl\nimport ccrawl._sigint\n"
                    "from ccrawl._native import surt\n")
    assert private_imports({"ccrawl.probe": path}) == [
        "ccrawl.probe: ccrawl._sigint", "ccrawl.probe: ccrawl.crawl.run._Crawl"]


def test_no_module_imports_another_modules_private_name() -> None:
    found = private_imports()
    assert not found, "private names imported across modules (give them a public name):\n" + "\n".join(found)
