"""``kcodec dump`` and ``kcodec verify`` of objects and prefixes on a local S3 server (moto, on 127.0.0.1):
the output is the local dump of the same files, the URI in place of the path; the store's refusals are one
line on stderr with the documented exit status."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kcodec.cli import main
from tests.helpers.s3server import ACCESS_KEY, REGION, SECRET_KEY, start_server

TOPIC = "orders-0"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def s3():
    server, s3 = start_server()
    try:
        yield s3
    finally:
        server.stop()


@pytest.fixture(scope="module")
def partition(tmp_path_factory) -> Path:
    """A partition directory kcodec's writer rolled into three segments, each with its indexes."""
    root = tmp_path_factory.mktemp("local")
    lines = root / "in.jsonl"
    lines.write_text(
        "".join(
            json.dumps({"key": f"k{i % 7}", "value": f"order {i} " + "x" * (i % 40), "timestamp": 1000 + i}) + "\n"
            for i in range(300)
        )
    )
    out = root / TOPIC
    assert main(["write", str(out), "-i", str(lines), "--batch-size", "10", "--segment-bytes", "4096"]) == 0
    return out


@pytest.fixture(scope="module")
def bucket(s3, partition) -> str:
    name = s3.bucket("kcodec-cli")
    s3.upload(partition, f"{name}/logs/{TOPIC}")
    return name


def options(s3) -> list[str]:
    out = []
    for key, value in s3.options().items():
        out += ["--storage-option", f"{key}={value}"]
    return out


def test_writer_rolled_segments(partition):
    assert len(list(partition.glob("*.log"))) >= 3 and len(list(partition.glob("*.index"))) >= 3


@pytest.mark.parametrize(
    "flags",
    [[], ["--print-data-log"], ["--deep-iteration"], ["--json"], ["--key-decoder", "hex"]],
    ids=["batches", "data", "deep", "json", "decoder"],
)
@pytest.mark.parametrize("suffix", [".log", ".index", ".timeindex"])
def test_dump_object_equals_local_dump(capsys, s3, bucket, partition, flags, suffix):
    if suffix != ".log" and "--json" in flags:
        pytest.skip("--json prints log files only")
    local = sorted(partition.glob("*" + suffix))[1]
    uri = f"s3://{bucket}/logs/{TOPIC}/{local.name}"
    code, local_out, local_err = run(capsys, "dump", *flags, local)
    assert code == 0 and local_out
    code, remote_out, remote_err = run(capsys, "dump", *flags, *options(s3), uri)
    assert (code, remote_err) == (0, local_err.replace(str(local), uri))
    assert remote_out == local_out.replace(str(local), uri)
    assert f"Dumping {uri}" in remote_out or f'"file": "{uri}"' in remote_out or f'"file":"{uri}"' in remote_out


@pytest.mark.parametrize("flags", [[], ["--json"], ["--print-data-log"]], ids=["text", "json", "data"])
def test_dump_prefix_is_every_file_in_offset_order(capsys, s3, bucket, partition, flags):
    uri = f"s3://{bucket}/logs/{TOPIC}/"
    files = sorted(partition.iterdir(), key=lambda p: (p.name.split(".")[0], not p.name.endswith(".log"), p.name))
    if "--json" in flags:
        files = [f for f in files if f.suffix == ".log"]
    code, local_out, local_err = run(capsys, "dump", *flags, *files)
    assert code == 0
    code, remote_out, err = run(capsys, "dump", *flags, *options(s3), uri.rstrip("/"))
    if "--json" in flags:  # index files are refused in --json, one line each, as locally
        assert code == 3 and err.count("--json prints log files only") == len(list(partition.glob("*index")))
    else:
        assert code == 0
    for f in files:
        local_out = local_out.replace(str(f), uri + f.name)
        local_err = local_err.replace(str(f), uri + f.name)
    assert remote_out == local_out
    if "--json" not in flags:
        assert err == local_err


def test_verify_object_and_prefix(capsys, s3, bucket, partition):
    logs = sorted(partition.glob("*.log"))
    code, out, _ = run(capsys, "verify", *options(s3), f"s3://{bucket}/logs/{TOPIC}/")
    assert code == 0
    assert out.splitlines() == [
        f"s3://{bucket}/logs/{TOPIC}/{log.name}: {line.split(': ', 1)[1]}"
        for log in logs
        for line in run(capsys, "verify", log)[1].splitlines()
    ]
    code, out, _ = run(capsys, "verify", "--json", *options(s3), f"s3a://{bucket}/logs/{TOPIC}/{logs[0].name}")
    assert code == 0 and json.loads(out)["problems"] == []


def test_verify_fails_on_a_corrupted_object(capsys, s3, partition):
    name = s3.bucket("kcodec-corrupt")
    log = sorted(partition.glob("*.log"))[1]
    data = bytearray(log.read_bytes())
    data[200] ^= 0xFF  # inside the first batch's records: its CRC no longer holds
    with s3.fs().open_output_stream(f"{name}/{TOPIC}/{log.name}") as out:
        out.write(bytes(data))
    code, out, _ = run(capsys, "verify", *options(s3), f"s3://{name}/{TOPIC}/{log.name}")
    assert code == 1
    assert out.splitlines()[-1].startswith(f"s3://{name}/{TOPIC}/{log.name}: ") and "problem(s)" in out
    code, _, _ = run(capsys, "verify", *options(s3), f"s3://{name}/{TOPIC}/")
    assert code == 1


