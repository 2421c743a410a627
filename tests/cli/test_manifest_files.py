"""``-f``: files, directories and stdin are read and validated before anything is sent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from loadmaster.cli.main import app
from loadmaster.cli.manifest_files import Source, joined_yaml, read_sources, validate_sources
from loadmaster.cli.remote.client import CommandError

QUEUE = "api_version: loadmaster/v1\nkind: Queue\nmetadata: {{name: {name}}}\nspec: {{priority: 1}}\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_directory_is_read_recursively_in_name_order_skipping_hidden_and_other_files(
    tmp_path: Path,
) -> None:
    write(tmp_path / "b.yaml", QUEUE.format(name="b"))
    write(tmp_path / "a" / "z.yml", QUEUE.format(name="z"))
    write(tmp_path / "c.json", '{"api_version": "loadmaster/v1", "kind": "Queue", "metadata": {"name": "c"}}')
    write(tmp_path / "notes.txt", "not a manifest")
    write(tmp_path / ".git" / "x.yaml", "ignored: [")
    sources = read_sources([str(tmp_path)])
    assert [Path(s.origin).relative_to(tmp_path).as_posix() for s in sources] == [
        "a/z.yml",
        "b.yaml",
        "c.json",
    ]
    assert [m.ref for m in validate_sources(sources)] == ["queues/z", "queues/b", "queues/c"]


def missing_file(directory: Path) -> Path:
    return directory / "missing.yaml"


def directory_without_manifests(directory: Path) -> Path:
    return write(directory / "empty" / "x.txt", "").parent


def binary_file(directory: Path) -> Path:
    path = directory / "bin.yaml"
    path.write_bytes(b"\xff\xfe")
    return path


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        pytest.param(missing_file, "missing.yaml: no such file or directory", id="missing-file"),
        pytest.param(directory_without_manifests, "no .yaml, .yml, .json files", id="empty-dir"),
        pytest.param(binary_file, "bin.yaml: not UTF-8 text", id="not-text"),
    ],
)
def test_a_path_that_cannot_be_read_exits_2_naming_it(
    setup: Callable[[Path], Path], message: str, tmp_path: Path
) -> None:
    with pytest.raises(CommandError) as failed:
        read_sources([str(setup(tmp_path))])
    assert message in failed.value.message
    assert failed.value.exit_code == 2


def test_every_problem_of_every_file_is_reported_together(tmp_path: Path) -> None:
    good = write(tmp_path / "good.yaml", QUEUE.format(name="q"))
    bad = write(
        tmp_path / "bad.yaml", "api_version: loadmaster/v1\nkind: Queue\nmetadata: {name: Bad_Name}\n"
    )
    worse = write(tmp_path / "worse.yaml", "kind: Nope\n")
    with pytest.raises(CommandError) as failed:
        validate_sources(read_sources([str(good), str(bad), str(worse)]))
    lines = failed.value.message.splitlines()
    assert lines[0].startswith("refused before sending (")
    assert any("metadata.name" in line and "Bad_Name" in line for line in lines)
    assert any("kind" in line and "Nope" in line for line in lines)
    assert failed.value.exit_code == 2


def test_the_same_object_in_two_files_is_refused(tmp_path: Path) -> None:
    one = write(tmp_path / "one.yaml", QUEUE.format(name="q"))
    two = write(tmp_path / "two.yaml", QUEUE.format(name="q"))
    with pytest.raises(CommandError, match=r"queues/q: metadata.name: also defined in .*one.yaml"):
        validate_sources(read_sources([str(one), str(two)]))


def test_files_with_no_objects_are_refused(tmp_path: Path) -> None:
    empty = write(tmp_path / "empty.yaml", "# nothing here\n---\n")
    with pytest.raises(CommandError, match="no objects to send"):
        validate_sources(read_sources([str(empty)]))


def test_joined_yaml_keeps_each_document_apart() -> None:
    text = joined_yaml([Source("a", QUEUE.format(name="a")), Source("b", QUEUE.format(name="b"))])
    assert text.count("\n---\n") == 1
    assert [m.ref for m in validate_sources([Source("joined", text)])] == ["queues/a", "queues/b"]


runner = CliRunner()


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        pytest.param("kind: Queue\nmetadata: {name: [q\n", "line 2, column", id="malformed-yaml"),
        pytest.param(
            QUEUE.format(name="q").replace("Queue", "Quux"), 'unknown kind "Quux"', id="unknown-kind"
        ),
        pytest.param(
            QUEUE.format(name="q").replace("priority", "priorty"),
            "spec.priorty: unknown field",
            id="unknown-field",
        ),
        pytest.param(
            QUEUE.format(name="q").replace("{priority: 1}", "{limit: {cpu: -2}}"),
            "spec.limit.cpu: negative quantity",
            id="negative-quantity",
        ),
        pytest.param(
            QUEUE.format(name="q").replace("{priority: 1}", "{limit: {memory: 3 apples}}"),
            'spec.limit.memory: bad quantity "3 apples"',
            id="unparseable-quantity",
        ),
        pytest.param(
            QUEUE.format(name="Team_A"), 'metadata.name: "Team_A" is not DNS-safe', id="not-dns-safe"
        ),
    ],
)
def test_apply_refuses_bad_manifests_before_connecting_with_the_field_path(
    document: str, expected: str
) -> None:
    # No server listens on this port: the refusal must come from the local check, before any request.
    result = runner.invoke(app, ["apply", "-f", "-", "--server", "http://127.0.0.1:9"], input=document)
    assert result.exit_code == 2, result.output
    assert expected in result.stderr
    assert "cannot reach" not in result.stderr
