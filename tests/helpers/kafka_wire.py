"""A minimal, hand-framed Kafka wire client for the interop tests.

Only what the tests need, in non-flexible (pre-KIP-482) request versions whose
layout is small and fixed: Metadata v4, Produce v0-v3 and
Fetch v0-v4. The ``records`` field of Produce / Fetch is carried as raw bytes,
never decoded here: decoding them is what the tests exercise. Every socket
operation has a timeout and every loop is bounded in count and time.
"""

from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass, field

API_PRODUCE, API_FETCH, API_METADATA = 0, 1, 3
MAX_FRAME = 64 * 1024 * 1024  # refuse absurd response sizes instead of allocating them

ERROR_NAMES = {
    -1: "UNKNOWN_SERVER_ERROR",
    0: "NONE",
    1: "OFFSET_OUT_OF_RANGE",
    2: "CORRUPT_MESSAGE",
    3: "UNKNOWN_TOPIC_OR_PARTITION",
    5: "LEADER_NOT_AVAILABLE",
    6: "NOT_LEADER_OR_FOLLOWER",
    7: "REQUEST_TIMED_OUT",
    10: "MESSAGE_TOO_LARGE",
    35: "UNSUPPORTED_VERSION",
    42: "INVALID_REQUEST",
    43: "UNSUPPORTED_FOR_MESSAGE_FORMAT",
    76: "UNSUPPORTED_COMPRESSION_TYPE",
    87: "INVALID_RECORD",
}


def error_name(code: int) -> str:
    return f"{ERROR_NAMES.get(code, 'ERROR')}({code})"


class WireError(AssertionError):
    """A malformed or unexpected response (an AssertionError so pytest shows it plainly)."""


# --- primitive encoders -------------------------------------------------------


def _string(s: str | None) -> bytes:
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode("utf-8")
    return struct.pack(">h", len(b)) + b


def _bytes(b: bytes | None) -> bytes:
    if b is None:
        return struct.pack(">i", -1)
    return struct.pack(">i", len(b)) + bytes(b)


def _array(items: list[bytes]) -> bytes:
    return struct.pack(">i", len(items)) + b"".join(items)


class _Reader:
    """Bounds-checked reader over one response body."""

    def __init__(self, data: bytes, what: str):
        self.data, self.pos, self.what = data, 0, what

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise WireError(f"{self.what}: response truncated at byte {self.pos} (wanted {n} more of {len(self.data)})")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def i8(self) -> int:
        return struct.unpack(">b", self._take(1))[0]

    def i16(self) -> int:
        return struct.unpack(">h", self._take(2))[0]

    def i32(self) -> int:
        return struct.unpack(">i", self._take(4))[0]

    def i64(self) -> int:
        return struct.unpack(">q", self._take(8))[0]

    def string(self) -> str | None:
        n = self.i16()
        return None if n < 0 else self._take(n).decode("utf-8")

    def bytes_(self) -> bytes | None:
        n = self.i32()
        return None if n < 0 else self._take(n)

    def array(self, item) -> list:
        n = self.i32()
        if n < 0:
            return []
        if n > len(self.data):  # each item takes at least a byte
            raise WireError(f"{self.what}: array count {n} exceeds the response size")
        return [item() for _ in range(n)]

    def done(self) -> None:
        if self.pos != len(self.data):
            raise WireError(f"{self.what}: {len(self.data) - self.pos} unexpected trailing bytes")


# --- results ------------------------------------------------------------------


@dataclass
class ProduceResult:
    error_code: int
    base_offset: int
    log_append_time: int = -1


@dataclass
class FetchPartition:
    error_code: int
    high_watermark: int
    last_stable_offset: int = -1
    aborted_transactions: list[tuple[int, int]] = field(default_factory=list)
    records: bytes | None = None


@dataclass
class TopicMetadata:
    error_code: int
    name: str
    partitions: dict[int, int]  # partition -> error code


# --- the client -----------------------------------------------------------------


