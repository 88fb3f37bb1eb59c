"""Where segments live: local paths, ``file://`` URIs, or any filesystem pyarrow opens.

Local files take the fast path (kcodec's reader memory-maps them); anything
else (``s3://``, ``gs://``, ``hdfs://``, ``abfs://`` ...) goes through
:mod:`pyarrow.fs`, and a byte range of a segment is fetched as one read.
Hadoop's ``s3a://`` and ``s3n://`` are S3. Credentials and endpoints come from
the environment as pyarrow reads it (``AWS_ACCESS_KEY_ID``,
``AWS_ENDPOINT_URL`` ...) or from :data:`STORAGE_OPTIONS` (``s3.endpoint``,
``s3.accessKey``, or Hadoop's ``fs.s3a.endpoint`` ...), given to
:func:`resolve` as :func:`storage_options` picked them from a reader's or
writer's options.

Paths stay strings so they pickle into Spark input partitions: a local path
as an absolute path, a remote one as its full URI.
"""

from __future__ import annotations

import builtins
import fnmatch
import functools
import glob as _glob
import os
import shutil
from dataclasses import dataclass
from typing import BinaryIO, Protocol
from urllib.parse import unquote, urlparse

from kcodec.errors import KcodecError

_GLOB_CHARS = "*?["


class PathGoneError(KcodecError, FileNotFoundError):
    """A file or directory named, or listed a moment before, is not there: kcodec's one line, still a
    FileNotFoundError to code that catches that."""

    kind = "not_found"


def has_glob(path: str) -> bool:
    return any(c in path for c in _GLOB_CHARS)


def _scheme(path: str) -> str:
    if "://" not in path:
        return ""
    scheme = path.split("://", 1)[0]
    return scheme.lower() if scheme.isidentifier() or scheme.replace("+", "").isalnum() else ""


@dataclass(frozen=True)
class Entry:
    path: str
    is_dir: bool
    size: int
    mtime: float | None = None  # seconds since the epoch, when the filesystem says
    broken: bool = False  # a symbolic link that leads nowhere (dangling or looping)


# Option name (lower case, as Spark passes options) -> (filesystem family, pyarrow keyword).
STORAGE_OPTIONS: dict[str, tuple[str, str]] = {
    "s3.endpoint": ("s3", "endpoint_override"),
    "s3.accesskey": ("s3", "access_key"),
    "s3.secretkey": ("s3", "secret_key"),
    "s3.sessiontoken": ("s3", "session_token"),
    "s3.region": ("s3", "region"),
    "s3.anonymous": ("s3", "anonymous"),
    "fs.s3a.endpoint": ("s3", "endpoint_override"),  # Hadoop S3A's names, as spark.hadoop.* users know them
    "fs.s3a.access.key": ("s3", "access_key"),
    "fs.s3a.secret.key": ("s3", "secret_key"),
    "fs.s3a.session.token": ("s3", "session_token"),
    "fs.s3a.endpoint.region": ("s3", "region"),
    "gs.endpoint": ("gs", "endpoint_override"),
    "gs.anonymous": ("gs", "anonymous"),
    "gs.projectid": ("gs", "project_id"),
    "hdfs.user": ("hdfs", "user"),
    "hdfs.kerberosticket": ("hdfs", "kerb_ticket"),
}
_FAMILY = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "gcs": "gs", "hdfs": "hdfs", "viewfs": "hdfs"}
_BOOL_KWARGS = ("anonymous",)

Storage = tuple[tuple[str, str], ...]  # hashable and picklable: it travels in Spark's options to executors


def storage_options(options) -> Storage:
    """The filesystem options among a reader's or writer's ``options`` (any case), sorted."""
    picked = {str(k).lower(): str(v) for k, v in dict(options or {}).items() if str(k).lower() in STORAGE_OPTIONS}
    return tuple(sorted(picked.items()))


def _filesystem_kwargs(family: str, storage: Storage) -> dict:
    kwargs: dict = {}
    for name, value in storage:
        fam, kw = STORAGE_OPTIONS[name]
        if fam != family:
            continue
        if kw in _BOOL_KWARGS:
            kwargs[kw] = value.strip().lower() in ("true", "1", "yes", "on")
        elif kw == "endpoint_override" and "://" in value:  # http://127.0.0.1:9000: the scheme apart
            kwargs["scheme"], kwargs[kw] = value.split("://", 1)
            kwargs[kw] = kwargs[kw].rstrip("/")
        else:
            kwargs[kw] = value
    return kwargs


