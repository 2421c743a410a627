"""etcd's gRPC failures become the Store's errors: what a member says while it restarts is Unavailable
(the leader loops retry it), what the caller got wrong is not."""

from __future__ import annotations

import grpc
import pytest

from loadmaster.store.etcd_errors import store_error
from loadmaster.store.interface import StoreError, UnavailableError


def _rpc_error(code: grpc.StatusCode, details: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details)


@pytest.mark.parametrize(
    ("code", "details"),
    [
        (grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses"),
        (grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded"),
        (grpc.StatusCode.CANCELLED, "Channel closed"),
        (grpc.StatusCode.UNKNOWN, "raft: stopped"),  # a proposal that met the member shutting down
    ],
)
def test_what_a_restarting_member_answers_is_unavailable(code: grpc.StatusCode, details: str) -> None:
    error = store_error(_rpc_error(code, details), "127.0.0.1:2379")
    assert isinstance(error, UnavailableError)
    assert str(error) == f"etcd 127.0.0.1:2379: {code.name}: {details}"


@pytest.mark.parametrize(
    ("code", "details"),
    [
        (grpc.StatusCode.UNKNOWN, "etcdserver: some other failure"),
        (grpc.StatusCode.INVALID_ARGUMENT, "etcdserver: key is not provided"),
        (grpc.StatusCode.PERMISSION_DENIED, "etcdserver: permission denied"),
    ],
)
def test_other_failures_are_plain_store_errors(code: grpc.StatusCode, details: str) -> None:
    error = store_error(_rpc_error(code, details), "127.0.0.1:2379")
    assert isinstance(error, StoreError) and not isinstance(error, UnavailableError)
