"""The audit log: its hash chain, its single writer, its reading and its witness."""
