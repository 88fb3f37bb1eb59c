"""The import rules of issue #10, pinned: who may import whom, what the read-only commands load,
no import cycle, and generated code a linter finds nothing in."""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import subprocess
import symtable
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOTS = {"kcodec": REPO / "src" / "kcodec", "kcodec.codegen": REPO / "codegen", "kcodec.generated": REPO / "generated"}
GENERATED = REPO / "generated"
CSRC = REPO / "csrc"


def _modules() -> dict[str, Path]:
    """Every module of the import package kcodec, by dotted name (root folders mapped as installed)."""
    out: dict[str, Path] = {}
    for prefix, root in ROOTS.items():
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            if prefix == "kcodec" and rel.parts[0] in ("codegen", "generated"):
                continue
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            out[".".join((prefix, *parts))] = path
    return out


MODULES = _modules()


def _package(name: str) -> str:
    return name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]


@functools.cache  # a module's source is read and walked once per mode, however many rules ask
def _imports(name: str, module_level_only: bool) -> frozenset[str]:
    """What module ``name`` imports: kcodec modules by dotted name, other top-level packages by name."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    nodes: list[ast.AST] = []
    if module_level_only:
        todo = list(tree.body)
        while todo:  # imports at module level, including inside module-level if/try (not TYPE_CHECKING)
            node = todo.pop()
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, (ast.If, ast.Try)):
                todo += node.body + node.orelse + getattr(node, "finalbody", [])
                for h in getattr(node, "handlers", []):
                    todo += h.body
            nodes.append(node)
    else:  # every level, function bodies included; TYPE_CHECKING blocks are no import at run time
        nodes = []
        todo = [tree]
        while todo:
            node = todo.pop()
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                todo += node.orelse
                continue
            nodes.append(node)
            todo += ast.iter_child_nodes(node)
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out.update(_known(a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package(name)
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.add(sub if sub in MODULES else _known(target))
    return frozenset(out)


def _known(dotted: str) -> str:
    """The kcodec module a dotted import names (its longest known prefix), or the top-level package."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in MODULES:
            return ".".join(parts[:n])
    return parts[0]


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


# ---------------------------------------------------------------------------- who imports whom


def test_only_codegen_imports_jinja2_and_the_emitters() -> None:
    forbidden = ("jinja2", "kcodec.codegen.emit", "kcodec.codegen.render", "kcodec.codegen.tidy")
    for name in MODULES:
        if _under(name, "kcodec.codegen"):
            continue
        bad = sorted(i for i in _imports(name, module_level_only=False) if any(_under(i, f) for f in forbidden))
        assert not bad, f"{name} imports {bad}"


def test_jinja2_only_in_render_and_yaml_only_in_the_loader() -> None:
    for name in MODULES:
        imported = _imports(name, module_level_only=False)
        if "jinja2" in imported:
            assert name == "kcodec.codegen.render", name
        if "yaml" in imported:
            assert name == "kcodec.codegen.schema.loader", name
    assert "yaml" not in _imports("kcodec.codegen.schema.loader", module_level_only=True)  # loaded when used


def test_emitters_import_only_the_schema_and_the_buffer() -> None:
    emitters = [n for n in MODULES if _under(n, "kcodec.codegen.emit") and n != "kcodec.codegen.emit"]
    assert {"kcodec.codegen.emit.construct", "kcodec.codegen.emit.python", "kcodec.codegen.emit.c"} <= set(emitters)
    for name in emitters:
        ours = {i for i in _imports(name, module_level_only=False) if _under(i, "kcodec")}
        assert ours <= {"kcodec.codegen.schema", "kcodec.codegen.emit.buffer"}, f"{name} imports {sorted(ours)}"


def test_runtime_never_imports_generated() -> None:
    for name in MODULES:
        if _under(name, "kcodec.runtime"):
            bad = sorted(i for i in _imports(name, module_level_only=False) if _under(i, "kcodec.generated"))
            assert not bad, f"{name} imports {bad}"


# The one known cycle, and it is the schema's: a legacy message's compressed value holds a message
# set of legacy log entries, which hold legacy messages. Each generated module (construct and fast)
# reaches the other only at call time (LazyBound, function bodies), so the module-level imports both
# ways are safe; breaking them means one module per recursive group of entities in the generator.
SCHEMA_RECURSION = {
    ("kcodec.generated.legacy_message", "kcodec.generated.legacy_log_entry"),
    ("kcodec.generated.fast.legacy_message", "kcodec.generated.fast.legacy_log_entry"),
}


def test_no_import_cycle() -> None:
    """No circle at any level: an import inside a function is a dependency too (it only hides the circle
    from the interpreter)."""
    graph = {n: {i for i in _imports(n, module_level_only=False) if i in MODULES and i != n} for n in MODULES}
    for a, b in SCHEMA_RECURSION:
        assert b in graph[a] and a in graph[b], f"{a} <-> {b} is gone: drop it from SCHEMA_RECURSION"
        graph[a].discard(b)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(n: str) -> None:
        state[n] = 1
        path.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                cycle = path[path.index(m) :] + [m]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if m not in state:
                visit(m)
        path.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)


