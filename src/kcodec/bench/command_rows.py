"""Rows for whole kcodec commands on the benchmark workload: ``write`` (JSON lines to a segment),
``convert`` (the uncompressed log re-encoded with the codec), ``verify``, ``dump --json`` and ``compact``
(a dry run of the log cleaner on the log as a partition directory), each run
through ``kcodec.cli.main`` as a user runs it (stdout to /dev/null, files in a scratch directory, fsync
included). aiokafka and kafka-python get the equivalent work where they have one: ``write`` parses the
same JSON lines and builds the batches, ``convert`` reads the log and builds it again with the codec;
``verify`` is compared with their decode with CRC checks; ``dump --json`` and ``compact`` have no
equivalent (compare ``compact`` with ``verify`` on the same log)."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from kcodec.bench.clients import CODEC_IDS, Unavailable, client_codec_check, client_modules
from kcodec.bench.workload import ENCODE_LEVELS, Workload

_SCRATCH: list[tempfile.TemporaryDirectory] = []  # lives as long as the process: the rows' input files


def scratch() -> Path:
    """The directory the rows' input and output files live in, as long as the process."""
    if not _SCRATCH:
        _SCRATCH.append(tempfile.TemporaryDirectory(prefix="kcodec-bench-"))
    return Path(_SCRATCH[0].name)


def _file(name: str, data: bytes) -> Path:
    path = scratch() / name
    if not path.exists() or path.stat().st_size != len(data):
        path.write_bytes(data)
    return path


def json_lines(w: Workload) -> bytes:
    """The workload's records as the JSON lines ``kcodec write --encoding hex`` reads."""
    return "".join(
        json.dumps(
            {"key": k.hex(), "value": v.hex(), "headers": [["h", h.hex()]], "timestamp": t}, separators=(",", ":")
        )
        + "\n"
        for k, v, h, t in zip(w.keys, w.values, w.header_values, w.timestamps)
    ).encode()


def _level(codec: str) -> list[str]:
    level = ENCODE_LEVELS[codec]
    return [] if level is None else ["--level", str(level)]


def _cli(w: Workload, argv: list, records: int):
    """A run of the command line the workload was handed (``kcodec bench`` hands in ``kcodec.cli.main``)."""
    if w.command is None:
        raise Unavailable("no command line to time: the workload was built without one")
    main = w.command
    argv = [str(a) for a in argv]

    def run() -> int:
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            code = main(argv)
        if code != 0:
            raise AssertionError(f"kcodec {' '.join(argv)} exited {code}")
        return records

    return run


def _kcodec_write(w: Workload, magic: int, codec: str):
    src = _file(f"write-{w.records}.jsonl", json_lines(w))
    out = scratch() / f"write-{codec}.log"
    argv = ["write", out, "-i", src, "--encoding", "hex", "--compression", codec, "--batch-size", w.batch_size]
    return _cli(w, argv + _level(codec), w.records)


def _kcodec_convert(w: Workload, magic: int, codec: str):
    src = _file(f"log-{w.records}-none.log", w.blob(2, "none"))
    out = scratch() / f"convert-{codec}.log"
    return _cli(w, ["convert", src, out, "--magic", "2", "--compression", codec] + _level(codec), w.records)


def _kcodec_verify(w: Workload, magic: int, codec: str):
    return _cli(w, ["verify", _file(f"log-{w.records}-{codec}.log", w.blob(2, codec))], w.records)


def _kcodec_dump_json(w: Workload, magic: int, codec: str):
    return _cli(w, ["dump", "--json", _file(f"log-{w.records}-{codec}.log", w.blob(2, codec))], w.records)


def _kcodec_compact(w: Workload, magic: int, codec: str):
    """The v2 log as a partition directory of four segments (the last one active), then one dry-run round of
    the log cleaner over the other three: the offset map and every record filtered, as a broker would."""
    directory = scratch() / f"compact-{w.records}-{codec}" / "bench-0"
    if not directory.is_dir():
        from kcodec.log.writer import SegmentWriter

        blob = w.blob(2, codec)
        with SegmentWriter(directory, base_offset=0, segment_bytes=len(blob) // 4 + 1) as writer:
            writer.append(blob)
    now = max(w.timestamps) + 1
    return _cli(w, ["compact", directory, "--now", now], w.records)


def _write_durably(path: Path, chunks: list[bytes]) -> None:
    with open(path, "wb") as f:
        for c in chunks:
            f.write(c)
        f.flush()
        os.fsync(f.fileno())


def _client_write(impl: str):
    def factory(w: Workload, magic: int, codec: str):
        _, builder_class = client_modules(impl)
        client_codec_check(impl, codec)
        src = _file(f"write-{w.records}.jsonl", json_lines(w))
        out = scratch() / f"write-{impl}-{codec}.log"
        codec_id, size = CODEC_IDS[codec], w.batch_size

        def run() -> int:
            chunks, n, builder = [], 0, None
            with open(src, "rb") as f:
                for line in f:
                    if builder is None:
                        builder, delta = builder_class(2, codec_id, 0, -1, -1, -1, 1 << 30), 0
                    r = json.loads(line)
                    headers = [(k, bytes.fromhex(v)) for k, v in r["headers"]]
                    builder.append(delta, r["timestamp"], bytes.fromhex(r["key"]), bytes.fromhex(r["value"]), headers)
                    delta += 1
                    n += 1
                    if delta == size:
                        chunks.append(bytes(builder.build()))
                        builder = None
            if builder is not None:
                chunks.append(bytes(builder.build()))
            _write_durably(out, chunks)
            return n

        return run

    return factory


def _client_convert(impl: str):
    def factory(w: Workload, magic: int, codec: str):
        memory_records, builder_class = client_modules(impl)
        client_codec_check(impl, codec)
        src = _file(f"log-{w.records}-none.log", w.blob(2, "none"))
        out = scratch() / f"convert-{impl}-{codec}.log"
        codec_id = CODEC_IDS[codec]

        def run() -> int:
            chunks, n = [], 0
            records = memory_records(src.read_bytes())
            while (batch := records.next_batch()) is not None:
                if not batch.validate_crc():  # as kcodec convert checks its input
                    raise AssertionError("CRC mismatch")
                builder = builder_class(2, codec_id, 0, -1, -1, -1, 1 << 30)
                for i, r in enumerate(batch):
                    builder.append(i, r.timestamp, r.key, r.value, r.headers)
                    n += 1
                chunks.append(bytes(builder.build()))
            _write_durably(out, chunks)
            return n

        return run

    return factory


ADAPTERS = {
    ("kcodec", "write"): _kcodec_write,
    ("kcodec", "convert"): _kcodec_convert,
    ("kcodec", "verify"): _kcodec_verify,
    ("kcodec", "dump_json"): _kcodec_dump_json,
    ("kcodec", "compact"): _kcodec_compact,
}
for _impl in ("aiokafka", "kafka-python"):
    ADAPTERS[(_impl, "write")] = _client_write(_impl)
    ADAPTERS[(_impl, "convert")] = _client_convert(_impl)