def _s3_endpoint_from_environment() -> dict:
    """The endpoint pyarrow's ``FileSystem.from_uri`` takes from the environment for ``s3://``
    (AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL), for the S3 filesystems built here instead (``s3a://``,
    ``s3n://``, or with storage options), which pyarrow's S3FileSystem constructor leaves unset."""
    url = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    return _filesystem_kwargs("s3", (("s3.endpoint", url),)) if url else {}


class FileSystem(Protocol):
    """What :mod:`kcodec.log` and the Spark source ask of a filesystem; paths are strings as it names them."""

    @property
    def local(self) -> bool: ...  # True: paths are local paths, read through kcodec's memory-mapping reader

    def join(self, *parts: str) -> str: ...
    def name(self, path: str) -> str: ...
    def parent(self, path: str) -> str: ...
    def is_dir(self, path: str) -> bool: ...
    def is_file(self, path: str) -> bool: ...
    def exists(self, path: str) -> bool: ...
    def size(self, path: str) -> int: ...
    def list(self, path: str) -> builtins.list[Entry]: ...
    def glob(self, pattern: str) -> builtins.list[str]: ...
    def read_bytes(self, path: str) -> bytes: ...
    def read_range(self, path: str, start: int, end: int | None) -> bytes: ...
    def open_input(self, path: str) -> BinaryIO: ...
    def open_ranged(self, path: str): ...
    def open_output(self, path: str) -> BinaryIO: ...
    def makedirs(self, path: str) -> None: ...
    def move(self, src: str, dst: str) -> None: ...
    def delete_dir(self, path: str) -> None: ...
    def delete_file(self, path: str) -> None: ...
    def upload_dir(self, local_dir: str, dst: str) -> None: ...
    def exchange(self, a: str, b: str) -> bool: ...
    def identity(self, path: str) -> str | None: ...


_RENAME_EXCHANGE = 2  # linux/fs.h: renameat2() swaps the two names in one step
_AT_FDCWD = -100


