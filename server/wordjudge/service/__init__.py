"""The running service: settings, resources, processes, the server's status and its address."""
