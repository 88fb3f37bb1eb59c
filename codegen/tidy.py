"""Tidy generated Python after rendering: drop the imports a module does not use, then format it
with ruff (pinned in the ``generate`` extra) exactly as ``make lint`` checks the repository.

Templates import what any module of their kind may need; which names one module uses depends on
its schema. Deciding it here, from the rendered module's syntax tree, keeps the templates simple
and the output free of unused imports, deterministically.
"""

from __future__ import annotations

import ast
import io
import subprocess
import tempfile
import textwrap
import tokenize
from pathlib import Path

_WIDTH = 120


def tidy_python(source: str) -> str:
    tree = ast.parse(source)
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    lines = source.splitlines(keepends=True)
    for node in reversed(tree.body):  # bottom up, so earlier line numbers stay valid
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":  # binds no name it is used by
            continue
        kept = [a for a in node.names if _bound(a, node) in used]
        if len(kept) == len(node.names):
            continue
        text = _import_text(node, kept) if kept else ""
        lines[node.lineno - 1 : node.end_lineno] = [text] if text else []
    return "".join(lines)


def _bound(alias: ast.alias, node: ast.stmt) -> str:
    """The name an import binds."""
    if alias.asname:
        return alias.asname
    return alias.name.split(".")[0] if isinstance(node, ast.Import) else alias.name


def _import_text(node: ast.Import | ast.ImportFrom, names: list[ast.alias]) -> str:
    parts = [f"{a.name} as {a.asname}" if a.asname else a.name for a in names]
    if isinstance(node, ast.Import):
        return "".join(f"import {p}\n" for p in parts)
    head = f"from {'.' * node.level}{node.module or ''} import "
    one = head + ", ".join(parts)
    if len(one) <= _WIDTH:
        return one + "\n"
    indent = " " * (len(head) + 1)
    out, line = [], head + "("
    for i, part in enumerate(parts):
        piece = part + (")" if i == len(parts) - 1 else ",")
        if line.endswith(("(", ",")) and len(line) + 1 + len(piece) > _WIDTH and not line.endswith("("):
            out.append(line)
            line = indent + piece
        else:
            line += piece if line.endswith("(") else " " + piece
    out.append(line)
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------- long lines


def wrap_long_lines(source: str) -> str:
    """Break every line longer than 120 columns, deterministically: a comment into several, a
    bracketed line at its last bracket pair (one item a line when it holds commas, as black's
    right-hand split does), a string that is still too long into adjacent literals split at spaces."""
    out: list[str] = []
    for line in source.split("\n"):
        out.extend(_wrap(line))
    return "\n".join(out)


def _wrap(line: str) -> list[str]:
    if len(line) <= _WIDTH:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    text = line.strip()
    if text.startswith("#"):
        return textwrap.wrap(
            text[1:].strip(),
            _WIDTH - len(indent) - 2,
            initial_indent=indent + "# ",
            subsequent_indent=indent + "# ",
            break_long_words=False,
            break_on_hyphens=False,
        )
    if text.startswith('"""') and text.endswith('"""') and len(text) > 6:  # a one-line docstring
        body = textwrap.wrap(text[3:-3], _WIDTH - len(indent) - 6, break_long_words=False, break_on_hyphens=False)
        return [indent + '"""' + body[0], *[indent + b for b in body[1:]], indent + '"""']
    if text.startswith('"""') and '"""' not in text[3:]:  # the first line of a longer docstring
        body = textwrap.wrap(text[3:], _WIDTH - len(indent) - 3, break_long_words=False, break_on_hyphens=False)
        return [indent + '"""' + body[0], *[indent + b for b in body[1:]]]
    tokens = _tokens(text)
    if tokens is None:
        return [line]
    split = _right_hand_split(text, tokens)
    if split is None:
        return _string_split(indent, text, tokens) or [line]
    head, items, trailing_comma, tail = split
    inner = indent + "    "
    lines = [indent + head]
    for item in items:
        lines.extend(_wrap(inner + item + ("," if trailing_comma else "")))
    lines.extend(_wrap(indent + tail))
    return lines


def _tokens(text: str) -> list[tokenize.TokenInfo] | None:
    """The tokens of one logical line, or None when it is not one (part of a longer statement)."""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    toks = [t for t in toks if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)]
    if any(t.start[0] != 1 or t.end[0] != 1 for t in toks):
        return None
    return toks


def _right_hand_split(text: str, tokens: list[tokenize.TokenInfo]) -> tuple[str, list[str], bool, str] | None:
    """Split at the last closing bracket and its opener: (head ending with the opener, the items
    between, whether they take trailing commas, tail starting with the closer)."""
    closers = [i for i, t in enumerate(tokens) if t.type == tokenize.OP and t.string in ")]}"]
    for close in reversed(closers):  # the last bracket first; an earlier one when its head is too long
        split = _split_at(text, tokens, close)
        if split is not None:
            return split
    return None


