"""The event: its file, its changes on the record, what is served, the server's health and clock."""
