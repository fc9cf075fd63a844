"""An answer leaves in one system call: :class:`CoalescedWrites`, uvicorn's transport as the server wraps it.

uvicorn writes a response's head and its body apart; the wrapper holds what is written in one turn of the event
loop and sends it at the next as one write (issue 48). A recording transport stands in for the socket's so that
the writes can be counted: what the live server then sends is held by the transport tests (an error answer
written just before a close still arrives whole, ``tests/test_transport.py``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from wordjudge.web.transport import CoalescedWrites

from .helpers import run_async


class Recording:
    """The part of an asyncio transport the wrapper uses, recording each write and close."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.closed = False
        self.aborted = False
        self.peer_gone = False

    def write(self, data: bytes) -> None:
        assert not self.closed, "written after close"
        self.sent.append(data)

    def is_closing(self) -> bool:
        return self.closed or self.peer_gone

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = self.closed = True

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5555)}.get(name, default)


async def next_turn() -> None:
    """Let the event loop run its next turn (the wrapper's send is scheduled for it)."""
    await asyncio.sleep(0)  # zero: one turn of the loop, no time waited for


def run(steps: Any) -> Recording:
    """``steps(wrapper)`` run as a coroutine on a fresh loop; the recording transport afterwards."""
    recording = Recording()

    async def main() -> None:
        await steps(CoalescedWrites(recording))  # type: ignore[arg-type]

    run_async(main())  # a loop of its own: the browser tests keep one running in this process
    return recording


def test_a_head_and_a_body_written_in_one_turn_leave_in_one_write() -> None:
    async def steps(wrapper: CoalescedWrites) -> None:
        wrapper.write(b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n")
        wrapper.write(b"{}")
        assert wrapper.get_write_buffer_size() == 45  # held, and counted as waiting to leave
        await next_turn()

    assert run(steps).sent == [b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n{}"]


def test_writes_of_two_turns_leave_apart_and_in_order() -> None:
    async def steps(wrapper: CoalescedWrites) -> None:
        wrapper.write(b"one")
        await next_turn()
        wrapper.writelines([b"two", b"", b"three"])
        await next_turn()

    assert run(steps).sent == [b"one", b"twothree"]


def test_a_close_sends_what_is_held_first_and_nothing_is_written_after() -> None:
    async def steps(wrapper: CoalescedWrites) -> None:
        wrapper.write(b"HTTP/1.1 408 Request Timeout\r\n\r\n")
        wrapper.close()
        await next_turn()  # its send finds nothing left to send (the recording fails a late write)

    recording = run(steps)
    assert recording.sent == [b"HTTP/1.1 408 Request Timeout\r\n\r\n"]
    assert recording.closed


def test_an_abort_drops_what_is_held() -> None:
    async def steps(wrapper: CoalescedWrites) -> None:
        wrapper.write(b"never sent")
        wrapper.abort()
        await next_turn()

    recording = run(steps)
    assert recording.sent == []
    assert recording.aborted


def test_what_the_peer_no_longer_reads_is_not_written() -> None:
    async def steps(wrapper: CoalescedWrites) -> None:
        wrapper.write(b"late")
        wrapper._transport.peer_gone = True  # type: ignore[attr-defined]  # connection lost meanwhile
        await next_turn()

    assert run(steps).sent == []


def test_everything_else_is_the_wrapped_transports() -> None:
    async def steps(wrapper: CoalescedWrites) -> None:
        assert wrapper.get_extra_info("peername") == ("127.0.0.1", 5555)
        assert not wrapper.is_closing()

    run(steps)
