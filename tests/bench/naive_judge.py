"""The naive judges that issue 19 measures wordjudge against: what a club would hack instead of wordjudge.

    python -m tests.bench.naive_judge PORT [--durable DATA_DIR]

A FastAPI app with one POST route (``/api/challenges``, so that the same load reaches every server),
a pydantic body (the fields of wordjudge's challenge), set membership of the same demo words
wordjudge serves (the ENABLE list shipped with it) and a JSON answer: no tokens, no rate limit,
no input rules beyond the body's types, no log. ``--durable`` adds what such a hack would do to keep
a record: one SQLite INSERT and a commit per request, on one connection in WAL mode with
``synchronous=FULL``, inline in the handler (no batching: each verdict waits for its own fsync).

Served by uvicorn with its defaults (uvloop and httptools when installed, as for ``wordjudge serve``),
one process, access log off. Not part of the test suite: ``tests.bench.bench_verdict`` starts it.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel

from wordjudge.words.demo import read_demo_list


class Challenge(BaseModel):
    division: str
    table: str | int
    round: int | None = None
    words: str | list[str]
    request_id: str


def build(durable: Path | None = None) -> FastAPI:
    """The naive judge; with ``durable`` (a folder), one SQLite INSERT + commit per request in it."""
    words = set(read_demo_list().words)
    connection: sqlite3.Connection | None = None
    if durable is not None:
        connection = sqlite3.connect(durable / "naive.sqlite3", isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = FULL")
        connection.execute(
            "CREATE TABLE IF NOT EXISTS verdicts (id INTEGER PRIMARY KEY, request_id TEXT, words TEXT, verdict TEXT)"
        )
    app = FastAPI()

    @app.post("/api/challenges")
    async def judge(body: Challenge) -> dict[str, Any]:
        typed = body.words.replace(",", " ").split() if isinstance(body.words, str) else body.words
        checked = [word.upper() for word in typed]
        verdict = "acceptable" if all(word in words for word in checked) else "unacceptable"
        if connection is not None:
            connection.execute("BEGIN")
            connection.execute(
                "INSERT INTO verdicts (request_id, words, verdict) VALUES (?, ?, ?)",
                (body.request_id, json.dumps(checked), verdict),
            )
            connection.execute("COMMIT")
        return {"verdict": verdict, "words": checked, "word_count": len(checked)}

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("port", type=int)
    parser.add_argument("--durable", type=Path, metavar="DATA_DIR", help="keep a log in this folder")
    args = parser.parse_args()
    uvicorn.run(build(args.durable), host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
