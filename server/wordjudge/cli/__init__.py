"""The command line: the ``wordjudge`` command and its groups (click)."""
