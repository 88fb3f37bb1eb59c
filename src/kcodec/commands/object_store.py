"""Inputs of ``kcodec dump`` and ``kcodec verify`` named by URI: an object (``s3://b/p/topic-0/….log``) or a
prefix (``s3://b/p/topic-0/``) on any filesystem :mod:`kcodec.log.fs` opens (S3, GCS, Azure, HDFS;
``file://`` is the local filesystem). Objects are read with ranged reads (:class:`RangedInput`); the small
files dump prints from whole bytes (indexes, checkpoints, snapshots) are copied to a temporary directory
first, up to :data:`MAX_STAGED_SIZE`. Endpoint and credentials come from the environment, as pyarrow reads
it (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID`` ...), or from ``--storage-option KEY=VALUE``."""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from kcodec.commands.common import UsageError, existing_file, require_extra
from kcodec.errors import KcodecError
from kcodec.log.fs import STORAGE_OPTIONS, Storage

# the schemes kcodec.log.fs opens through pyarrow (s3a/s3n are Hadoop's names for S3, gcs for gs)
REMOTE_SCHEMES = ("s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "hdfs", "viewfs")
LOCAL_SCHEMES = ("file", "local")
MAX_STAGED_SIZE = 256 << 20  # an index, checkpoint or snapshot larger than this is no such file
_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


class ObjectStoreError(KcodecError):
    """An object store refused a read: access denied, no credentials, an unreachable endpoint (exit 3)."""


class UriPath(PurePosixPath):
    """An object's URI as a path: its name, suffix and parent's name as a local file's, printed as the URI."""

    def __str__(self) -> str:
        return re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*):/", r"\1://", super().__str__(), count=1)  # s3:/b/k: s3://b/k


