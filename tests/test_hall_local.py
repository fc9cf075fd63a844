"""This machine's servers of a hall, found without their port (hall/local.py), and what `standby promote` makes of
what they heard (cli/hall.py): pure parts, on files and answers the tests write."""

from __future__ import annotations

from pathlib import Path

import pytest

from wordjudge.base.agent import LOCAL_SCAN, PEER, user_agent
from wordjudge.base.errors import InvalidInput
from wordjudge.cli import hall as hall_cli
from wordjudge.hall.local import LocalServer, listening, local_servers
from wordjudge.hall.peers import ask_peers

from .fake_peer import FakePeer, json_answer
from .helpers import free_port

# /proc/net/tcp and tcp6 as Linux writes them: a header, then one socket a line (0A: listening).
TCP = """  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000   999        0 1 1
   1: 00000000:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   105        0 2 1
   2: 0B01A8C0:20FB 00000000:0000 0A 00000000:00000000 00:00000000 00000000   999        0 3 1
   3: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000   999        0 4 1
"""
TCP6 = """  sl  local_address                         remote_address                        st tx_queue rx_queue
   0: 00000000000000000000000000000000:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000
   1: 00000000000000000000000001000000:1F92 00000000000000000000000000000000:0000 0A 00000000:00000000
"""


def test_the_listening_sockets_are_read_as_linux_writes_them(tmp_path: Path) -> None:
    (tmp_path / "tcp").write_text(TCP, "ascii")
    (tmp_path / "tcp6").write_text(TCP6, "ascii")
    assert listening(tmp_path) == [
        ("127.0.0.1", 5432),  # 0.0.0.0: asked on the loopback
        ("127.0.0.1", 8080),
        ("192.168.1.11", 8443),
        ("::1", 8081),
        ("::1", 8082),
    ]  # the established connection (01) is not listening


def test_no_proc_is_no_server(tmp_path: Path) -> None:
    assert listening(tmp_path / "nothing") == []


def _server(peers: list[dict[str, object]]) -> LocalServer:
    return LocalServer("https://127.0.0.1:8443", {"server_id": "hall", "hall": {"role": "standby", "peers": peers}})


def test_what_a_server_heard_of_the_active_one() -> None:
    active = "https://192.168.1.10:8443"
    fresh = {"url": active, "proven": True, "role": "active", "age_s": 0.4}
    assert _server([fresh]).heard_active(active, 5.0) is True
    assert _server([{**fresh, "age_s": 9.0}]).heard_active(active, 5.0) is False  # an old look proves nothing now
    assert _server([{**fresh, "proven": False}]).heard_active(active, 5.0) is False
    assert _server([{**fresh, "url": "https://elsewhere"}]).heard_active(active, 5.0) is False
    assert _server([]).heard_active(active, 5.0) is None  # it has not asked its peers yet: not known


def test_a_promotion_typed_right_after_the_death_looks_again_instead_of_refusing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The standby's server heard the active one prove itself a moment before it died, and its last look says so for
    # a second or two: a promotion typed then was refused ("still proves itself"). It now looks again.
    active = "https://192.168.1.10:8443"
    looks = [
        [_server([{"url": active, "proven": True, "role": "active", "age_s": 0.9}])],
        [_server([{"url": active, "proven": False, "role": None, "age_s": 0.1}])],
    ]
    monkeypatch.setattr("wordjudge.hall.local.local_servers", lambda *args, **kwargs: looks.pop(0))
    monkeypatch.setattr("wordjudge.hall.local.asked_again", lambda servers: looks.pop(0))
    monkeypatch.setattr("time.sleep", lambda seconds: None)
    hall_cli._refuse_while_active("hall", active, [], force=False)  # no refusal
    assert looks == []


def test_a_promotion_is_refused_while_the_active_server_goes_on_proving_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    active = "https://192.168.1.10:8443"
    alive = [_server([{"url": active, "proven": True, "role": "active", "age_s": 0.5}])]
    monkeypatch.setattr("wordjudge.hall.local.local_servers", lambda *args, **kwargs: alive)
    monkeypatch.setattr("wordjudge.hall.local.asked_again", lambda servers: alive)
    monkeypatch.setattr(hall_cli, "_LOOKS_S", 0.2)
    with pytest.raises(InvalidInput) as refused:
        hall_cli._refuse_while_active("hall", active, [], force=False)
    assert refused.value.msg.key == "error.hall.active_answers"


def test_a_promotion_that_cannot_check_names_why_and_goes_on_only_when_forced(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("wordjudge.hall.local.local_servers", lambda *args, **kwargs: [])
    with pytest.raises(InvalidInput) as refused:
        hall_cli._refuse_while_active("hall", "https://a", [8443], force=False)
    assert "no wordjudge server of this hall answers on this machine (asked: 8443)" in refused.value.message
    hall_cli._refuse_while_active("hall", "https://a", [8443], force=True)
    assert "--force" in capsys.readouterr().err


def test_wordjudges_own_asks_say_who_asks() -> None:
    """A promotion's look at this machine's ports and a server's ask of its peers each name themselves: whatever
    answers at an address (and a test's fake, on a machine where another check's promotion looks at every port)
    tells them apart, and from a kiosk's browser."""
    with FakePeer(free_port(), {"/": json_answer({"server_id": "hall"})}) as fake:
        [found] = local_servers("hall", ports=[fake.port])
        assert found.url == f"http://127.0.0.1:{fake.port}"
        said = ask_peers([fake.base], None, deadline=5)
        assert not said[0].proven
    assert [heard.path for heard in fake.heard_from(user_agent(LOCAL_SCAN))] == ["/api/health"]  # https failed
    assert [heard.path.split("?")[0] for heard in fake.heard_from(user_agent(PEER))] == ["/api/hall/claim"]
    assert len(fake.heard) == 2
