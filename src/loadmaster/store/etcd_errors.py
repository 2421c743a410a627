"""gRPC failures from etcd, turned into the Store's errors.

etcd reports "cannot serve right now" in several ways: the channel has no connection (UNAVAILABLE),
the call ran out of time (DEADLINE_EXCEEDED, e.g. a SIGSTOPped member), the member lost its raft
leader or the proposal timed out (etcd sends those as UNAVAILABLE too), or the channel was closed
under the call (CANCELLED); a member that is shutting down may answer a proposal with raft's own
"raft: stopped", which etcd does not translate and gRPC sends as UNKNOWN. All of them are
UnavailableError: nothing the caller sent was wrong.
A timed-out write may still have been applied; a retried CAS write then fails with ConflictError,
which is why writes in loadmaster are compare-and-swap.
"""

from __future__ import annotations

import grpc

from loadmaster.store.interface import StoreError, TxnTooLargeError, UnavailableError

_UNAVAILABLE_CODES = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED}
)

_RAFT_STOPPED = "raft: stopped"  # raft.ErrStopped: a proposal reached a member while it stopped


class RevisionCompactedRpcError(StoreError):
    """A range read at a pinned revision that etcd has compacted meanwhile (the caller re-reads)."""


def store_error(error: grpc.aio.AioRpcError, where: str) -> StoreError:
    """The Store error for a failed etcd call; ``where`` names the endpoints for the message."""
    code = error.code()
    details = error.details() or ""
    message = f"etcd {where}: {code.name}: {details}"
    if code in _UNAVAILABLE_CODES or (code == grpc.StatusCode.UNKNOWN and details == _RAFT_STOPPED):
        return UnavailableError(message)
    if code == grpc.StatusCode.OUT_OF_RANGE and "compacted" in details:
        return RevisionCompactedRpcError(message)
    if code == grpc.StatusCode.INVALID_ARGUMENT and "too many operations" in details:
        return TxnTooLargeError(message)
    return StoreError(message)


def is_lease_not_found(error: grpc.aio.AioRpcError) -> bool:
    """etcd answers NOT_FOUND to a revoke of a lease that expired or was already revoked."""
    return error.code() == grpc.StatusCode.NOT_FOUND and "lease not found" in (error.details() or "")
