"""Access: devices, pairing codes, TD accounts and sessions, limits and alerts."""
