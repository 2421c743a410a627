"""etcd:// URL parsing, the gRPC target it becomes, and where keys live in etcd (no server needed)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loadmaster.store.etcd_keyspace import EtcdKeyspace, byte_prefix_end
from loadmaster.store.etcd_url import EtcdEndpoint, grpc_target, parse_etcd_url


@pytest.mark.parametrize(
    ("url", "endpoints"),
    [
        pytest.param("etcd://127.0.0.1:2379", [("127.0.0.1", 2379)], id="one-ipv4-endpoint"),
        pytest.param("etcd://127.0.0.1", [("127.0.0.1", 2379)], id="port-defaults-to-2379"),
        pytest.param(
            "etcd://127.0.0.1:2379,127.0.0.1:22379",
            [("127.0.0.1", 2379), ("127.0.0.1", 22379)],
            id="two-endpoints-in-order",
        ),
        pytest.param("etcd://etcd-0.example:2379", [("etcd-0.example", 2379)], id="one-host-name"),
        pytest.param("etcd://[::1]:2379,[::2]", [("::1", 2379), ("::2", 2379)], id="ipv6-endpoints"),
    ],
)
def test_a_valid_url_gives_its_endpoints(url: str, endpoints: list[tuple[str, int]]) -> None:
    assert parse_etcd_url(url) == tuple(EtcdEndpoint(host, port) for host, port in endpoints)


@pytest.mark.parametrize(
    ("url", "named_part"),
    [
        pytest.param("127.0.0.1:2379", "missing scheme", id="no-scheme"),
        pytest.param("http://127.0.0.1:2379", "'http'", id="wrong-scheme"),
        pytest.param("etcd://", "no endpoints", id="no-endpoints"),
        pytest.param("etcd://127.0.0.1:2379,", "endpoint 2 is empty", id="trailing-comma"),
        pytest.param("etcd://127.0.0.1:http", "port 'http'", id="port-not-a-number"),
        pytest.param("etcd://127.0.0.1:70000", "port '70000'", id="port-out-of-range"),
        pytest.param("etcd://127.0.0.1:0", "port '0'", id="port-zero"),
        pytest.param("etcd://300.1.1.1:2379", "'300.1.1.1' is not IPv4", id="bad-ipv4"),
        pytest.param("etcd://under_score:2379", "'under_score' is not a valid host name", id="bad-host"),
        pytest.param("etcd://:2379", "has no host", id="empty-host"),
        pytest.param("etcd://[::1:2379", "without a closing", id="unclosed-bracket"),
        pytest.param("etcd://::1:2379", "[addr]:port", id="ipv6-without-brackets"),
        pytest.param("etcd://127.0.0.1:2379/loadmaster", "a path ('/loadmaster')", id="path"),
        pytest.param("etcd://user:pw@127.0.0.1:2379", "credentials", id="credentials"),
        pytest.param("etcd://127.0.0.1:2379?tls=1", "a query", id="query"),
        pytest.param("etcd://127.0.0.1:2379,127.0.0.1:2379", "listed twice", id="duplicate"),
        pytest.param("etcd://etcd-0:2379,etcd-1:2379", "etcd-0:2379, etcd-1:2379", id="names-in-a-list"),
        pytest.param("etcd://127.0.0.1:2379,[::1]:2379", "IPv4 and IPv6 mixed", id="mixed-families"),
    ],
)
def test_a_bad_url_is_refused_naming_the_bad_part(url: str, named_part: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_etcd_url(url)
    assert named_part in str(error.value)
    assert repr(url) in str(error.value)


@pytest.mark.parametrize(
    ("url", "target"),
    [
        pytest.param("etcd://127.0.0.1:2379", ("127.0.0.1", 2379), id="one-endpoint-as-is"),
        pytest.param("etcd://[::1]:2379", ("[::1]", 2379), id="one-ipv6-endpoint-bracketed"),
        pytest.param(
            "etcd://127.0.0.1:2379,127.0.0.2:22379", ("ipv4:127.0.0.1:2379,127.0.0.2", 22379), id="ipv4-list"
        ),
        pytest.param("etcd://[::1]:1,[::2]:2", ("ipv6:[::1]:1,[::2]", 2), id="ipv6-list"),
    ],
)
def test_endpoints_become_the_host_and_port_aetcd_joins_into_one_grpc_target(
    url: str, target: tuple[str, int]
) -> None:
    assert grpc_target(parse_etcd_url(url)) == target
    host, port = target
    assert f"{host}:{port}".endswith(str(parse_etcd_url(url)[-1]))


@pytest.mark.parametrize(
    ("prefix", "root"),
    [
        pytest.param("/loadmaster", b"/loadmaster/", id="plain"),
        pytest.param("/loadmaster/", b"/loadmaster/", id="trailing-slash"),
        pytest.param("/a/b", b"/a/b/", id="nested"),
        pytest.param("", b"", id="empty-is-all-of-etcd"),
        pytest.param("/", b"", id="slash-is-all-of-etcd"),
    ],
)
def test_the_store_prefix_becomes_a_root_ending_in_a_slash(prefix: str, root: bytes) -> None:
    assert EtcdKeyspace.from_prefix(prefix).root == root


@pytest.mark.parametrize(
    ("prefix", "message"),
    [
        pytest.param("loadmaster", "must start with '/'", id="relative"),
        pytest.param("/a//b", "empty path segment", id="empty-segment"),
    ],
)
def test_a_bad_store_prefix_is_refused(prefix: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        EtcdKeyspace.from_prefix(prefix)


def test_an_empty_list_prefix_covers_the_root_and_not_a_neighbouring_installation() -> None:
    start, end = EtcdKeyspace.from_prefix("/loadmaster").key_range("")
    assert (start, end) == (b"/loadmaster/", b"/loadmaster0")
    assert not start <= b"/loadmaster2/replicas/x" < end


# Valid keys are Unicode text without lone surrogates (check_key refuses those before any backend).
key_characters = st.characters(exclude_categories=["Cs"])
keys = st.text(key_characters, min_size=1, max_size=12)
roots = st.sampled_from(["", "/loadmaster", "/a/b"])


@given(root=roots, key=keys)
def test_every_key_maps_to_one_etcd_key_and_back(root: str, key: str) -> None:
    keyspace = EtcdKeyspace.from_prefix(root)
    assert keyspace.store_key(keyspace.etcd_key(key)) == key


short_texts = st.text(key_characters, max_size=4)


@given(root=roots, prefix=short_texts, suffix=short_texts, key=keys)
def test_a_key_is_in_a_prefix_range_exactly_when_it_starts_with_the_prefix(
    root: str, prefix: str, suffix: str, key: str
) -> None:
    keyspace = EtcdKeyspace.from_prefix(root)
    start, end = keyspace.key_range(prefix)

    def in_range(candidate: str) -> bool:
        etcd_key = keyspace.etcd_key(candidate)
        return start <= etcd_key and (end == b"\0" or etcd_key < end)

    if prefix + suffix:
        assert in_range(prefix + suffix)
    assert in_range(key) == key.startswith(prefix)


@given(prefix=st.binary(max_size=6), suffix=st.binary(max_size=6))
def test_the_byte_prefix_end_is_above_every_extension_of_the_prefix(prefix: bytes, suffix: bytes) -> None:
    end = byte_prefix_end(prefix)
    assert end == b"\0" or prefix + suffix < end
