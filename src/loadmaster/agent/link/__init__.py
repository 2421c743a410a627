"""How an agent speaks to the server: the REST client of docs/api.md, retries, waits a stop cuts short,
bounded fan-out, and the replica watch stream both agents follow."""
