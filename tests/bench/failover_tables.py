"""The failover benchmark's tables in Markdown (tests/bench/failover.py; docs/failover.md): the active machine's death,
the standby's, and the old machine's return."""

from __future__ import annotations

from typing import Any

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
