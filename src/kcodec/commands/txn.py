"""``kcodec txn PATH``: transaction forensics of a partition directory or a log directory (see
:mod:`kcodec.tools.txn`): open, empty, committed and aborted transactions, the last stable offset, producer
anomalies, and the hanging transactions an operator would abort.

Exit status: 0 no hanging transaction; 1 hanging transactions found; 2 bad usage (PATH missing or not a
directory); 3 damaged batches or snapshot files kcodec refused."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kcodec.commands.common import EXIT_CHECK_FAILED, EXIT_OK, UsageError, add_json, json_line, require_extra

TRANSACTION_STATE = "__transaction_state"


def _coordinator_dir(args: argparse.Namespace, log_dir: str) -> str | None:
    """Where __transaction_state is read from: --transaction-state, else the log directory when it holds it."""
    if args.transaction_state is not None:
        path = Path(args.transaction_state)
        if not path.is_dir():
            raise UsageError(
                f"--transaction-state {path}: {'not a directory' if path.exists() else 'no such directory'}"
            )
        return str(path)
    found = any(p.is_dir() and p.name.startswith(f"{TRANSACTION_STATE}-") for p in Path(log_dir).iterdir())
    return log_dir if found else None


def cmd_txn(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.is_dir():  # as a missing input FILE is for every command: bad usage
        raise UsageError(f"{path}: {'not a directory' if path.exists() else 'no such directory'}")
    from kcodec.tools.txn import read_coordinator, txn_partitions, walk_partition

    parts, log_dir = txn_partitions(path)
    source = _coordinator_dir(args, log_dir)
    coordinator = None
    if source is not None:
        require_extra("arrow", "pyarrow")  # the transactions view is an Arrow table
        coordinator = read_coordinator(source)
    hanging = 0
    for part in parts:
        name = f"{part.topic}-{part.partition}" if part.topic is not None else str(part.path)

        def listed(txn, name=name) -> None:
            if args.json:
                print(json_line({"kind": "transaction", "topicPartition": name, **txn.as_dict()}))
            else:
                print(_txn_line(name, txn))

        found = walk_partition(part, coordinator=coordinator, on_transaction=listed if args.transactions else None)
        hanging += len(found.hanging)
        if args.json:
            print(json_line({"kind": "partition", **found.as_dict()}))
        else:
            print("\n".join(_partition_lines(name, found, source)))
    if not parts:
        print(f"{path}: no partition directories", file=sys.stderr)
    return EXIT_CHECK_FAILED if hanging else EXIT_OK


def _txn_line(name: str, t) -> str:
    what = ("commit" if t.committed else "abort") + (" (empty)" if t.first_offset is None else "")
    span = "" if t.first_offset is None else f" offsets {t.first_offset}..{t.last_offset} ({t.records} records)"
    took = "" if t.duration_ms is None else f" in {t.duration_ms} ms"
    return (
        f"{name} producer {t.producer_id} epoch {t.producer_epoch}: {what}{span}, marker at {t.marker_offset}"
        f" (coordinator epoch {t.coordinator_epoch}){took}"
    )


def _partition_lines(name: str, found, source: str | None) -> list[str]:
    lines = [
        f"{name}: log {found.log_start_offset}..{found.log_end_offset}, last stable offset "
        f"{found.last_stable_offset}, {found.held_back_records} records held back from read_committed consumers"
    ]
    for p in sorted(found.producers.values(), key=lambda p: p.producer_id):
        longest = "" if p.longest_ms is None else f", longest {p.longest_ms} ms"
        lines.append(
            f"  producer {p.producer_id} epoch {p.producer_epoch}: {p.committed} committed, {p.aborted} aborted, "
            f"{p.empty} empty{longest}"
        )
    for t in found.open:
        if t.hanging is None:
            verdict = "open (no __transaction_state to check it against)"
        elif t.hanging:
            verdict = f"HANGING: {t.reason}"
        else:
            verdict = f"open, in flight: {t.reason}"
        lines.append(
            f"  open transaction: producer {t.producer_id} epoch {t.producer_epoch} offsets "
            f"{t.first_offset}..{t.last_offset} ({t.records} records, {t.last_timestamp - t.first_timestamp} ms "
            f"of data): {verdict}"
        )
        if t.hanging:
            # the explicit form needs the coordinator epoch; without it Kafka's tool looks the producer up
            # by the transaction's first offset
            how = (
                f"--start-offset {t.first_offset}"
                if t.coordinator_epoch is None
                else f"--producer-id {t.producer_id} --producer-epoch {t.producer_epoch} "
                f"--coordinator-epoch {t.coordinator_epoch}"
            )
            lines.append(
                f"    abort with: kafka-transactions.sh --bootstrap-server HOST:PORT abort --topic {found.topic} "
                f"--partition {found.partition} {how}"
            )
    for a in found.anomalies:
        lines.append(
            f"  anomaly at offset {a.offset}: producer {a.producer_id} epoch {a.producer_epoch} {a.kind} "
            f"({a.error}): {a.message}"
        )
    if found.anomaly_count > len(found.anomalies):
        lines.append(f"  ... {found.anomaly_count - len(found.anomalies)} more anomalies")
    lines += [f"  snapshot: {p}" for p in found.snapshot_problems]
    return lines


def add_parser(sub) -> None:
    p = sub.add_parser(
        "txn",
        help="transaction forensics: open and hanging transactions, the last stable offset, producer anomalies",
        description="Walk the batch headers of a partition directory (or of every partition of a log directory) "
        "as Kafka's producer state does: committed, aborted and empty transactions, the ones still open, the "
        "last stable offset a read_committed consumer stops at and the records it holds back, and producer "
        "anomalies by Kafka's append rules (epoch regressions, sequence gaps, duplicate sequences). Open "
        "transactions are checked against __transaction_state when the log directory holds it "
        "(or --transaction-state names one): a transaction hangs when the coordinator has no in-flight "
        "transaction for its producer id, or one that does not list the partition (KIP-664). Producer-state "
        ".snapshot files are compared with the log.",
    )
    p.add_argument("path", metavar="PATH", help="a partition directory (<topic>-<n>) or a broker log directory")
    p.add_argument(
        "--transaction-state",
        metavar="DIR",
        help="a log directory (or __transaction_state-<n> directory) holding the coordinator's state, when it "
        "is not beside PATH",
    )
    p.add_argument("--transactions", action="store_true", help="also list every completed transaction")
    add_json(p, "NDJSON, one object per partition ('kind': 'partition'), and per transaction with --transactions")
    p.epilog = (
        "exit status: 0 no hanging transaction (open ones that cannot be checked, without __transaction_state, "
        "do not fail); 1 hanging transactions found; 2 bad usage; 3 damaged input"
    )
    p.set_defaults(func=cmd_txn)
