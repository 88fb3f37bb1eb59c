#!/usr/bin/env python3
"""Write samples/data: a small Kafka log directory, reproducibly (same bytes on every run).

    python samples/make_samples.py [OUT_DIR]     # default: samples/data next to this script

Four partition directories written with kcodec's encode_batch /
encode_control_batch and SegmentWriter (segments rolled small so that every
partition has several segments with their .index / .timeindex files):

* ``orders-0``  v2, zstd, with headers; a transactional producer commits one
  transaction and aborts another (COMMIT / ABORT markers, a .txnindex);
* ``orders-1``  v2, lz4, one batch stamped LogAppendTime;
* ``clicks-0``  v1 (message format 0.10), gzip and snappy wrappers and plain messages;
* ``legacy-0``  v0 (message format 0.8), uncompressed and snappy.

The records are order and click events (JSON text), keyed by customer.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path

from kcodec.log.writer import SegmentWriter
from kcodec.records.encode import encode_batch, encode_control_batch
from kcodec.records.model import TimestampType

SEED = 4242
BASE_TS = 1_735_689_600_000  # 2025-01-01T00:00:00Z
SEGMENT_BYTES = 12 * 1024
INDEX_INTERVAL = 1024
SKUS = ["book", "lamp", "mug", "pen", "desk", "chair", "cable", "phone", "plant", "kettle"]
PAGES = ["/", "/search", "/cart", "/checkout", "/product", "/account", "/help"]


class Events:
    def __init__(self, seed: int):
        self.rnd = random.Random(seed)
        self.ts = BASE_TS
        self.n = 0

    def order(self) -> dict:
        r, self.n = self.rnd, self.n + 1
        self.ts += r.randint(5, 900)
        customer = f"customer-{r.randint(1, 40):03d}"
        value = {
            "order": 100_000 + self.n,
            "customer": customer,
            "sku": r.choice(SKUS),
            "qty": r.randint(1, 5),
            "price": round(r.uniform(2, 300), 2),
            "currency": "EUR",
        }
        return {
            "key": customer.encode(),
            "value": json.dumps(value, separators=(",", ":")).encode(),
            "headers": [
                ("source", b"web" if r.random() < 0.7 else b"app"),
                ("trace", r.getrandbits(64).to_bytes(8, "big")),
            ],
            "timestamp": self.ts,
        }

    def click(self, headers: bool = False) -> dict:
        r, self.n = self.rnd, self.n + 1
        self.ts += r.randint(1, 400)
        customer = f"customer-{r.randint(1, 40):03d}"
        value = {
            "page": r.choice(PAGES),
            "customer": customer,
            "ms": r.randint(20, 4000),
            "session": f"{r.getrandbits(48):012x}",
        }
        return {
            "key": customer.encode(),
            "value": json.dumps(value, separators=(",", ":")).encode(),
            "headers": [],
            "timestamp": self.ts,
        }


def write_orders_0(out: Path) -> None:
    ev = Events(SEED)
    pid, epoch, seq = 7001, 0, 0
    with SegmentWriter(out / "orders-0", segment_bytes=SEGMENT_BYTES, index_interval_bytes=INDEX_INTERVAL) as w:
        offset = 0
        for b in range(14):
            recs = [ev.order() for _ in range(40)]
            w.append(encode_batch(recs, base_offset=offset, compression="zstd"))
            offset += len(recs)
            if b in (4, 9):  # a transaction: committed the first time, aborted the second
                for _ in range(2):
                    recs = [ev.order() for _ in range(10)]
                    w.append(
                        encode_batch(
                            recs,
                            base_offset=offset,
                            compression="zstd",
                            producer_id=pid,
                            producer_epoch=epoch,
                            base_sequence=seq,
                            transactional=True,
                        )
                    )
                    offset += len(recs)
                    seq += len(recs)
                kind = "commit" if b == 4 else "abort"
                w.append(
                    encode_control_batch(
                        kind, producer_id=pid, producer_epoch=epoch, coordinator_epoch=3, offset=offset, timestamp=ev.ts
                    )
                )
                offset += 1


def write_orders_1(out: Path) -> None:
    ev = Events(SEED + 1)
    with SegmentWriter(out / "orders-1", segment_bytes=SEGMENT_BYTES, index_interval_bytes=INDEX_INTERVAL) as w:
        offset = 0
        for b in range(10):
            recs = [ev.order() for _ in range(50)]
            if b == 6:
                data = encode_batch(
                    recs,
                    base_offset=offset,
                    compression="lz4",
                    timestamp_type=TimestampType.LOG_APPEND_TIME,
                    log_append_time=ev.ts + 5,
                )
            else:
                data = encode_batch(recs, base_offset=offset, compression="lz4")
            w.append(data)
            offset += len(recs)


def write_clicks_0(out: Path) -> None:
    ev = Events(SEED + 2)
    with SegmentWriter(out / "clicks-0", segment_bytes=SEGMENT_BYTES, index_interval_bytes=INDEX_INTERVAL) as w:
        offset = 0
        for b in range(16):
            recs = [ev.click() for _ in range(30)]
            codec = ("gzip", "snappy", "none")[b % 3]
            w.append(encode_batch(recs, magic=1, base_offset=offset, compression=codec, allow_lossy=True))
            offset += len(recs)


def write_legacy_0(out: Path) -> None:
    ev = Events(SEED + 3)
    with SegmentWriter(out / "legacy-0", segment_bytes=SEGMENT_BYTES, index_interval_bytes=INDEX_INTERVAL) as w:
        offset = 0
        for b in range(8):
            recs = [dict(ev.click(), timestamp=-1) for _ in range(25)]
            w.append(
                encode_batch(
                    recs, magic=0, base_offset=offset, compression="snappy" if b % 2 else "none", allow_lossy=True
                )
            )
            offset += len(recs)


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent / "data"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for write in (write_orders_0, write_orders_1, write_clicks_0, write_legacy_0):
        write(out)
    total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {out} ({total:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
