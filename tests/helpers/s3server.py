"""A local S3 server for the tests: moto's, on 127.0.0.1 only (its default is
every interface), on a port the OS picks; and helpers that lay out partition
directories there, as Kafka and its tiered storage do."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

ACCESS_KEY, SECRET_KEY, REGION = "kcodec-test", "kcodec-test-secret", "us-east-1"


@dataclass(frozen=True)
class S3Server:
    endpoint: str  # http://127.0.0.1:PORT

    def options(self) -> dict[str, str]:
        """The reader's and writer's options that reach this server."""
        return {
            "s3.endpoint": self.endpoint,
            "s3.accessKey": ACCESS_KEY,
            "s3.secretKey": SECRET_KEY,
            "s3.region": REGION,
        }

    def fs(self):
        """A pyarrow filesystem on this server that may create buckets."""
        from pyarrow import fs as pafs

        host = self.endpoint.split("://", 1)[1]
        return pafs.S3FileSystem(
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            region=REGION,
            scheme="http",
            endpoint_override=host,
            allow_bucket_creation=True,
        )

    def bucket(self, name: str) -> str:
        self.fs().create_dir(name)
        return name

    def upload(self, local: Path, key: str, name_of=lambda n: n) -> None:
        """Copy the files of the local directory ``local`` to ``key/`` (``name_of`` renames them)."""
        fs = self.fs()
        for f in sorted(local.iterdir()):
            if f.is_file():
                with fs.open_output_stream(f"{key}/{name_of(f.name)}") as out:
                    out.write(f.read_bytes())


def start_server():
    pytest.importorskip("moto.server")
    pytest.importorskip("pyarrow")
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # not a line per request

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    assert host == "127.0.0.1"
    return server, S3Server(f"http://127.0.0.1:{port}")


def tiered_name(name: str, segment_id: str) -> str:
    """``00000000000000000301.log`` -> ``00000000000000000301-<segment id>.log``, as tiered storage names it."""
    stem, suffix = name.split(".", 1)
    return f"{stem}-{segment_id}.{suffix}"


def kafka_uuid() -> str:
    """A Kafka Uuid string: 16 random bytes, URL-safe base64 without padding (22 characters)."""
    import base64

    return base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