def storage_option(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` with KEY one of :data:`STORAGE_OPTIONS` (any case), for argparse."""
    key, sep, value = text.partition("=")
    key = key.strip().lower()
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    if key not in STORAGE_OPTIONS:
        close = difflib.get_close_matches(key, STORAGE_OPTIONS, n=1)
        hint = f" (did you mean {close[0]}?)" if close else f"; known: {', '.join(STORAGE_OPTIONS)}"
        raise argparse.ArgumentTypeError(f"unknown storage option {key!r}{hint}")
    return key, value


def add_storage_option(parser: argparse.ArgumentParser) -> None:
    action = parser.add_argument(
        "--storage-option",
        dest="storage_options",
        action="append",
        type=storage_option,
        default=[],
        metavar="KEY=VALUE",
        help="how to reach an s3://, gs://, abfss:// or hdfs:// input (repeatable): "
        + ", ".join(STORAGE_OPTIONS)
        + "; otherwise the environment as pyarrow reads it (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_REGION ...)",
    )
    action.completions = tuple(f"{key}=" for key in STORAGE_OPTIONS)  # type: ignore[attr-defined]  # completion.py


def storage_of(args: argparse.Namespace) -> Storage:
    return tuple(sorted(dict(getattr(args, "storage_options", None) or []).items()))


def scheme_of(name: str) -> str:
    m = _URI.match(name)
    return m.group(1).lower() if m else ""


@dataclass(frozen=True)
class RemoteObject:
    """One object: its filesystem (:class:`~kcodec.log.fs.ArrowFS`), full URI and size."""

    fs: object
    uri: str
    size: int

    @property
    def path(self) -> UriPath:
        return UriPath(self.uri)

    @contextmanager
    def open(self) -> Iterator[Any]:  # a pyarrow NativeFile (read_at, ranged reads)
        """The object as a random-access file: read with ranged reads (:func:`kcodec.records.source.open_input`)."""
        with _refusals(self.uri):
            f = self.fs.fs.open_input_file(self.fs._p(self.uri))  # type: ignore[attr-defined]
        try:
            yield f
        finally:
            f.close()

    @contextmanager
    def staged(self) -> Iterator[Path]:
        """A local copy under the object's own name, for the small files dump reads whole."""
        if self.size > MAX_STAGED_SIZE:
            raise ObjectStoreError(
                f"{self.uri}: {self.size} bytes, more than the {MAX_STAGED_SIZE} an index, checkpoint or "
                "snapshot can hold"
            )
        directory = tempfile.mkdtemp(prefix="kcodec-object-")
        try:
            local = Path(directory) / self.path.name
            with self.open() as f, open(local, "wb") as out:
                for pos in range(0, self.size, 1 << 20):
                    out.write(f.read_at(min(1 << 20, self.size - pos), pos))
            yield local
        finally:
            shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def _refusals(uri: str) -> Iterator[None]:
    """pyarrow's OSError for a refused request as one line: what was refused and where."""
    try:
        yield
    except FileNotFoundError:
        raise UsageError(f"{uri}: no such object") from None
    except OSError as exc:
        text = str(exc)
        if "NO_SUCH_BUCKET" in text or "NoSuchBucket" in text:
            raise UsageError(f"{uri}: no such bucket") from None
        if any(code in text for code in ("ACCESS_DENIED", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNot")):
            why = "access denied (check the credentials: AWS_ACCESS_KEY_ID / --storage-option s3.accessKey=...)"
        elif "credentials" in text.lower():
            why = "no credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or --storage-option)"
        else:
            why = text.splitlines()[0] if text else type(exc).__name__
        raise ObjectStoreError(f"{uri}: {why}") from None


def is_uri(name: str) -> bool:
    return scheme_of(name) in REMOTE_SCHEMES + LOCAL_SCHEMES


def expand(name: str, storage: Storage, *, logs_only: bool = False) -> list[Path | RemoteObject]:
    """The inputs ``name`` stands for: a local Path as before; for a URI its object, or for a prefix (a
    partition directory, a tiered-storage prefix) every object under it, in order: each segment's files by
    base offset (``logs_only``: the newest ``.log`` per base offset, as a partition reader reads them)."""
    scheme = scheme_of(name)
    if not scheme:
        from kcodec.log.kafka07 import is_kafka07_partition_dir, kafka07_segments

        if is_kafka07_partition_dir(name):  # a Kafka 0.7 partition: its .kafka segments by byte offset
            return [Path(seg.path) for seg in kafka07_segments(name)]
        if os.path.isdir(name):  # a partition directory, as a prefix: its files under the names it gives them
            from kcodec.log.fs import LocalFS

            return _listed(LocalFS(), name, name, logs_only)
        return [existing_file(name)]
    if scheme not in REMOTE_SCHEMES + LOCAL_SCHEMES:
        known = ", ".join(s + "://" for s in REMOTE_SCHEMES + LOCAL_SCHEMES)
        raise UsageError(f"{name}: unknown scheme {scheme}://; kcodec reads {known}")
    if scheme in REMOTE_SCHEMES:
        require_extra("arrow", "pyarrow")
    from kcodec.log.fs import resolve

    with _refusals(name):
        try:
            fs, path = resolve(name, storage)
        except ValueError as exc:  # pyarrow.lib.ArrowInvalid: a URI it cannot parse
            raise UsageError(f"{name}: {exc}") from None
        info = fs.is_file(path), fs.is_dir(path) or name.endswith("/")
        if info[0]:
            return [_input(fs, path, fs.size(path))]
        if not info[1] or not fs.exists(path):
            raise UsageError(f"{name}: no such object or prefix")
        return _listed(fs, path, name, logs_only)


def _listed(fs, path: str, name: str, logs_only: bool) -> list[Path | RemoteObject]:
    """The files of a prefix or directory in offset order (:func:`expand`)."""
    from kcodec.log.files import list_segments

    listing = list_segments(fs, path)
    if not listing.segments:
        where = "in this directory (no <20-digit offset>.log files)" if fs.local else "under this prefix"
        what = "" if fs.local else " (no <20-digit offset>.log objects)"
        raise UsageError(f"{name}: no segments {where}{what}")
    if logs_only:
        return [_input(fs, str(seg.log), seg.size) for seg in listing.segments]
    entries = [e for e in fs.list(path) if not e.is_dir]
    return [_input(fs, e.path, e.size) for e in sorted(entries, key=lambda e: _segment_order(fs.name(e.path)))]


def _segment_order(name: str) -> tuple:
    """Files by base offset, a segment's ``.log`` before its indexes; other files (checkpoints ...) first."""
    from kcodec.log.names import parse_segment_name, parse_tiered_name

    tiered = parse_tiered_name(name)
    if tiered is not None:
        return (1, tiered[0], tiered[2] != "log", name)
    try:
        base, kind = parse_segment_name(name)
    except ValueError:
        return (0, 0, False, name)
    return (1, base, kind != "log", name)


def _input(fs, path: str, size: int) -> Path | RemoteObject:
    return Path(path) if fs.local else RemoteObject(fs, path, size)


def display(item: Path | RemoteObject) -> Path | UriPath:
    return item.path if isinstance(item, RemoteObject) else item


def file_size_of(item: Path | RemoteObject) -> int | None:
    return item.size if isinstance(item, RemoteObject) else os.stat(item).st_size or None