class KafkaWire:
    """One blocking connection to one broker. Use as a context manager."""

    def __init__(self, host: str, port: int, *, timeout: float = 5.0, client_id: str = "kcodec-interop"):
        self.address = (host, port)
        self.timeout = timeout
        self.client_id = client_id
        self._correlation = 0
        self.sock = socket.create_connection(self.address, timeout=timeout)
        self.sock.settimeout(timeout)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self) -> KafkaWire:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # framing -------------------------------------------------------------------

    def _recv_exactly(self, n: int, what: str) -> bytes:
        buf = bytearray()
        deadline = time.monotonic() + self.timeout
        while len(buf) < n:
            if time.monotonic() > deadline:
                raise WireError(f"{what}: timed out after {self.timeout}s with {len(buf)}/{n} bytes")
            try:
                chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            except TimeoutError:
                raise WireError(f"{what}: socket timed out after {self.timeout}s with {len(buf)}/{n} bytes") from None
            if not chunk:
                raise WireError(
                    f"{what}: broker {self.address} closed the connection "
                    f"after {len(buf)}/{n} bytes (request version not supported?)"
                )
            buf += chunk
        return bytes(buf)

    def request(self, api_key: int, api_version: int, body: bytes) -> bytes:
        """Send one request (header v1) and return the response body after the
        correlation id (response header v0: all versions used here are non-flexible)."""
        self._correlation += 1
        corr = self._correlation
        header = struct.pack(">hhi", api_key, api_version, corr) + _string(self.client_id)
        frame = header + body
        what = f"api {api_key} v{api_version}"
        self.sock.sendall(struct.pack(">i", len(frame)) + frame)
        size = struct.unpack(">i", self._recv_exactly(4, what))[0]
        if not 4 <= size <= MAX_FRAME:
            raise WireError(f"{what}: bad response size {size}")
        payload = self._recv_exactly(size, what)
        got = struct.unpack_from(">i", payload, 0)[0]
        if got != corr:
            raise WireError(f"{what}: correlation id {got} != {corr}")
        return payload[4:]

    # APIs ----------------------------------------------------------------------

    def metadata(self, topics: list[str], *, auto_create: bool = True) -> dict[str, TopicMetadata]:
        body = _array([_string(t) for t in topics]) + struct.pack(">?", auto_create)
        r = _Reader(self.request(API_METADATA, 4, body), "Metadata v4")
        r.i32()  # throttle_time_ms
        r.array(lambda: (r.i32(), r.string(), r.i32(), r.string()))  # brokers
        r.string()  # cluster_id
        r.i32()  # controller_id

        def partition():
            err, index = r.i16(), r.i32()
            r.i32()  # leader
            r.array(r.i32)  # replicas
            r.array(r.i32)  # isr
            return index, err

        def topic():
            err, name = r.i16(), r.string()
            r.i8()  # is_internal
            return TopicMetadata(err, name, dict(r.array(partition)))

        out = {t.name: t for t in r.array(topic)}
        r.done()
        return out

    def ensure_topic(self, topic: str, *, attempts: int = 50, delay: float = 0.1) -> TopicMetadata:
        """Auto-create ``topic`` through Metadata and wait (bounded) until partition 0 is ready."""
        last = None
        for _ in range(attempts):
            last = self.metadata([topic]).get(topic)
            if last is not None and last.error_code == 0 and last.partitions.get(0) == 0:
                return last
            time.sleep(delay)
        raise WireError(f"topic {topic!r} not ready after {attempts} Metadata requests: {last}")

    def produce(
        self,
        topic: str,
        partition: int,
        records: bytes,
        *,
        version: int = 3,
        acks: int = -1,
        timeout_ms: int = 5000,
        transactional_id: str | None = None,
    ) -> ProduceResult:
        if not 0 <= version <= 3:
            raise ValueError("Produce v0-v3 only")
        body = b""
        if version >= 3:
            body += _string(transactional_id)
        body += struct.pack(">hi", acks, timeout_ms)
        body += _array([_string(topic) + _array([struct.pack(">i", partition) + _bytes(records)])])
        r = _Reader(self.request(API_PRODUCE, version, body), f"Produce v{version}")

        def part():
            index, err, base = r.i32(), r.i16(), r.i64()
            append_time = r.i64() if version >= 2 else -1
            return index, ProduceResult(err, base, append_time)

        topics = r.array(lambda: (r.string(), r.array(part)))
        if version >= 1:
            r.i32()  # throttle_time_ms
        r.done()
        for name, parts in topics:
            for index, result in parts:
                if name == topic and index == partition:
                    return result
        raise WireError(f"Produce v{version}: no result for {topic}-{partition} in {topics}")

    def fetch(
        self,
        topic: str,
        partition: int,
        offset: int,
        *,
        version: int = 4,
        max_wait_ms: int = 100,
        max_bytes: int = 16 * 1024 * 1024,
        isolation_level: int = 0,
    ) -> FetchPartition:
        if not 0 <= version <= 4:
            raise ValueError("Fetch v0-v4 only")
        body = struct.pack(">iii", -1, max_wait_ms, 1)  # replica_id, max_wait_ms, min_bytes
        if version >= 3:
            body += struct.pack(">i", max_bytes)
        if version >= 4:
            body += struct.pack(">b", isolation_level)
        body += _array([_string(topic) + _array([struct.pack(">iqi", partition, offset, max_bytes)])])
        r = _Reader(self.request(API_FETCH, version, body), f"Fetch v{version}")
        if version >= 1:
            r.i32()  # throttle_time_ms

        def part():
            index, err, hw = r.i32(), r.i16(), r.i64()
            p = FetchPartition(err, hw)
            if version >= 4:
                p.last_stable_offset = r.i64()
                p.aborted_transactions = r.array(lambda: (r.i64(), r.i64()))
            p.records = r.bytes_()
            return index, p

        topics = r.array(lambda: (r.string(), r.array(part)))
        r.done()
        for name, parts in topics:
            for index, p in parts:
                if name == topic and index == partition:
                    return p
        raise WireError(f"Fetch v{version}: no data for {topic}-{partition}")
