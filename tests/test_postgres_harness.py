"""The tests' PostgreSQL (tests/postgres.py): a real server of Debian's binaries, reached over TCP with a password,
a fresh empty database per test, the --backend option, and more clusters (a standby) for a test that needs them."""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from .postgres import (
    BACKEND_ENV,
    MISSING,
    OWNER,
    PID_FILE,
    Cluster,
    chosen_backend,
    cluster_folder,
    find_bin_dir,
    fresh_database,
    major_version,
    missing,
    remove_folder,
    start_cluster,
    stop_all,
    sweep_orphans,
)


def user_tables(url: str) -> list[str]:
    """The tables, views and sequences of every schema of the database at ``url`` but PostgreSQL's own."""
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'"
        ).fetchall()
    return sorted(row[0] for row in rows)


def databases(cluster: Cluster) -> set[str]:
    with cluster.connect() as connection:
        return {row[0] for row in connection.execute("SELECT datname FROM pg_database").fetchall()}


# -- the cluster ----------------------------------------------------------------------------------------


def test_the_cluster_answers_over_tcp_to_the_superuser_with_its_password(postgres_cluster: Cluster) -> None:
    url = postgres_cluster.url()
    assert url == (
        f"postgresql://{postgres_cluster.superuser}:{postgres_cluster.password}@127.0.0.1:{postgres_cluster.port}/postgres"
    )
    with psycopg.connect(url) as connection:
        version = connection.execute("SELECT version()").fetchone()
        address = connection.execute("SELECT host(inet_server_addr()), inet_server_port()").fetchone()
        superuser = connection.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
    assert version is not None
    assert version[0].startswith(f"PostgreSQL {major_version(postgres_cluster.bin_dir)}.")
    assert address == ("127.0.0.1", postgres_cluster.port)  # TCP, not the socket (where this is NULL)
    assert superuser == (True,)


def test_a_wrong_password_or_none_is_refused(postgres_cluster: Cluster) -> None:
    wrong = postgres_cluster.url(user=postgres_cluster.superuser, password="not-" + postgres_cluster.password)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(wrong, connect_timeout=10)
    with pytest.raises(psycopg.OperationalError, match="no password supplied"):
        psycopg.connect(postgres_cluster.url(user=postgres_cluster.superuser), connect_timeout=10)


def test_a_role_made_with_a_password_logs_in_with_it_and_with_no_other(
    postgres_cluster: Cluster, postgres_url: str
) -> None:
    role = f"clerk_{os.getpid()}"  # roles are the cluster's, not a database's: one name per test process
    postgres_cluster.create_role(role, "s3cret pass/word")
    try:
        database = postgres_url.rsplit("/", 1)[1]
        with psycopg.connect(postgres_cluster.url(database, user=role, password="s3cret pass/word")) as connection:
            assert connection.execute("SELECT current_user, current_database()").fetchone() == (role, database)
            assert connection.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone() == (
                False,
            )
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            psycopg.connect(postgres_cluster.url(database, user=role, password="s3cret"), connect_timeout=10)
    finally:
        with postgres_cluster.connect() as connection:
            connection.execute(f'DROP ROLE "{role}"')