@functools.cache
def _renameat2():
    """glibc's ``renameat2`` (Linux 3.15+, glibc 2.28+), or None where there is none."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


class LocalFS:
    """The local filesystem, with plain ``os`` calls."""

    local = True

    def join(self, *parts: str) -> str:
        return os.path.join(*parts)

    def name(self, path: str) -> str:
        return os.path.basename(os.path.normpath(path))

    def parent(self, path: str) -> str:
        return os.path.dirname(os.path.normpath(path))

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(path)

    def is_file(self, path: str) -> bool:
        return os.path.isfile(path)

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def size(self, path: str) -> int:
        return os.path.getsize(path)

    def list(self, path: str) -> list[Entry]:
        """The entries of directory ``path``. A file removed between the listing and its ``stat``
        (a live log: retention, a roll's rename) is not listed; a symbolic link that leads
        nowhere (dangling, or looping) is listed as what it is: a file of no size, :attr:`Entry.broken`."""
        out = []
        try:
            it = os.scandir(path)
        except FileNotFoundError:
            raise PathGoneError(f"{path}: no such directory") from None
        with it:
            for e in it:
                try:
                    is_dir = e.is_dir()
                    st = e.stat()
                except FileNotFoundError:
                    if not _is_link(e):
                        continue  # gone since the listing
                    out.append(Entry(e.path, False, 0, None, broken=True))
                    continue
                except OSError:  # ELOOP: a symbolic link that loops
                    out.append(Entry(e.path, False, 0, None, broken=True))
                    continue
                out.append(Entry(e.path, is_dir, 0 if is_dir else st.st_size, st.st_mtime))
        return sorted(out, key=lambda e: e.path)

    def glob(self, pattern: str) -> builtins.list[str]:
        return sorted(_glob.glob(pattern))

    def read_bytes(self, path: str) -> bytes:
        from kcodec.records.source import read_regular_file  # a FIFO or a device would never end

        return read_regular_file(path)

    def read_range(self, path: str, start: int, end: int | None) -> bytes:
        with open(path, "rb") as f:
            f.seek(start)
            return f.read() if end is None else f.read(max(0, end - start))

    def open_input(self, path: str) -> BinaryIO:
        return open(path, "rb")

    def open_ranged(self, path: str):
        """A file read at positions (``read_at`` / ``size``): here, pyarrow's view of the local file."""
        import pyarrow as pa

        return pa.OSFile(path, "r")

    def open_output(self, path: str) -> BinaryIO:
        return open(path, "wb")

    def makedirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def move(self, src: str, dst: str) -> None:
        os.replace(src, dst)

    def delete_dir(self, path: str) -> None:
        shutil.rmtree(path, ignore_errors=True)

    def delete_file(self, path: str) -> None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass

    def upload_dir(self, local_dir: str, dst: str) -> None:
        """Move a finished local directory into place (one rename)."""
        os.replace(local_dir, dst)

    def exchange(self, a: str, b: str) -> bool:
        """Swap two existing paths in one step (``renameat2(RENAME_EXCHANGE)``): no moment shows
        neither. False, with nothing changed, where the system or filesystem cannot."""
        fn = _renameat2()
        if fn is None:
            return False
        if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
            return True
        import ctypes
        import errno

        err = ctypes.get_errno()
        if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
            return False
        raise OSError(err, os.strerror(err), a, None, b)

    def identity(self, path: str) -> str | None:
        """What survives renames of ``path``: its device and inode; None when it is not there."""
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        return f"{st.st_dev}:{st.st_ino}"


def _is_link(e: os.DirEntry) -> bool:
    try:
        return e.is_symlink()
    except OSError:
        return False


class ArrowFS:
    """A pyarrow filesystem (S3, GCS, HDFS, Azure ...), addressed by full URIs."""

    local = False

    def __init__(self, uri: str, storage: Storage = ()):
        from pyarrow import fs as pafs

        self._pafs = pafs
        parsed = urlparse(uri)
        family = _FAMILY.get(parsed.scheme.lower(), "")
        kwargs = _filesystem_kwargs(family, storage)
        if family == "s3" and "endpoint_override" not in kwargs:
            kwargs.update(_s3_endpoint_from_environment())
        if family == "s3" and (kwargs or parsed.scheme.lower() != "s3"):
            self.fs = pafs.S3FileSystem(**kwargs)  # s3a:// and s3n:// are Hadoop's names for S3
        elif family == "gs" and kwargs:
            self.fs = pafs.GcsFileSystem(**kwargs)
        elif family == "hdfs" and kwargs:
            self.fs = pafs.HadoopFileSystem(parsed.hostname or "default", parsed.port or 0, **kwargs)
        else:
            self.fs, _ = pafs.FileSystem.from_uri(uri)
        self.prefix = f"{parsed.scheme}://"
        # hdfs://namenode:8020/path keeps its authority in the URI but not in the fs path
        self.authority = parsed.netloc if parsed.scheme in ("hdfs", "viewfs") else ""
        # abfss://container@account.dfs.core.windows.net/path is "container/path" to pyarrow's Azure filesystem
        self.account = "@" + parsed.netloc.split("@", 1)[1] if family == "" and "@" in parsed.netloc else ""

    def _p(self, uri: str) -> str:
        if uri.startswith(self.prefix):
            rest = uri[len(self.prefix) :]
            if self.authority and rest.startswith(self.authority):
                rest = rest[len(self.authority) :]
            if self.account:
                rest = rest.replace(self.account, "", 1)
            return rest
        return uri

    def _uri(self, path: str) -> str:
        if self.authority:
            return f"{self.prefix}{self.authority}{path if path.startswith('/') else '/' + path}"
        if self.account:
            container, _, rest = path.partition("/")
            return f"{self.prefix}{container}{self.account}/{rest}"
        return f"{self.prefix}{path}"

    def join(self, *parts: str) -> str:
        return "/".join([parts[0].rstrip("/")] + [p.strip("/") for p in parts[1:]])

    def name(self, path: str) -> str:
        return path.rstrip("/").rsplit("/", 1)[-1]

    def parent(self, path: str) -> str:
        return path.rstrip("/").rsplit("/", 1)[0]

    def _info(self, path: str):
        return self.fs.get_file_info(self._p(path))

    def is_dir(self, path: str) -> bool:
        return self._info(path).type == self._pafs.FileType.Directory

    def is_file(self, path: str) -> bool:
        return self._info(path).type == self._pafs.FileType.File

    def exists(self, path: str) -> bool:
        return self._info(path).type != self._pafs.FileType.NotFound

    def size(self, path: str) -> int:
        return self._info(path).size

    def list(self, path: str) -> list[Entry]:
        infos = self.fs.get_file_info(self._pafs.FileSelector(self._p(path), recursive=False))
        out = [
            Entry(
                self._uri(i.path),
                i.type == self._pafs.FileType.Directory,
                i.size or 0,
                i.mtime.timestamp() if i.mtime is not None else None,
            )
            for i in infos
        ]
        return sorted(out, key=lambda e: e.path)

    def glob(self, pattern: str) -> builtins.list[str]:
        """Expand ``*``, ``?`` and ``[...]`` one path component at a time."""
        body = self._p(pattern)
        lead = "/" if body.startswith("/") else ""
        parts = [p for p in body.split("/") if p]
        found = [lead]
        for part in parts:
            nxt = []
            for base in found:
                if not has_glob(part):
                    cand = (base.rstrip("/") + "/" + part) if base not in ("", "/") else base + part
                    if self.fs.get_file_info(cand).type != self._pafs.FileType.NotFound:
                        nxt.append(cand)
                    continue
                try:
                    infos = self.fs.get_file_info(self._pafs.FileSelector(base or "/", recursive=False))
                except (FileNotFoundError, OSError):
                    continue
                nxt += [x.path for x in infos if fnmatch.fnmatchcase(x.path.rstrip("/").rsplit("/", 1)[-1], part)]
            found = nxt
        return sorted(self._uri(p) for p in found)

    def read_bytes(self, path: str) -> bytes:
        with self.fs.open_input_file(self._p(path)) as f:
            return f.read()

    def read_range(self, path: str, start: int, end: int | None) -> bytes:
        with self.fs.open_input_file(self._p(path)) as f:
            size = f.size()
            stop = size if end is None else min(end, size)
            return f.read_at(max(0, stop - start), start) if stop > start else b""

    def open_input(self, path: str) -> BinaryIO:
        return self.fs.open_input_stream(self._p(path))

    def open_ranged(self, path: str):
        """The object as a random-access file: each read is a ranged read of it, never the whole."""
        return self.fs.open_input_file(self._p(path))

    def open_output(self, path: str) -> BinaryIO:
        return self.fs.open_output_stream(self._p(path))

    def makedirs(self, path: str) -> None:
        self.fs.create_dir(self._p(path), recursive=True)

    def move(self, src: str, dst: str) -> None:
        import pyarrow.fs as pafs

        source, target = self._p(src), self._p(dst)
        try:
            self.fs.move(source, target)  # a rename where the filesystem has one (local, HDFS, GCS objects)
            return
        except OSError:
            if self.fs.get_file_info(source).type != pafs.FileType.Directory:
                raise
        # an object store has no directory rename (S3 copies keys, and a prefix is no key): the objects
        # move one by one; what readers see is decided by the commit record (kcodec.log.commit), not here
        self.fs.create_dir(target, recursive=True)
        for entry in self.fs.get_file_info(pafs.FileSelector(source, recursive=True)):
            rel = entry.path[len(source.rstrip("/")) + 1 :]
            if entry.type == pafs.FileType.Directory:
                self.fs.create_dir(f"{target.rstrip('/')}/{rel}", recursive=True)
            else:
                self.fs.move(entry.path, f"{target.rstrip('/')}/{rel}")
        self.fs.delete_dir(source)

    def delete_dir(self, path: str) -> None:
        try:
            self.fs.delete_dir(self._p(path))
        except (FileNotFoundError, OSError):
            pass

    def delete_file(self, path: str) -> None:
        try:
            self.fs.delete_file(self._p(path))
        except (FileNotFoundError, OSError):
            pass

    def upload_dir(self, local_dir: str, dst: str) -> None:
        """Copy a finished local partition directory up: per segment the index
        files first and the ``.log`` last, so a visible ``.log`` is a whole segment."""
        self.makedirs(dst)
        names = sorted(os.listdir(local_dir), key=lambda n: (n.split(".", 1)[0], n.endswith(".log"), n))
        for n in names:
            with open(os.path.join(local_dir, n), "rb") as src, self.open_output(self.join(dst, n)) as out:
                shutil.copyfileobj(src, out, 1 << 22)
        shutil.rmtree(local_dir, ignore_errors=True)

    def exchange(self, a: str, b: str) -> bool:
        return False  # object stores move objects one by one: no two-name swap

    def identity(self, path: str) -> str | None:
        return None


@functools.lru_cache(maxsize=16)
def _arrow_fs(key: str, storage: Storage) -> ArrowFS:
    return ArrowFS(key, storage)


def resolve(path: str, storage: Storage = ()) -> tuple[FileSystem, str]:
    """The filesystem of ``path`` and the path as that filesystem names it:
    an absolute local path, or the full URI of a remote object; ``storage``
    (from :func:`storage_options`) configures a remote filesystem."""
    path = os.fspath(path)
    scheme = _scheme(path)
    if scheme in ("", "file", "local"):
        if scheme:
            parsed = urlparse(path)
            path = unquote(parsed.path)
            if parsed.netloc and parsed.netloc != "localhost":
                path = f"//{parsed.netloc}{path}"
        return LocalFS(), os.path.abspath(os.path.expanduser(path))
    parsed = urlparse(path)
    return _arrow_fs(f"{parsed.scheme}://{parsed.netloc}/", tuple(storage)), path


def filesystem_of(path: str, storage: Storage = ()) -> FileSystem:
    return resolve(path, storage)[0]
