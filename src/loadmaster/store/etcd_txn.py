"""One Store transaction as one etcd ``Txn`` request, and the Store error for a refused one.

The request is ``if <fence compare> and <op compares> then <ops> else <read the compared keys>``:
etcd checks every compare before any op runs, so it is all-or-nothing. The ``else`` branch reads
the fence key and every compared key *in the same revision* as the failed compare, so the error
names what really failed (the fence first: a deposed leader is told so even if its revisions are
stale too), however the keys change a moment later.

A compare on ``expect_revision=0`` is ``create_revision == 0`` (the key does not exist); on ``n`` it
is ``mod_revision == n`` (a missing key has mod_revision 0, so it fails).

etcd caps the compares of one txn at ``--max-txn-ops`` (128) as well as its ops, and a nested txn
only gets what its parent left over, so nesting cannot lift the cap: a fenced txn can compare at
most 127 keys; ``txn_rules.validate_txn`` refuses more on every backend, so this never reaches etcd.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aetcd import rpc

from loadmaster.store.etcd_keyspace import EtcdKeyspace
from loadmaster.store.interface import (
    ConflictError,
    Fence,
    Op,
    Put,
    StoreError,
)
from loadmaster.store.txn_rules import check_fence


def compare_revision(etcd_key: bytes, expect_revision: int) -> Any:
    """``create(key) == 0`` for "must not exist", else ``mod(key) == expect_revision``."""
    if expect_revision == 0:
        return rpc.Compare(
            key=etcd_key, target=rpc.Compare.CREATE, result=rpc.Compare.EQUAL, create_revision=0
        )
    return rpc.Compare(
        key=etcd_key, target=rpc.Compare.MOD, result=rpc.Compare.EQUAL, mod_revision=expect_revision
    )


def compare_fence(keyspace: EtcdKeyspace, fence: Fence) -> Any:
    return rpc.Compare(
        key=keyspace.etcd_key(fence.key),
        target=rpc.Compare.CREATE,
        result=rpc.Compare.EQUAL,
        create_revision=fence.create_revision,
    )


def read_op(etcd_key: bytes) -> Any:
    return rpc.RequestOp(request_range=rpc.RangeRequest(key=etcd_key))


def write_op(keyspace: EtcdKeyspace, op: Op, lease_id: int = 0) -> Any:
    etcd_key = keyspace.etcd_key(op.key)
    if isinstance(op, Put):
        return rpc.RequestOp(request_put=rpc.PutRequest(key=etcd_key, value=op.value, lease=lease_id))
    return rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=etcd_key))


def build_txn_request(keyspace: EtcdKeyspace, ops: Sequence[Op], fence: Fence | None) -> Any:
    """The etcd TxnRequest for ``ops`` under ``fence`` (ops already validated by ``validate_txn``)."""
    compared = [op for op in ops if op.expect_revision is not None]
    compares = [compare_revision(keyspace.etcd_key(op.key), op.expect_revision or 0) for op in compared]
    reads = [read_op(keyspace.etcd_key(op.key)) for op in compared]
    if fence is not None:
        compares.insert(0, compare_fence(keyspace, fence))
        reads.insert(0, read_op(keyspace.etcd_key(fence.key)))
    return rpc.TxnRequest(compare=compares, success=[write_op(keyspace, op) for op in ops], failure=reads)


def _first_kv(response_op: Any) -> Any | None:
    kvs = response_op.response_range.kvs
    return kvs[0] if kvs else None


def _conflict(ops: Sequence[Op], failure_reads: Sequence[Any]) -> StoreError:
    """The ConflictError for the first op (in op order) whose compare failed, from the else-branch reads."""
    compared = [op for op in ops if op.expect_revision is not None]
    for op, read in zip(compared, failure_reads, strict=True):
        kv = _first_kv(read)
        actual = int(kv.mod_revision) if kv is not None else 0
        # expect 0 compares create_revision == 0, i.e. "absent"; any other value compares mod_revision.
        failed = kv is not None if op.expect_revision == 0 else actual != op.expect_revision
        if failed:
            return ConflictError(op.key, op.expect_revision, actual)
    # Unreachable unless etcd and this module disagree about what a compare means: say so loudly.
    return StoreError(f"etcd refused the txn but every compared key matches in its own read: {compared!r}")


def txn_revision(response: Any, ops: Sequence[Op], fence: Fence | None) -> int:
    """The store revision after an accepted txn; FencedError / ConflictError for a refused one."""
    if response.succeeded:
        return int(response.header.revision)
    reads = list(response.responses)
    if fence is not None:
        holder = _first_kv(reads.pop(0))
        check_fence(fence, int(holder.create_revision) if holder is not None else None)
    raise _conflict(ops, reads)
