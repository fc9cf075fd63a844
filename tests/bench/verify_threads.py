"""The whole-log check's CPU time, thread by thread: on two free cores its wall time is about its busiest thread's CPU
time (its critical path), whatever the load of a shared machine when it is measured.

    .venv/bin/python -m tests.bench.verify_threads DATA_DIR/audit.sqlite3

prints one line of JSON: the check's wall and CPU time, each thread's CPU time (busiest first) and the load average.
bench_log runs it beside its timed ``wordjudge audit verify``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

from wordjudge.log.audit import AuditLog
from wordjudge.storage.dialect import StateLocation

TICK = os.sysconf("SC_CLK_TCK")


def thread_times(seen: dict[int, float], stop: threading.Event) -> None:
    """Until ``stop``, note each other thread's CPU seconds (user and system, from /proc) in ``seen`` by its id,
    every 20 ms: a thread's last sample is kept once it has ended."""
    me = threading.get_native_id()
    while not stop.is_set():
        for tid in (int(name) for name in os.listdir("/proc/self/task")):
            if tid == me:
                continue
            try:
                fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # ended meanwhile
            seen[tid] = max(seen.get(tid, 0.0), (int(fields[11]) + int(fields[12])) / TICK)
        time.sleep(0.02)


def main() -> None:
    path = Path(sys.argv[1])
    seen: dict[int, float] = {}
    stop = threading.Event()
    sampler = threading.Thread(target=thread_times, args=(seen, stop), daemon=True)
    sampler.start()
    load = os.getloadavg()[0]
    started, cpu = time.perf_counter(), time.process_time()
    result = AuditLog(StateLocation(path.parent), file=path.name).verify()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    time.sleep(0.05)  # a last sample
    stop.set()
    sampler.join()
    if not result.ok:
        sys.exit(f"verify failed: {result.describe()}")
    busiest = sorted(seen.values(), reverse=True)
    said = {"records": result.records, "wall_s": wall, "cpu_s": cpu, "threads_cpu_s": busiest[:3], "load": load}
    print(json.dumps(said))


if __name__ == "__main__":
    main()
