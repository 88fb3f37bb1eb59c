"""kcodec's code generator: schemas/*.yaml -> IR -> generated/*.py.

Data flows one way: :mod:`.loader` reads and validates the YAML into the
backend-neutral IR of :mod:`.ir`; :mod:`.layout` resolves one entity at one
version (offsets, sizes, what is derived); :mod:`.emit` turns that into the
text the templates print; :mod:`.render` writes the files.
"""
from .loader import load_schemas
from .render import generate, GenerateResult

__all__ = ["load_schemas", "generate", "GenerateResult"]
