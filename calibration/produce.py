"""``python -m calibration.produce BOOTSTRAP INTERVAL TOPICS_JSON``: the calibration's producer process.

Every INTERVAL seconds it writes one record to every partition of every topic that TOPICS_JSON (``{topic: count}``,
re-read when it changes) names, until SIGTERM.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    from confluent_kafka import KafkaException, Producer

    bootstrap, interval, listing = argv[0], float(argv[1]), Path(argv[2])
    # metadata every second: added partitions are produced to soon after they exist
    config = {"bootstrap.servers": bootstrap, "linger.ms": 20, "log_level": 2, "acks": 1}
    producer = Producer(config | {"topic.metadata.refresh.interval.ms": 1000})
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    counts: dict[str, int] = {}
    seen = 0.0
    sent = failed = 0
    said = time.monotonic()
    while not stop.is_set():
        began = time.monotonic()
        try:
            changed = listing.stat().st_mtime
            if changed != seen:
                new, seen = json.loads(listing.read_text(encoding="utf-8")), changed
                for topic in set(new) - set(counts):  # a topic produced to before its metadata is known waits long
                    producer.list_topics(topic, timeout=10)
                counts = new
        except (OSError, ValueError):
            pass
        for topic, count in counts.items():
            for partition in range(int(count)):
                try:
                    producer.produce(topic, b"x", partition=partition)
                    sent += 1
                except (BufferError, KafkaException) as error:  # a full queue, a partition not in metadata yet
                    failed += 1
                    if failed < 20:
                        print(f"produce {topic}-{partition}: {error}", file=sys.stderr, flush=True)
                    producer.poll(0.01)
        producer.poll(0)
        if time.monotonic() - said > 5.0:
            said = time.monotonic()
            print(json.dumps({"t": said, "topics": len(counts), "sent": sent, "failed": failed}), flush=True)
        stop.wait(max(0.0, interval - (time.monotonic() - began)))
    producer.flush(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
