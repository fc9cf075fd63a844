"""Judging: adjudication, the challenge pipeline, final verdicts and what records show."""
