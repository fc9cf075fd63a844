from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from wordjudge.base.errors import InvalidInput
from wordjudge.service.settings import Settings, load_settings
from wordjudge.storage.postgres import describe, shown

from .helpers import free_port
from .postgres import Cluster
from .test_cli_access import run


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in Settings.model_fields:
        monkeypatch.delenv(f"WORDJUDGE_{name.upper()}", raising=False)
    settings = load_settings()
    assert settings.data_dir == Path("wordjudge-data")
    assert (settings.host, settings.port, settings.log_level) == ("127.0.0.1", 8000, "info")
    assert settings.log_format == "text"
    assert (settings.certfile, settings.public_url, settings.tls) == (None, None, False)
    assert settings.mdns_name == "wordjudge"


def test_every_setting_has_an_environment_twin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WORDJUDGE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("WORDJUDGE_HOST", "0.0.0.0")
    monkeypatch.setenv("WORDJUDGE_PORT", "8123")
    monkeypatch.setenv("WORDJUDGE_LOG_LEVEL", "debug")
    monkeypatch.setenv("WORDJUDGE_LOG_FORMAT", "json")
    (tmp_path / "cert.pem").write_text("cert")
    (tmp_path / "key.pem").write_text("key")
    monkeypatch.setenv("WORDJUDGE_CERTFILE", str(tmp_path / "cert.pem"))
    monkeypatch.setenv("WORDJUDGE_KEYFILE", str(tmp_path / "key.pem"))
    monkeypatch.setenv("WORDJUDGE_PUBLIC_URL", "https://wordjudge.local:8443")
    monkeypatch.setenv("WORDJUDGE_MDNS_NAME", "hall-b")
    monkeypatch.setenv("WORDJUDGE_MAX_CONNECTIONS_PER_CLIENT", "16")
    monkeypatch.setenv("WORDJUDGE_TRUSTED_PROXIES", "127.0.0.1, 10.1.0.0/16")
    monkeypatch.setenv("WORDJUDGE_LANGUAGE", "fr")
    monkeypatch.setenv("WORDJUDGE_DATABASE", "postgresql://wordjudge@db.example:5433/hall")
    monkeypatch.setenv("WORDJUDGE_PEERS", "https://hall-a.local:8443/, https://10.0.0.2:8443")
    monkeypatch.setenv("WORDJUDGE_HTTPS", "on")
    settings = load_settings()
    assert settings.https == "on"
    assert settings.data_dir == tmp_path
    assert (settings.host, settings.port, settings.log_level) == ("0.0.0.0", 8123, "debug")
    assert settings.log_format == "json"
    assert (settings.certfile, settings.keyfile) == (tmp_path / "cert.pem", tmp_path / "key.pem")
    assert settings.tls
    assert settings.public_url == "https://wordjudge.local:8443"
    assert settings.mdns_name == "hall-b"
    assert settings.max_connections_per_client == 16
    assert [str(network) for network in settings.proxy_networks] == ["127.0.0.1/32", "10.1.0.0/16"]
    assert settings.language == "fr"
    assert settings.database == "postgresql://wordjudge@db.example:5433/hall"
    assert settings.peers == "https://hall-a.local:8443,https://10.0.0.2:8443"
    assert set(Settings.model_fields) == {
        "data_dir",
        "database",
        "processes",
        "host",
        "port",
        "log_level",
        "log_format",
        "https",
        "certfile",
        "keyfile",
        "public_url",
        "peers",
        "mdns_name",
        "max_connections_per_client",
        "max_requests_per_client",
        "trusted_proxies",
        "language",
    }


def test_tls_needs_both_files_and_they_must_exist(tmp_path: Path) -> None:
    (tmp_path / "cert.pem").write_text("cert")
    with pytest.raises(InvalidInput, match="certfile and keyfile go together"):
        load_settings(certfile=tmp_path / "cert.pem")
    with pytest.raises(InvalidInput, match=r"missing\.pem is not a file"):
        load_settings(certfile=tmp_path / "cert.pem", keyfile=tmp_path / "missing.pem")
    with pytest.raises(InvalidInput, match=r"public_url \(WORDJUDGE_PUBLIC_URL\)"):
        load_settings(public_url="wordjudge.local")


