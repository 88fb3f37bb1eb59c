"""kcodec's code generator: schemas/*.yaml -> IR -> generated/.

Data flows one way: :mod:`.schema` loads and validates the YAML into the
backend-neutral IR and resolves each entity version (offsets, sizes, every fact
more than one backend reads); the emitters of :mod:`.emit` (construct, fast
Python, C) turn resolved entities into the text the templates print;
:mod:`.render` renders the templates (the only Jinja2 user), tidies the output
and writes the files.

Importing this package loads neither Jinja2 nor PyYAML: :func:`generate`
imports the renderer when it is called.
"""

from __future__ import annotations

from .schema import load_schemas


def generate(schemas_dir, out_dir, *, check: bool = False):
    """Regenerate ``out_dir`` from ``schemas_dir`` (see :func:`kcodec.codegen.render.generate`)."""
    from .render import generate as run  # Jinja2 (the `generate` extra) loads only to render

    return run(schemas_dir, out_dir, check=check)


def write_package(schemas, out_dir, *, check: bool = False):
    """Render ``schemas`` (from either front-end) into ``out_dir`` (see :func:`kcodec.codegen.render.write_package`)."""
    from .render import write_package as run

    return run(schemas, out_dir, check=check)


__all__ = ["load_schemas", "generate", "write_package"]
