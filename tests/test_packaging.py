"""What the wheel declares against what the package imports, and what the README's commands promise.

A fresh virtualenv has only what ``pyproject.toml`` declares: a third-party import the package makes
that no requirement covers is a ModuleNotFoundError on a newcomer's first command (the demo once
died on ``dnslib``). These tests read the package's own imports (``ast``) and the declared
requirements, so a new import without its declaration fails here, not on a fresh machine.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "ccrawl"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _requirement_name(spec: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-").replace(".", "-")


def _declared(*extras: str) -> set[str]:
    project = PYPROJECT["project"]
    names = {_requirement_name(s) for s in project["dependencies"]}
    for extra in extras:
        names |= {_requirement_name(s) for s in project["optional-dependencies"][extra]}
    return names


def _top_level_imports(root: Path) -> dict[str, set[str]]:
    """Top-level module name -> files importing it (absolute imports only, every nesting level)."""
    found: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(REPO)))
    return found


def _third_party(imports: dict[str, set[str]]) -> dict[str, set[str]]:
    # `_typeshed` is the standard library's stubs-only module (imported under TYPE_CHECKING, never at run time)
    local = {"ccrawl", "__future__", "_typeshed"}
    return {m: f for m, f in imports.items() if m not in local and m not in sys.stdlib_module_names}


_INSTALLED = packages_distributions()


def _distributions(module: str) -> set[str]:
    dists = _INSTALLED.get(module, [])
    return {d.lower().replace("_", "-").replace(".", "-") for d in dists}


def test_the_stand_ins_import_only_what_the_wheel_declares_for_them() -> None:
    # ccrawl/testing ships in the wheel and runs in the demo: core dependencies plus the `testing` extra
    declared = _declared("testing")
    imports = _third_party(_top_level_imports(PACKAGE / "testing"))
    assert "dnslib" in imports  # the import that broke the demo is seen by this test
    missing = {m: sorted(f) for m, f in imports.items() if not (_distributions(m) & declared)}
    assert missing == {}, f"ccrawl/testing imports packages neither core nor [testing] declares: {missing}"


def test_the_package_imports_only_declared_distributions() -> None:
    extras = tuple(PYPROJECT["project"]["optional-dependencies"])
    declared = _declared(*extras)
    imports = _third_party(_top_level_imports(PACKAGE))
    # a module of no installed distribution counts under its own name (an extra nobody installed here)
    missing = {m: sorted(f) for m, f in imports.items()
               if not ((_distributions(m) or {m.lower().replace("_", "-")}) & declared)}
    # `compression` is the standard library's from 3.14 (compression.zstd), tried before backports.zstd
    assert missing.pop("compression", None) is not None
    assert missing == {}, f"imported but not declared in pyproject.toml: {missing}"


def test_numpy_used_by_the_capture_schema_is_a_core_dependency() -> None:
    imports = _third_party(_top_level_imports(PACKAGE / "recrawl"))
    assert "numpy" in imports and "numpy" in _declared()
    assert {"dnslib", "trustme"} <= _declared("testing")
    assert "dnslib" not in _declared(), "dnslib is the stand-ins' (an extra), not the recrawler's"
    # the test command installs '.[dev]' and records it as the demo's install: dev must hold testing
    assert _declared("testing") <= _declared("dev")


def test_production_code_does_not_import_the_stand_ins() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.is_relative_to(PACKAGE / "testing"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "ccrawl.testing" or n.startswith("ccrawl.testing.") for n in names):
                offenders.append(str(path.relative_to(REPO)))
    assert offenders == []
    proc = subprocess.run([sys.executable, "-c", "import ccrawl.fetch.bench"], capture_output=True, text=True,
                          cwd=REPO)
    assert proc.returncode != 0 and "No module named 'ccrawl.fetch.bench'" in proc.stderr
    assert (REPO / "bench" / "bench_fetch.py").is_file()


def test_ci_runs_the_demo_first_in_an_empty_virtualenv_then_the_tests() -> None:
    lines = [ln.strip() for ln in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
             if ln.strip() and not ln.strip().startswith("#")]
    text = "\n".join(lines)

    def at(pattern: str) -> int:
        found = [i for i, ln in enumerate(lines) if re.search(pattern, ln)]
        assert found, f".ci/run has no line matching {pattern!r}:\n{text}"
        return found[0]

    venv, activate, demo, test, twins = (at(r"python3 -m venv "), at(r"source .*/bin/activate"),
                                         at(r"^bash scripts/demo$"), at(r"^bash scripts/test$"),
                                         at(r"CCRAWL_NO_EXTENSIONS=1 .*pytest"))
    assert venv < activate < demo < test < twins
    assert "set -euo pipefail" in text  # a failing demo fails CI
    assert at(r'^rm -rf "\$fresh"$') < venv  # the virtualenv is empty every time


def test_readme_set_up_says_what_each_command_installs_and_how_long_it_takes() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    setup = readme.split("## Set up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    assert "bash scripts/demo" in setup and "bash scripts/test" in setup
    demo_part, test_part = setup.split("bash scripts/test", 1)
    assert "[testing]" in demo_part and re.search(r"\d+\s*(s|min|minutes|seconds)\b", demo_part)
    assert "[dev]" in setup and re.search(r"\d+\s*(s|min|minutes|seconds)\b", test_part)
    assert "either order" in setup
