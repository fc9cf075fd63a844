"""The registry of known lexicon editions (data, not code), shipped as package data of wordjudge."""