# The floors of the house, bottom to top (docs/layout.md, "How the code is laid out"): no package imports one
# above it, at any level. ``kcodec`` (the public face), ``cli``, ``bench`` and ``fuzz`` are not floors.
FORBIDDEN = {
    "kcodec.records": ("kcodec.log", "kcodec.internal_topics", "kcodec.tools", "kcodec.spark", "kcodec.commands"),
    "kcodec.log": ("kcodec.internal_topics", "kcodec.tools", "kcodec.spark", "kcodec.commands"),
    "kcodec.internal_topics": ("kcodec.values", "kcodec.tools", "kcodec.spark", "kcodec.commands"),
    # Schema Registry framed values: beside internal_topics (the records layer and the log below it)
    "kcodec.values": ("kcodec.internal_topics", "kcodec.tools", "kcodec.spark", "kcodec.commands"),
    "kcodec.tools": ("kcodec.spark", "kcodec.commands", "kcodec.cli"),
    "kcodec.spark": ("kcodec.commands", "kcodec.cli"),
    "kcodec.commands": ("kcodec.cli",),
    "kcodec.bench": ("kcodec.commands", "kcodec.cli"),
    "kcodec.fuzz": ("kcodec.commands", "kcodec.cli"),
}
BOTTOM = ("kcodec.runtime", "kcodec.codegen", "kcodec.generated", "kcodec.errors")
ABOVE_BOTTOM = (
    "kcodec.records",
    "kcodec.log",
    "kcodec.internal_topics",
    "kcodec.values",
    "kcodec.tools",
    "kcodec.spark",
)


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_package_imports_a_floor_above_it(package: str) -> None:
    bad = sorted(
        f"{name} -> {i}"
        for name in MODULES
        if _under(name, package)
        for i in _imports(name, module_level_only=False)
        if any(_under(i, f) for f in FORBIDDEN[package])
    )
    assert not bad, "\n".join(bad)


def test_the_bottom_imports_none_of_the_floors() -> None:
    for name in MODULES:
        if any(_under(name, b) for b in BOTTOM) and not _under(name, "kcodec.codegen"):
            bad = sorted(i for i in _imports(name, module_level_only=False) if any(_under(i, a) for a in ABOVE_BOTTOM))
            assert not bad, f"{name} imports {bad}"


def test_no_module_imports_another_modules_underscore_name() -> None:
    """A name with a leading underscore is its module's own: another module that needs it asks for a public
    name (or the thing moves)."""
    bad = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not (node.level or (node.module or "").startswith("kcodec")):
                continue
            private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
            bad += [f"{name}: {node.module}.{n}" for n in private]
            if node.module and any(part.startswith("_") and part != "_ckernel" for part in node.module.split(".")):
                bad.append(f"{name}: {node.module}")
    assert not bad, "\n".join(bad)


