"""wordjudge: challenge adjudication for word-game tournaments."""

__version__ = "0.6.0"
