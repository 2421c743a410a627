"""Where a loadmaster key lives in etcd: under one root, so several installations can share a cluster.

The root always ends with ``/`` and keys are appended verbatim: with the default root ``/loadmaster/``
the key ``/replicas/web-1`` is stored as ``/loadmaster//replicas/web-1``. The doubled slash is the
price of an exact mapping: any key (with or without a leading ``/``) maps to exactly one etcd key,
and ``list("")`` (the range ``/loadmaster/`` .. ``/loadmaster0``) never reaches into a neighbouring
installation such as ``/loadmaster2/``.
"""

from __future__ import annotations

from dataclasses import dataclass

# etcd reads range_end = b"\0" as "every key >= key".
_UNBOUNDED = b"\0"


def byte_prefix_end(prefix: bytes) -> bytes:
    """The smallest byte string greater than every string starting with ``prefix`` (``\\0``: unbounded).

    Trailing 0xff bytes cannot be incremented, so they are dropped and the byte before them is bumped.
    """
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return _UNBOUNDED
    return stripped[:-1] + bytes([stripped[-1] + 1])


@dataclass(frozen=True, slots=True)
class EtcdKeyspace:
    root: bytes  # b"" (the whole etcd keyspace) or a path ending with b"/"

    @classmethod
    def from_prefix(cls, prefix: str) -> EtcdKeyspace:
        """``/loadmaster`` or ``/loadmaster/`` give the root ``/loadmaster/``; ``""`` or ``/``: all etcd."""
        if not isinstance(prefix, str):
            raise TypeError(f"prefix: must be a str, got {type(prefix).__name__}")
        if prefix and not prefix.startswith("/"):
            raise ValueError(f"prefix: {prefix!r} must start with '/' (for example '/loadmaster')")
        name = prefix.strip("/")
        if "//" in prefix.rstrip("/"):
            raise ValueError(f"prefix: {prefix!r} must not contain an empty path segment ('//')")
        return cls(f"/{name}/".encode() if name else b"")

    def etcd_key(self, key: str) -> bytes:
        return self.root + key.encode("utf-8")

    def store_key(self, etcd_key: bytes) -> str:
        if not etcd_key.startswith(self.root):
            raise ValueError(f"etcd key {etcd_key!r} is outside the store root {self.root!r}")
        return etcd_key[len(self.root) :].decode("utf-8")

    def key_range(self, prefix: str) -> tuple[bytes, bytes]:
        """``(key, range_end)`` of an etcd range holding exactly the store keys that start with ``prefix``."""
        start = self.etcd_key(prefix)
        if not start:  # no root and an empty prefix: everything
            return _UNBOUNDED, _UNBOUNDED
        return start, byte_prefix_end(start)
