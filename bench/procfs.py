"""What Linux's /proc says of a process: its resident memory, its child processes, and the peak of
both together while a measurement runs (a server with its parser workers, an indexer with its)."""

from __future__ import annotations

import threading
from pathlib import Path

# How often the peak sampler reads /proc.
SAMPLE_INTERVAL_S = 0.05


def rss_mb(pid: int | str = "self") -> float:
    """A process's resident memory in MB; 0 once it has gone."""
    return _status_mb(pid, "VmRSS:")


def peak_rss_mb(pid: int | str = "self") -> float:
    """The most resident memory a process has had since it started, in MB (the kernel's high-water
    mark: exact, where a sampler can miss a short peak); 0 once it has gone."""
    return _status_mb(pid, "VmHWM:")


def _status_mb(pid: int | str, field: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(pid: int | str = "self") -> list[int]:
    """The process ids of a process's children, as its threads list them."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found.extend(int(child) for child in (task / "children").read_text().split())
        except OSError:
            continue
    return found


class PeakRssSampler(threading.Thread):
    """The peak resident memory of a process (this one by default) and of it with its children,
    sampled every ``SAMPLE_INTERVAL_S`` until ``done`` is set."""

    def __init__(self, pid: int | str = "self") -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_own_mb = 0.0
        self.peak_total_mb = 0.0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(SAMPLE_INTERVAL_S):
            own = rss_mb(self.pid)
            try:
                spawned = children(self.pid)
            except OSError:
                spawned = []
            total = own + sum(rss_mb(child) for child in spawned)
            self.peak_own_mb = max(self.peak_own_mb, own)
            self.peak_total_mb = max(self.peak_total_mb, total)