def test_fsync_and_synchronous_commit_are_on(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as connection:
        assert connection.execute("SHOW fsync").fetchone() == ("on",)
        assert connection.execute("SHOW synchronous_commit").fetchone() == ("on",)


def test_the_server_runs_as_the_postgres_user_under_root_in_a_folder_only_it_reaches(
    postgres_cluster: Cluster,
) -> None:
    owner = postgres_cluster.data_dir.stat()
    assert stat.S_IMODE(owner.st_mode) == 0o700
    assert stat.S_IMODE(postgres_cluster.folder.parent.stat().st_mode) == 0o700
    pid = int((postgres_cluster.data_dir / "postmaster.pid").read_text().split()[0])
    server_uid = os.stat(f"/proc/{pid}").st_uid
    assert server_uid == owner.st_uid
    if os.geteuid() == 0:
        assert pwd.getpwuid(server_uid).pw_name == OWNER
    else:
        assert server_uid == os.geteuid()


# -- a database per test ----------------------------------------------------------------------------------


def test_two_fresh_databases_are_distinct_and_empty(postgres_cluster: Cluster, postgres_url: str) -> None:
    with fresh_database(postgres_cluster) as other:
        assert other != postgres_url
        assert user_tables(postgres_url) == []
        assert user_tables(other) == []
        with psycopg.connect(postgres_url) as connection:
            connection.execute("CREATE TABLE only_here (n integer)")
        assert user_tables(postgres_url) == ["only_here"]
        assert user_tables(other) == []
        with psycopg.connect(other) as connection:
            assert connection.execute("SELECT current_database()").fetchone() == (other.rsplit("/", 1)[1],)


def test_a_fresh_database_is_dropped_on_leaving_even_with_a_session_open(postgres_cluster: Cluster) -> None:
    with fresh_database(postgres_cluster) as url:
        name = url.rsplit("/", 1)[1]
        assert name.startswith("wj_")
        assert name in databases(postgres_cluster)
        left_open = psycopg.connect(url)  # a store the test forgot to close: WITH (FORCE) ends its session
    try:
        assert name not in databases(postgres_cluster)
    finally:
        left_open.close()


def test_a_fresh_database_whose_cluster_a_test_stopped_is_dropped_once_it_runs_again(
    postgres_clusters: Callable[..., Cluster],
) -> None:
    cluster = postgres_clusters()
    with fresh_database(cluster) as url:
        with psycopg.connect(url) as connection:
            connection.execute("CREATE TABLE kept (n integer)")
            connection.execute("INSERT INTO kept VALUES (1)")
        cluster.stop("immediate")  # a crash: no shutdown checkpoint
        assert not cluster.running()
    assert cluster.running()
    assert url.rsplit("/", 1)[1] not in databases(cluster)


# -- the backend option -----------------------------------------------------------------------------------


def test_database_url_follows_the_backend_and_marks_its_test(
    backend: str, database_url: str | None, request: pytest.FixtureRequest
) -> None:
    # No marker here: taking database_url is enough for .ci/check's run on PostgreSQL (-m postgresql) to take it
    assert request.node.get_closest_marker("postgresql") is not None
    if backend == "sqlite":
        assert database_url is None
        return
    assert database_url is not None
    assert database_url.startswith("postgresql://")
    assert user_tables(database_url) == []


def test_the_backend_is_the_option_else_the_environment_else_sqlite() -> None:
    assert chosen_backend(None, {}) == "sqlite"
    assert chosen_backend(None, {BACKEND_ENV: "postgresql"}) == "postgresql"
    assert chosen_backend("sqlite", {BACKEND_ENV: "postgresql"}) == "sqlite"
    assert chosen_backend("postgresql", {}) == "postgresql"
    with pytest.raises(pytest.UsageError, match=f"{BACKEND_ENV}='mysql': use one of sqlite, postgresql"):
        chosen_backend(None, {BACKEND_ENV: "mysql"})


# -- the binaries -------------------------------------------------------------------------------------------


def fake_server_tools(bin_dir: Path, version: str) -> Path:
    """Stand-ins for initdb, pg_ctl and postgres that only say their version: what find_bin_dir looks at."""
    bin_dir.mkdir(parents=True)
    for tool in ("initdb", "pg_ctl", "postgres"):
        (bin_dir / tool).write_text(f"#!/bin/sh\necho '{tool} (PostgreSQL) {version}'\n")
        (bin_dir / tool).chmod(0o755)
    return bin_dir


def test_the_newest_binaries_are_chosen_debian_s_or_those_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    debian = tmp_path / "lib"
    monkeypatch.setenv("PATH", "/nowhere")
    assert find_bin_dir(debian) is None
    fake_server_tools(debian / "13" / "bin", "13.9")
    newest = fake_server_tools(debian / "16" / "bin", "16.4 (Debian 16.4-1)")
    (debian / "17" / "bin").mkdir(parents=True)  # a client-only install: no server there
    assert find_bin_dir(debian) == newest
    on_path = fake_server_tools(tmp_path / "built" / "bin", "17.2")
    monkeypatch.setenv("PATH", f"/nowhere:{on_path}")
    assert find_bin_dir(debian) == on_path


@pytest.mark.parametrize(
    ("ci", "outcome"), [("", pytest.skip.Exception), ("true", pytest.fail.Exception)], ids=["dev", "ci"]
)
def test_without_the_binaries_a_test_is_skipped_saying_how_to_install_them_but_fails_in_ci(
    ci: str, outcome: type[BaseException], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", ci)
    monkeypatch.setattr(os, "getuid", lambda: 1000)  # as a developer's account; root fails as CI does
    with pytest.raises(outcome, match=r"PostgreSQL is not installed: apt-get install postgresql"):
        missing()
    assert MISSING.startswith("PostgreSQL is not installed: apt-get install postgresql")


# -- more clusters --------------------------------------------------------------------------------------------


def test_more_clusters_start_side_by_side_and_a_standby_follows_its_primary(
    postgres_clusters: Callable[..., Cluster],
) -> None:
    primary = postgres_clusters()
    other = postgres_clusters()
    assert primary.port != other.port
    assert primary.password != other.password
    with primary.connect() as connection:
        connection.execute("CREATE TABLE verdicts (n integer)")
    standby = primary.standby(primary.folder.parent / "standby")
    with primary.connect() as connection:
        connection.execute("INSERT INTO verdicts VALUES (1), (2)")
        lsn = connection.execute("SELECT pg_current_wal_lsn()").fetchone()
    assert lsn is not None
    with standby.connect() as connection:
        assert connection.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
        for _ in range(100):  # streaming: the standby replays the insert within moments
            replayed = connection.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", lsn).fetchone()
            if replayed == (True,):
                break
            time.sleep(0.05)
        assert connection.execute("SELECT count(*) FROM verdicts").fetchone() == (2,)
    with other.connect() as connection:
        assert connection.execute("SELECT to_regclass('verdicts')").fetchone() == (None,)


def test_start_cluster_makes_a_new_cluster_in_a_folder_given(postgres_bin_dir: Path) -> None:
    folder = cluster_folder()
    try:
        cluster = start_cluster(folder / "mine", bin_dir=postgres_bin_dir, settings={"work_mem": "8MB"})
        try:
            with cluster.connect() as connection:
                assert connection.execute("SHOW work_mem").fetchone() == ("8MB",)
        finally:
            cluster.stop()
        assert not cluster.running()
    finally:
        remove_folder(folder)


def test_the_clusters_of_a_test_process_that_died_are_stopped_and_removed(postgres_bin_dir: Path) -> None:
    folder = cluster_folder()
    try:
        cluster = start_cluster(folder / "orphan", bin_dir=postgres_bin_dir)
        assert folder not in sweep_orphans()  # this test process lives: its clusters stay
        assert cluster.running()
        gone = subprocess.Popen(["true"])
        gone.wait()
        (folder / PID_FILE).write_text(str(gone.pid))  # as if the pytest that made it had been killed
        assert folder in sweep_orphans()
        assert not folder.exists()
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(cluster.url(), connect_timeout=5)
    finally:
        stop_all(folder, postgres_bin_dir)
        remove_folder(folder)
