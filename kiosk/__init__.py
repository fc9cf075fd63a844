"""The web clients, shipped as package data of wordjudge: a folder per program (kiosk, runner, docket, console,
status), shared/ for what two programs or more load, and locales/ (the catalogues, which the server reads too)."""
