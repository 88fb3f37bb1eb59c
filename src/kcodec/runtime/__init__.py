"""kcodec's runtime: what a schema alone cannot say (varints, CRCs, codecs,
offsets, segments), and the primitives generated code is built from.

The runtime never imports the generator, Jinja2 or YAML.
"""

RUNTIME_API = 2  # 2: the fast decoders relocate errors with KcodecError.at, .inside and .in_stream


def require_runtime_api(version: int) -> None:
    """Called by every generated module: generated code and runtime must match."""
    if version != RUNTIME_API:
        raise ImportError(
            f"generated code needs kcodec runtime API {version}, this runtime has {RUNTIME_API}; run `kcodec generate`"
        )