def test_trusted_proxies_are_addresses_or_networks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WORDJUDGE_TRUSTED_PROXIES", raising=False)
    assert load_settings().proxy_networks == []  # the default: no proxy, X-Forwarded-For is ignored
    with pytest.raises(InvalidInput, match=r"trusted_proxies \(WORDJUDGE_TRUSTED_PROXIES\).*'\*' is not an IP"):
        load_settings(trusted_proxies="*")
    with pytest.raises(InvalidInput, match=r"'proxy\.lan' is not an IP address or network"):
        load_settings(trusted_proxies="127.0.0.1,proxy.lan")


def test_flags_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORDJUDGE_PORT", "8123")
    assert load_settings(port=9000, host=None).port == 9000


def test_bad_settings_name_the_setting_and_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORDJUDGE_PORT", "http")
    with pytest.raises(InvalidInput, match=r"port \(WORDJUDGE_PORT\)"):
        load_settings()
    with pytest.raises(InvalidInput, match=r"log_level \(WORDJUDGE_LOG_LEVEL\)"):
        load_settings(port=80, log_level="loud")


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("postgresql://wj:secret@db:notaport/hall", "(Port could not be cast to integer value as 'notaport')"),
        ("postgresql://wj:secret@db:99999/hall", "(Port out of range 0-65535)"),
        ("postgresql://wj:secret@[::1/hall", "(Invalid IPv6 URL)"),
        ("postgresql://wj:secret@db/hall?colour=blue", '(invalid URI query parameter: "colour")'),
    ],
)
def test_a_database_url_that_cannot_be_read_is_named_without_its_password(url: str, said: str) -> None:
    """Before, a password beside a port that is no number made a traceback: the message's own URL, stripped of
    its password, read the port."""
    with pytest.raises(InvalidInput) as refused:
        load_settings(database=url)
    message = str(refused.value)
    assert message.startswith("invalid settings: database (WORDJUDGE_DATABASE): postgresql://wj@")
    assert f"is not a database URL wordjudge can read {said}: give postgresql://USER@HOST:PORT/DATABASE" in message
    assert "secret" not in message


def test_a_url_whose_options_libpq_refuses_is_not_said_to_be_unreachable(tmp_path: Path) -> None:
    """libpq reads an option's value only when it connects: "cannot be reached" was the wrong thing to say."""
    url = f"postgresql://wj@127.0.0.1:{free_port()}/hall?sslmode=bogus"
    with pytest.raises(psycopg.OperationalError) as refused:
        psycopg.connect(url, connect_timeout=5)
    said = describe(refused.value)
    assert said.startswith("the database URL's settings are not right: give postgresql://USER@HOST:PORT/DATABASE")
    assert 'invalid sslmode value: "bogus"' in said


def test_a_server_that_refuses_the_login_is_not_said_to_be_unreachable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_clusters: Callable[..., Cluster]
) -> None:
    """A server that answered and refused (no such user, no password given, pg_hba.conf, SSL) was said not to be
    reached, which sent the TD to check a machine and an address that were right."""
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "no-pgpass"))
    cluster = postgres_clusters()
    hba = cluster.data_dir / "pg_hba.conf"
    hba.write_text(f"host all barred {cluster.host}/32 reject\n" + hba.read_text())
    cluster.run("pg_ctl", "reload", "-D", str(cluster.data_dir))
    cluster.create_role("barred", "its-password")
    said = {
        f"postgresql://nobody@/postgres?host={cluster.folder}&port={cluster.port}": "there is no such user on that server",
        cluster.url(user=cluster.superuser, password=None): "the server asks for a password and the URL gives none",
        cluster.url(user="barred", password="its-password"): "does not let this user reach this database",
        cluster.url() + "?sslmode=require": "the URL's SSL setting (sslmode) and the server's do not agree",
    }
    for url, reason in said.items():
        refused = run("audit", "verify", "--data-dir", tmp_path / "folder", "--database", url)
        assert refused.exit_code == 1, refused.output
        assert reason in refused.output, refused.output
        assert "cannot be reached" not in refused.output
        assert cluster.password not in refused.output
        assert "its-password" not in refused.output
    assert not (tmp_path / "folder").exists()


