"""A test's server listens on a port outside the system's ephemeral range (``helpers.free_port``): a port in that
range may be taken by any process's outgoing connection between the check and the server's bind."""

from __future__ import annotations

import socket

from .helpers import LOWEST_PORT, ephemeral_ports, free_port, free_ports


def test_a_free_port_is_below_the_ephemeral_range_and_can_be_listened_on() -> None:
    low, high = ephemeral_ports()
    assert LOWEST_PORT < low < high
    for _ in range(20):
        port = free_port()
        assert LOWEST_PORT <= port < low
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))
            sock.listen()


def test_consecutive_free_ports_are_below_the_ephemeral_range_too() -> None:
    first = free_ports(4)
    assert first >= LOWEST_PORT
    assert first < ephemeral_ports()[0]
