"""Talking to a server: connection options, the HTTP client, names checked before they become URLs."""
