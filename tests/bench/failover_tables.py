"""The failover benchmark's tables in Markdown (tests/bench/failover.py; docs/failover.md): the active machine's death,
the standby's, and the old machine's return."""

from __future__ import annotations

from typing import Any

from .headline import headline_lines, machine

KILL, HUNG, STANDBY_DEATH, RETURN = "kill -9", "hung disk", "standby's death", "kill -9, then the old machine returns"


def tables(rows: list[dict[str, Any]]) -> str:
    """The failover tables in Markdown: the active machine's death, the standby's, the old machine's return."""
    died = [r for r in rows if r["scenario"] != STANDBY_DEATH]
    lines = [
        "| failover | scenario | kiosks | promote (s) | first verdict after the death (s) | every kiosk back (s) "
        "| acknowledged | lost | recorded twice | recorded, not acknowledged | chain | docket heads "
        "| old primary's own records |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in died:
        old = "-" if r["old_primary_only"] is None else str(r["old_primary_only"])
        promote = "-" if r["promote_s"] is None else f"{r['promote_s']:.2f}"
        lines.append(
            f"| {r['way']} | {r['scenario']} | {r['kiosks']} | {promote} | {r['first_verdict_s']:.2f} "
            f"| {r['all_kiosks_s']:.2f} | {r['acknowledged']:,} | {r['lost']} | {r['twice']} "
            f"| {r['recorded_unacknowledged']} | {r['chain']} | {r['heads']} | {old} |"
        )
    standby = [r for r in rows if r["scenario"] == STANDBY_DEATH]
    if standby:
        lines += [
            "",
            "| the standby's death | kiosks | health says the hall is stopped (s) | warned before | verdicts "
            "acknowledged after the death, before `alone` (the last, s after it) | `standby alone` (s) | first "
            "verdict after `alone` (s) | every kiosk back (s) | health says alone (s after `alone`) | acknowledged | lost "
            "| recorded twice | recorded, not acknowledged | chain | docket heads |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in standby:
            last = "" if r["meanwhile_last_s"] is None else f" ({r['meanwhile_last_s']:.2f})"
            told = "NEVER" if r["told_alone"] is None else f"{r['told_alone']:.2f}"
            lines.append(
                f"| the TD's `standby alone` | {r['kiosks']} | {r['stopped_s']:.2f} | {', '.join(r['warned_before']) or '-'} "
                f"| {r['meanwhile']}{last} | {r['alone_s']:.2f} | {r['first_verdict_s']:.2f} "
                f"| {r['all_kiosks_s']:.2f} | {told} | {r['acknowledged']:,} "
                f"| {r['lost']} | {r['twice']} | {r['recorded_unacknowledged']} | {r['chain']} | {r['heads']} |"
            )
    back = [r for r in rows if r["scenario"] == RETURN]
    if back:
        lines += [
            "",
            "| the old machine's return | the returning server's health, in order | it says standby (s) "
            "| the active server's health: a standby follows, no serverless warning (s) | the active server's "
            "warnings meanwhile | acknowledged | lost | recorded twice | chain |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in back:
            lines.append(
                f"| {r['way']} | {' → '.join(r['return_states'])} | {r['return_standby_s']:.2f} "
                f"| {r['return_follows_s']:.2f} | {', '.join(r['warned']) or '-'} | {r['acknowledged']:,} "
                f"| {r['lost']} | {r['twice']} | {r['chain']} |"
            )
    return "\n".join(lines)


TITLE = "Failover of a hall of two machines (issue 21, item 2)"
MEASURES = "a hall of two machines when a machine dies or returns, over HTTPS"


def headline(deaths: list[tuple[str, str, float]], told: float | None, lost: int, twice: int) -> str:
    """The page's headline from its tables: the first verdict after the active machine's death, each (way,
    scenario, seconds) of a kill -9 or a hung disk; how soon the active server told of the standby's death (None:
    not run); the verdicts lost and recorded twice over every scenario."""
    said = []
    for scenario in (KILL, HUNG):
        times = [f"{seconds:.1f} s ({way.split(' (')[0]})" for way, done, seconds in deaths if done == scenario]
        if times:
            said.append(f"first verdict after a {scenario}: {', '.join(times)}")
    if told is not None:
        said.append(f"a standby's silent death told in {told:.1f} s")
    said.append(
        ("none lost" if not lost else f"{lost:,} lost")
        + (", none recorded twice" if not twice else f", {twice:,} recorded twice")
    )
    return "; ".join(said)


def page(rows: list[dict[str, Any]], loads: list[float]) -> str:
    """The page as the benchmark writes it: its title, headline lines (``loads``: the load averages taken during
    the run) and tables."""
    deaths = [(r["way"], r["scenario"], r["first_verdict_s"]) for r in rows if r["scenario"] in (KILL, HUNG)]
    told = next((r["stopped_s"] for r in rows if r["scenario"] == STANDBY_DEATH), None)
    said = headline(deaths, told, sum(r["lost"] for r in rows), sum(r["twice"] for r in rows))
    return f"# {TITLE}\n\n{headline_lines(MEASURES, said, machine(loads))}\n{tables(rows)}\n"