def test_a_database_url_of_another_kind_or_naming_no_database_says_what_to_give() -> None:
    with pytest.raises(InvalidInput, match=r"mysql://wj@db/hall is not a PostgreSQL database URL: give postgresql://"):
        load_settings(database="mysql://wj:secret@db/hall")
    with pytest.raises(InvalidInput, match=r"postgresql://wj@db names no database: give postgresql://"):
        load_settings(database="postgresql://wj@db")


@pytest.mark.parametrize("name", ["bad name", "-hall", "hall-", "h" * 61, "hall.local"])
def test_an_mdns_name_that_is_no_lan_name_is_named_with_what_one_is(name: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        load_settings(mdns_name=name)
    assert f"{name!r} is not a name for the LAN: letters, digits and hyphens" in str(refused.value)
    assert "pattern" not in str(refused.value)  # before: the regular expression it did not match


def test_a_url_is_shown_without_its_password_whatever_it_holds() -> None:
    assert shown("postgresql://wj:secret@db:5433/hall") == "postgresql://wj@db:5433/hall"
    assert shown("postgresql://wj:se:cr@et@db/hall") == "postgresql://wj@db/hall"
    assert shown("postgresql://wj:secret@db:notaport/hall") == "postgresql://wj@db:notaport/hall"
    assert shown("postgresql://wj:secret@[::1/hall") == "postgresql://wj@[::1/hall"
    assert shown("postgresql://wj@db/hall") == "postgresql://wj@db/hall"
    assert shown("postgresql://:secret@db/hall") == "postgresql://db/hall"


@pytest.mark.parametrize(
    "url",
    [
        "notaurl",
        "http://hall-a:notaport",
        "http://hall-a:99999",
        "http://[::1",
        "http://hall-a:0",
        "http://hall-a/kiosk",
        "http://hall-a:8000?x=1",
        "ftp://hall-a",
    ],
)
def test_a_public_url_or_peer_that_is_no_servers_address_is_named_with_an_example(url: str) -> None:
    """Before, a public URL was checked against a pattern that the message showed as it was (and took any
    digits for a port), and a peer's port was not read: ':notaport' was taken."""
    for setting, given in (("public_url", {"public_url": url}), ("peers", {"peers": f"http://hall-b:8000,{url}"})):
        with pytest.raises(InvalidInput) as refused:
            load_settings(**given)
        assert f"{url!r} is not a server's address such as http://192.168.1.11:8000" in str(refused.value), setting
    for good in ("http://hall-a:8000", "http://hall-a:8000/", "https://192.168.1.10", "http://[::1]:8000"):
        assert load_settings(public_url=good).public_url == good


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"peers": "hall-b:8000"}, r"'hall-b:8000' is not a server's address such as http://"),
        ({"peers": "ftp://hall-b"}, r"'ftp://hall-b' is not a server's address"),
        ({"peers": "http://hall-b:8000/kiosk"}, r"'http://hall-b:8000/kiosk' is not a server's address"),
        ({"peers": "http://hall-b:8000"}, r"needs --database \(this machine's PostgreSQL\) and --public-url"),
        (
            {"peers": "http://hall-b:8000", "database": "postgresql://wj@localhost/hall"},
            r"needs --database .* and --public-url",
        ),
        (
            {
                "peers": "http://hall-b:8000/",
                "database": "postgresql://wj@localhost/hall",
                "public_url": "http://hall-b:8000",
            },
            r"http://hall-b:8000 is this server \(--public-url\), not one of its peers",
        ),
    ],
)
def test_a_hall_of_servers_is_refused_unless_whole_naming_what_is_missing(given: dict[str, str], said: str) -> None:
    with pytest.raises(InvalidInput, match=said):
        load_settings(**given)
    hall = load_settings(
        peers="http://hall-b:8000/, http://hall-b:8000",
        database="postgresql://wj@localhost/hall",
        public_url="http://hall-a:8000",
    )
    assert hall.peers == "http://hall-b:8000"
