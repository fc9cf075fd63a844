"""A process with a clock of its own, as another machine has: libfaketime preloaded into it alone.

Loopback tests share one clock, and so never see what two machines differ in. Here one ``wordjudge serve`` (or
any process) reads a wall clock shifted by an offset, which the test may change while it runs (an NTP step, a
clock set right by hand), while its steady clocks (monotonic, boot time) stay the machine's, as a real step
leaves them (``DONT_FAKE_MONOTONIC``). Other processes (PostgreSQL, the other server, the test) keep the real
clock.

The library is the one PyPI's ``libfaketime`` package vendors: Debian's libfaketime 0.9.10 breaks Python 3.11's
sleeps and timed waits (``time.sleep`` fails with EINVAL, ``Event.wait(timeout)`` waits for ever), which a server
is made of.
"""

from __future__ import annotations

import ctypes
import os
from importlib.util import find_spec
from pathlib import Path

import pytest


def library() -> Path:
    """The libfaketime shared library to preload. Fails (in CI) or skips the test where it is missing."""
    spec = find_spec("libfaketime")
    found = None
    if spec is not None and spec.submodule_search_locations:
        found = Path(spec.submodule_search_locations[0]) / "vendor" / "libfaketime" / "src" / "libfaketime.so.1"
    try:
        if found is None:
            raise OSError("the libfaketime package is not installed")
        ctypes.CDLL(str(found))  # loads here: else a preload that fails only warns, and the clock is not shifted
    except OSError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"libfaketime cannot be loaded ({exc}): .ci/check installs it from requirements-dev.lock")
        pytest.skip(f"libfaketime cannot be loaded ({exc})")
    return found


class ShiftedClock:
    """A wall clock ``offset`` away from the machine's (libfaketime's syntax: ``+1h``, ``-5``, ``-0.03``), read
    from a file at every call, so that :meth:`set` steps it in a running process."""

    def __init__(self, folder: Path, offset: str = "+0") -> None:
        self.file = folder / "faketime"
        self.set(offset)

    def set(self, offset: str) -> None:
        """Step the clock to ``offset`` from the machine's, at once, in every process running with it."""
        self.file.write_text(offset + "\n", "utf-8")

    @property
    def env(self) -> dict[str, str]:
        """The environment a process runs with to read this clock."""
        return {
            "LD_PRELOAD": str(library()),
            "FAKETIME_TIMESTAMP_FILE": str(self.file),
            "FAKETIME_NO_CACHE": "1",  # read at every call: a step is seen at once
            "DONT_FAKE_MONOTONIC": "1",  # a real step leaves the steady clocks alone
        }

    @property
    def prefix(self) -> list[str]:
        """A command prefix that runs a program with this clock (``LiveServer.prefix``)."""
        return ["env", *(f"{name}={value}" for name, value in self.env.items())]
