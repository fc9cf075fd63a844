"""The base: what every layer shares (errors, messages, logging, the data folder, the clock, throttles, metrics)."""
