"""Which tests run another process and which need Spark, read from their source, so that tests/conftest.py
can mark them (``subprocess``, ``spark``) without a marker written on each test.

A test runs a process when its function, a fixture it uses, or a function either of them calls (in the
test's module or in a module under tests/ it imports from) calls ``subprocess.run``, ``Popen``,
``check_output``, ``check_call`` or ``call``. A test needs Spark when it is under tests/spark/ or the same
reading finds ``pytest.importorskip("pyspark")``."""

from __future__ import annotations

import ast
import importlib.util
from functools import cache
from pathlib import Path

PROCESS_CALLS = frozenset({"run", "Popen", "check_output", "check_call", "call"})


def _direct(node: ast.AST) -> set[str]:
    """The kinds ``node``'s own code shows: a process started, pyspark required."""
    found = set()
    for call in ast.walk(node):
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            continue
        owner = call.func.value
        if isinstance(owner, ast.Name) and owner.id == "subprocess" and call.func.attr in PROCESS_CALLS:
            found.add("subprocess")
        elif (
            call.func.attr == "importorskip"
            and call.args
            and isinstance(call.args[0], ast.Constant)
            and call.args[0].value == "pyspark"
        ):
            found.add("spark")
    return found


class _Module:
    """One module's functions (by name, methods included), and the names it imports from tests.*."""

    def __init__(self, name: str, tree: ast.Module) -> None:
        self.name = name
        self.functions: dict[str, ast.AST] = {}
        self.imported: dict[str, tuple[str, str | None]] = {}  # local name -> (module, attribute or None)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(node.name, node)
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(name, node.module, node.level)
                for alias in node.names:
                    local = alias.asname or alias.name
                    if source and source.split(".")[0] == "tests":
                        self.imported[local] = (source, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "tests" and alias.asname:
                        self.imported[alias.asname] = (alias.name, None)


def _absolute(module: str, target: str | None, level: int) -> str | None:
    if level == 0:
        return target
    package = module.split(".")[:-level] if level else []
    return ".".join([*package, *([target] if target else [])]) or None


@cache
def _module(name: str) -> _Module | None:
    if name.split(".")[0] != "tests":
        return None
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    path = spec.origin if spec else None
    if path is None or not path.endswith(".py"):
        return None
    return _Module(name, ast.parse(Path(path).read_text(encoding="utf-8")))


@cache
def kinds_of(module: str, function: str) -> frozenset[str]:
    """The kinds of ``module.function``: its own and those of the functions it names (a cycle adds nothing)."""
    return frozenset(_kinds(module, function, set()))


def _kinds(module: str, function: str, seen: set[tuple[str, str]]) -> set[str]:
    if (module, function) in seen:
        return set()
    seen.add((module, function))
    mod = _module(module)
    if mod is None:
        return set()
    if function not in mod.functions:
        if function in mod.imported:  # a name this module imports from another under tests/
            source, attr = mod.imported[function]
            return _kinds(source, attr, seen) if attr else set()
        return set()
    node = mod.functions[function]
    found = _direct(node)
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id != function:
            found |= _kinds(module, sub.id, seen)
        elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id in mod.imported:
            source, attr = mod.imported[sub.value.id]  # helper_module.function
            target = f"{source}.{attr}" if attr else source
            if _module(target) is not None:
                found |= _kinds(target, sub.attr, seen)
    return found


def kinds_of_item(item, tests: Path) -> set[str]:
    """The markers a collected test takes: ``spark`` under tests/spark/, and what its source shows."""
    found: set[str] = set()
    path = Path(str(item.path)).resolve()
    if path.is_relative_to(tests.resolve()) and path.relative_to(tests.resolve()).parts[0] == "spark":
        found.add("spark")
    function = getattr(item, "function", None)
    if function is not None:
        found |= kinds_of(function.__module__, function.__name__)
    info = getattr(item, "_fixtureinfo", None)
    for defs in info.name2fixturedefs.values() if info else ():
        for fixturedef in defs:
            func = fixturedef.func
            module = getattr(func, "__module__", "") or ""
            if module.split(".")[0] == "tests":
                found |= kinds_of(module, func.__name__)
    return found