def _split_at(text: str, tokens: list[tokenize.TokenInfo], close: int) -> tuple[str, list[str], bool, str] | None:
    depth, commas = 0, []
    for open_ in range(close, -1, -1):
        s = tokens[open_].string if tokens[open_].type == tokenize.OP else ""
        if s in (")", "]", "}"):
            depth += 1
        elif s in ("(", "[", "{"):
            depth -= 1
            if depth == 0:
                break
        elif s == "," and depth == 1:
            commas.append(open_)
    else:
        return None
    if close == open_ + 1:
        return None
    bounds = [open_] + sorted(commas) + [close]
    items = [text[tokens[a].end[1] : tokens[b].start[1]].strip() for a, b in zip(bounds, bounds[1:])]
    items = [i for i in items if i]
    head, tail = text[: tokens[open_].end[1]], text[tokens[close].start[1] :]
    subscript = tokens[open_].string == "[" and open_ > 0 and tokens[open_ - 1].type == tokenize.NAME
    if not commas and subscript:
        return None  # buf[a:b] must stay an index, not become a tuple
    if len(head) > _WIDTH or (not commas and len(items[0]) + 4 >= len(text)):
        return None  # no shorter for it
    return head, items, bool(commas), tail


def _next_space(body: str, start: int, fstring: bool) -> int:
    """Where the next split may happen: the next space outside an f-string's braces (or the end)."""
    braces = 0
    for j in range(start, len(body)):
        if fstring:
            braces += (body[j] == "{") - (body[j] == "}")
        if body[j] == " " and braces == 0:
            return j
    return len(body)


def _string_split(indent: str, text: str, tokens: list[tokenize.TokenInfo]) -> list[str] | None:
    """Split the longest one-line string literal at spaces into adjacent literals in parentheses."""
    strings = [t for t in tokens if t.type == tokenize.STRING]
    if not strings:
        return None
    tok = max(strings, key=lambda t: len(t.string))
    literal = tok.string
    prefix = literal[: len(literal) - len(literal.lstrip("rRbBfFuU"))]
    quote = literal[len(prefix)]
    if literal[len(prefix) :].startswith(quote * 3) or "r" in prefix.lower():
        return None
    body = literal[len(prefix) + 1 : -1]
    inner = indent + "    "
    room = _WIDTH - len(inner) - len(prefix) - 3
    chunks: list[str] = []
    current, braces = "", 0
    for i, ch in enumerate(body):
        current += ch
        if "f" in prefix.lower():
            braces += (ch == "{") - (ch == "}")
        if ch == " " and braces == 0:
            following = _next_space(body, i + 1, "f" in prefix.lower())
            if len(current) + following - i > room:
                chunks.append(current)
                current = ""
    chunks.append(current)
    if len(chunks) < 2:
        return None
    head, tail = text[: tok.start[1]], text[tok.end[1] :]

    def piece(chunk: str) -> str:
        p = prefix if "{" in chunk else prefix.replace("f", "").replace("F", "")
        return f"{p}{quote}{chunk}{quote}"

    if head.endswith("(") and tail.startswith(")"):  # already parenthesized: the only argument
        return [indent + head] + [inner + piece(c) for c in chunks] + [indent + tail]
    return [indent + head + "("] + [inner + piece(c) for c in chunks] + [indent + ")" + tail]


# The repository's [tool.ruff] settings, given explicitly: output may be written outside the repository.
_RUFF_SETTINGS = (
    "--isolated",
    "--line-length",
    str(_WIDTH),
    "--target-version",
    "py310",
    "--config",
    "lint.isort.known-first-party = ['kcodec']",
)
_RUFF_PASSES = (("check", "--select", "I", "--fix", "--exit-zero", "--quiet"), ("format",))  # sort imports, then format


def format_python(sources: dict[str, str]) -> dict[str, str]:
    """Each module of ``sources`` (relative path -> text) with imports sorted and formatted by ruff
    (deterministic for the pinned version). One ruff process per pass over every file, written to a
    scratch directory under their own names: a process per file was most of ``kcodec generate``'s time."""
    from ruff.__main__ import find_ruff_bin  # the generate extra; `kcodec generate` checks it is there

    if not sources:
        return {}
    with tempfile.TemporaryDirectory(prefix="kcodec-tidy-") as scratch:
        root = Path(scratch)
        paths = {name: root / name for name in sources}
        for name, path in paths.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(sources[name], encoding="utf-8")
        for ruff_pass in _RUFF_PASSES:
            proc = subprocess.run(
                [find_ruff_bin(), *ruff_pass, *_RUFF_SETTINGS, *map(str, paths.values())],
                capture_output=True,
                text=True,
                check=False,
                cwd=root,
            )
            if proc.returncode != 0:
                message = " ".join(proc.stderr.replace(scratch + "/", "").split())
                raise RuntimeError(f"ruff could not tidy the generated files: {message}")
        return {name: path.read_text(encoding="utf-8") for name, path in paths.items()}
