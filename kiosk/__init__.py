"""Static web clients (kiosk, runner, TD console), shipped as package data of wordjudge."""
