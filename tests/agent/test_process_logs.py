"""A replica's output.log: rotated by copy-and-truncate past its size, its last lines read back."""

from __future__ import annotations

from pathlib import Path

from loadmaster.agent.runtime.process_logs import rotate_if_large, tail_lines


def test_a_log_past_its_size_is_copied_aside_and_truncated_in_place(tmp_path: Path) -> None:
    log = tmp_path / "output.log"
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    with log.open("a") as writer:  # the child keeps appending to the same open file
        assert rotate_if_large(tmp_path, max_bytes=100) is True
        writer.write("after\n")
    assert log.read_text() == "after\n"
    assert (tmp_path / "output.log.1").read_text().splitlines()[-1] == "line 99"
    assert rotate_if_large(tmp_path, max_bytes=100) is False


def test_tail_gives_the_last_lines_or_all_or_none(tmp_path: Path) -> None:
    assert tail_lines(tmp_path, 3) == []
    (tmp_path / "output.log").write_text("a\nb\nc\nd\n")
    assert tail_lines(tmp_path, 2) == ["c", "d"]
    assert tail_lines(tmp_path, None) == ["a", "b", "c", "d"]
    assert tail_lines(tmp_path, 0) == []
