"""The generated packages import an entity's module when one of its entries is first read: importing
``kcodec.generated`` (or its fast decoders) costs no entity module, and every table still holds every
entity version."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kcodec.runtime.entity_table import EntityTable, submodules


def _loaded_after(code: str) -> list[str]:
    """The kcodec.generated modules a fresh interpreter holds after running ``code``."""
    probe = code + "\nimport sys, json; print(json.dumps([m for m in sys.modules if m.startswith('kcodec.generated')]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def test_importing_the_packages_imports_no_entity_module() -> None:
    loaded = _loaded_after("import kcodec.generated, kcodec.generated.fast")
    assert "kcodec.generated.record_batch" not in loaded and "kcodec.generated.fast.record" not in loaded
    # reading one entry imports that entity's module and no other
    loaded = _loaded_after("from kcodec.generated import codec; codec('record_batch', 2)")
    assert "kcodec.generated.record_batch" in loaded and "kcodec.generated.transaction_log_value" not in loaded


def test_tables_hold_every_entity_version_of_the_index() -> None:
    import kcodec.generated as g
    import kcodec.generated.fast as fast

    assert set(g.CODECS) == {(e, v) for e, vs in g.ENTITY_VERSIONS.items() for v in vs}
    assert set(fast.DECODERS) == set(g.CODECS)
    decode, fields = fast.DECODERS[("record", 2)]
    assert callable(decode) and "offset_delta" in fields
    assert g.record_batch.RECORD_BATCH_V2_CODEC is g.CODECS[("record_batch", 2)]  # attribute access imports it


def test_an_unknown_key_or_attribute_is_refused() -> None:
    table = EntityTable("kcodec.generated", lambda module, version: (module.__name__, version), [("record", 2)])
    assert table[("record", 2)] == ("kcodec.generated.record", 2) and len(table) == 1
    with pytest.raises(KeyError):
        table[("record", 3)]
    assert ("record", 3) not in table and "record" not in table
    table[("record", 3)] = "set"
    assert table[("record", 3)] == "set" and len(table) == 2
    del table[("record", 2)]
    assert list(table) == [("record", 3)]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        submodules("kcodec.generated", ["record"])("nope")