def test_mypy_checks_every_package() -> None:
    """``make lint`` type-checks all of src/kcodec and codegen/ (pyproject.toml's [tool.mypy] files)."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    files = {f.rstrip("/") for f in config["files"]}
    assert {"src/kcodec", "codegen"} <= files, files
    silenced = [o for o in config.get("overrides", []) if o.get("ignore_errors") or o.get("follow_imports") == "silent"]
    assert not silenced, silenced


# ---------------------------------------------------------------------------- what the read-only commands load


def _loaded_by(*commands: list[str], watched: tuple[str, ...] = ("jinja2", "yaml")) -> list[str]:
    """The modules (of the packages in ``watched``) one fresh interpreter holds after running ``commands``."""
    code = (
        "import io, json, sys, contextlib\n"
        "from kcodec.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    for args in {list(commands)!r}:\n"
        "        code = main(args)\n"
        "        assert code == 0, (args, code)\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({watched!r}))))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("KCODEC_")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def small_log(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("log") / "00000000000000000000.log"
    from kcodec.cli import main

    data = tmp_path_factory.getbasetemp() / "records.jsonl"
    data.write_text('{"key": "k", "value": "hello"}\n{"value": "world"}\n', encoding="utf-8")
    assert main(["write", str(path), "--input", str(data)]) == 0
    return str(path)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["dump", "LOG"], id="dump"),
        pytest.param(["layout", "--diff", "record_batch:2", "record_batch:2"], id="layout-diff"),
        pytest.param(["layout", "--diff", "legacy_log_entry:1", "record_batch:2"], id="layout-diff-entities"),
        pytest.param(["inspect", "LOG"], id="inspect"),
    ],
)
def test_read_only_commands_load_neither_jinja2_nor_yaml(args: list[str], small_log: str) -> None:
    assert _loaded_by([small_log if a == "LOG" else a for a in args]) == []


def test_a_data_segments_dump_loads_no_internal_topic_value_or_index_machinery(tmp_path: Path, small_log: str) -> None:
    """Whether a partition directory is an internal topic's is answered from the registries' topic names alone:
    a data segment's dump (text, records, --json) and verify import no codec registry, Kafka JSON, schema IR,
    Schema Registry decoder, Kafka 0.7 reader or index reader, each a cost every such command paid at start."""
    partition = tmp_path / "orders-0"
    partition.mkdir()
    log = partition / Path(small_log).name
    log.write_bytes(Path(small_log).read_bytes())
    commands = [["dump", str(log)], ["dump", "--print-data-log", str(log)], ["dump", "--json", str(log)]]
    watched = (
        "kcodec.internal_topics.registry",
        "kcodec.internal_topics.json_converter",
        "kcodec.tools.dump.internal",
        "kcodec.codegen",
        "kcodec.values",
        "kcodec.tools.dump.values",
        "kcodec.records.kafka07",
        "kcodec.log.index",
    )
    assert _loaded_by(*commands, ["verify", str(log)], watched=watched) == []


def test_import_kcodec_and_generated_schema_set_load_neither() -> None:
    code = (
        "import sys, kcodec, kcodec.generated\n"
        "kcodec.generated.schema_set()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jinja2', 'yaml')\n"
        "      or m.startswith(('kcodec.codegen.emit', 'kcodec.codegen.render'))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# ---------------------------------------------------------------------------- generated code is tidy


def _generated_python() -> list[Path]:
    files = sorted(GENERATED.rglob("*.py"))
    assert len(files) > 10
    return files


@pytest.mark.parametrize("path", _generated_python(), ids=lambda p: p.relative_to(GENERATED).as_posix())
def test_generated_module_has_no_unused_import(path: Path) -> None:
    """By the symbol table, not by the generator's own tidy pass: a name imported at module level
    must be read somewhere (a lambda parameter of the same name does not count)."""
    source = path.read_text(encoding="utf-8")
    top = symtable.symtable(source, str(path), "exec")
    read: set[str] = set()
    todo = [top]
    while todo:
        table = todo.pop()
        todo += table.get_children()
        for sym in table.get_symbols():
            if sym.is_referenced() and (table is top or sym.is_global() or sym.is_free()):
                read.add(sym.get_name())
    read |= _annotation_only_imports(ast.parse(source))
    unused = sorted(s.get_name() for s in top.get_symbols() if s.is_imported() and s.get_name() not in read)
    assert not unused, f"{path.name} imports {unused} without using them"


def _annotation_only_imports(tree: ast.Module) -> set[str]:
    """Names the symbol table never sees read, though they are: ``from __future__`` features, and what an
    ``if TYPE_CHECKING:`` block imports for annotations (postponed annotations are not compiled)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            names |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for inner in node.body:
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    names |= {(a.asname or a.name).split(".")[0] for a in inner.names}
    return names


def _long_lines(path: Path) -> list[int]:
    return [i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if len(line) > 120]


def test_generated_lines_fit_120_columns() -> None:
    for path in [*_generated_python(), GENERATED / "_ckernel.c"]:
        long = _long_lines(path)
        assert not long, f"{path.name}: lines {long} are over 120 columns"
    # the kernel's hand-written C (csrc/) keeps its style, a few lines over
    long_c = {path.name: _long_lines(path) for path in sorted(CSRC.iterdir())}
    assert sum(map(len, long_c.values())) <= 12, f"csrc/: lines over 120 columns {long_c}"


def test_templates_hold_no_hand_written_c() -> None:
    """The hand-written C lives in csrc/ (plain C files); the kernel's template prints only what the
    schemas decide and includes every csrc/ file, each once."""
    templates = sorted((REPO / "codegen" / "templates").glob("*.j2"))
    for path in templates:
        text = path.read_text(encoding="utf-8")
        assert "{{" in text or "{%" in text, f"{path.name} has no template tag: hand-written, belongs in csrc/"
    assert [p.name for p in templates if p.name.endswith(".c.j2")] == ["ckernel.c.j2"]
    sources = sorted(p.name for p in CSRC.iterdir())
    assert sources and all(name.endswith((".c", ".h")) for name in sources), sources
    included = re.findall(r'^#include "([^"]+)"$', (REPO / "codegen" / "templates" / "ckernel.c.j2").read_text(), re.M)
    assert sorted(included) == sources and len(set(included)) == len(included), included
    # kcodec's own schemas give every writer: the generated kernel includes all of csrc/
    generated = re.findall(r'^#include "([^"]+)"$', (GENERATED / "_ckernel.c").read_text(encoding="utf-8"), re.M)
    assert generated == included