@pytest.mark.parametrize("scheme", ["s3", "s3a", "s3n"])  # Hadoop's names for S3 read the same environment
def test_endpoint_and_credentials_from_the_environment(capsys, monkeypatch, s3, partition, scheme):
    name = s3.bucket(f"kcodec-env-{scheme}")
    s3.upload(partition, f"{name}/{TOPIC}")
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_REGION", REGION)
    log = sorted(partition.glob("*.log"))[0]
    code, out, err = run(capsys, "dump", f"{scheme}://{name}/{TOPIC}/{log.name}")
    assert (code, err) == (0, "")
    assert out == run(capsys, "dump", log)[1].replace(str(log), f"{scheme}://{name}/{TOPIC}/{log.name}")


def test_a_damaged_staged_object_is_named_by_its_uri(capsys, s3):
    """An index, checkpoint or snapshot is dumped from a local copy: its errors still name the URI."""
    name = s3.bucket("kcodec-staged")
    uri = f"s3://{name}/{TOPIC}/00000000000000000000.snapshot"
    with s3.fs().open_output_stream(f"{name}/{TOPIC}/00000000000000000000.snapshot") as out:
        out.write(b"\x00\x01garbage")
    code, _, err = run(capsys, "dump", *options(s3), uri)
    assert code != 0 and err.count("\n") == 1
    assert uri in err and "kcodec-object-" not in err, err


@pytest.mark.parametrize("command", ["dump", "verify"])
def test_missing_objects_are_one_line_and_exit_2(capsys, s3, bucket, command):
    cases = {
        f"s3://{bucket}/logs/{TOPIC}/00000000000000099999.log": "no such object",
        f"s3://kcodec-no-such-bucket/logs/{TOPIC}/": "no such",
        f"s3://{bucket}/logs/empty/": "no such object or prefix",
        "foo://bucket/x.log": "unknown scheme foo://",
    }
    for uri, message in cases.items():
        code, out, err = run(capsys, command, *options(s3), uri)
        assert (code, out) == (2, ""), uri
        assert err.count("\n") == 1 and message in err and err.startswith(f"kcodec {command}: "), err


def test_prefix_without_segments(capsys, s3):
    name = s3.bucket("kcodec-nosegments")
    with s3.fs().open_output_stream(f"{name}/{TOPIC}/notes.txt") as out:
        out.write(b"not a segment")
    for command in ("dump", "verify"):
        code, _, err = run(capsys, command, *options(s3), f"s3://{name}/{TOPIC}/")
        assert code == 2 and "no segments under this prefix" in err and err.count("\n") == 1


def test_unknown_storage_option_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["dump", "--storage-option", "s3.endpont=http://127.0.0.1:1", "s3://b/x.log"])
    assert exc.value.code == 2 and "did you mean s3.endpoint" in capsys.readouterr().err


def test_file_uri_is_the_local_filesystem(capsys, partition):
    log = sorted(partition.glob("*.log"))[0]
    code, out, _ = run(capsys, "dump", log.as_uri())
    assert code == 0 and out == run(capsys, "dump", log)[1]
    code, out, _ = run(capsys, "verify", partition.as_uri() + "/")
    assert code == 0 and len(out.splitlines()) == len(list(partition.glob("*.log")))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def strict_s3(tmp_path_factory):
    """A second moto server that checks credentials (INITIAL_NO_AUTH_ACTION_COUNT=0): unknown keys are refused."""
    pytest.importorskip("moto.server")
    port = _free_port()
    env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="0")
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):  # bounded: until it accepts connections
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail("moto's server exited at start-up")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_access_denied_is_one_line_and_exit_3(capsys, strict_s3):
    for command in ("dump", "verify"):
        code, out, err = run(
            capsys,
            command,
            "--storage-option",
            f"s3.endpoint={strict_s3}",
            "--storage-option",
            "s3.accessKey=nobody",
            "--storage-option",
            "s3.secretKey=wrong",
            "--storage-option",
            f"s3.region={REGION}",
            f"s3://kcodec-denied-{command}/{TOPIC}/00000000000000000000.log",
        )
        assert (code, out) == (3, "") and err.count("\n") == 1, err
        assert "access denied" in err


def test_missing_pyarrow_names_the_pip_command(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    code, _, err = run(capsys, "dump", "s3://bucket/orders-0/00000000000000000000.log")
    assert code == 3 and "pip install 'kcodec[arrow]'" in err and err.count("\n") == 1


@pytest.mark.parametrize("shell", ["bash", "fish"])
def test_completion_offers_storage_option_keys(capsys, shell):
    code, out, _ = run(capsys, "completion", shell)
    assert code == 0
    line = next(li for li in out.splitlines() if "storage-option" in li and "s3.endpoint=" in li)
    assert "fs.s3a.access.key=" in line
    assert sum("s3.endpoint=" in li for li in out.splitlines()) >= 2  # dump and verify


def test_metadata_image_of_a_directory_in_an_object_store(capsys, monkeypatch, s3, tmp_path):
    """`kcodec metadata image s3://...`: the image as of the local copy; a missing directory is one line with
    the URI as given (it printed ``s3:/...``)."""
    from tests.helpers.metadata_logs import write_metadata_dir

    local = write_metadata_dir(tmp_path)
    name = s3.bucket("kcodec-metadata")
    s3.upload(local, f"{name}/{local.name}")
    for key, value in (("AWS_ENDPOINT_URL", s3.endpoint), ("AWS_ACCESS_KEY_ID", ACCESS_KEY)):
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_REGION", REGION)
    uri = f"s3://{name}/{local.name}"
    code, out, err = run(capsys, "metadata", "image", uri)
    assert (code, err) == (0, "")
    assert out == run(capsys, "metadata", "image", local)[1].replace(str(local), uri)
    missing = f"s3://{name}/logs/__cluster_metadata-0"
    code, out, err = run(capsys, "metadata", "image", missing)
    assert (code, out, err) == (2, "", f"kcodec metadata: {missing}: no such directory\n")
