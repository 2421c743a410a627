"""The queues report as simulate --explain prints it: one indented row per queue."""

from __future__ import annotations

from loadmaster.cli.views.queue_report import queues_table
from tests.queues.trees import report_of_two_teams


def test_the_explain_table_has_one_indented_row_per_queue() -> None:
    table = queues_table(report_of_two_teams()).splitlines()
    assert table[0].split() == [
        "queue",
        "priority",
        "weight",
        "deserved",
        "fair",
        "share",
        "allocated",
        "limit",
        "dominant",
        "share",
    ]
    assert table[1].startswith("dept ")
    assert table[2].startswith("  team-a ")
    assert "memory 8Gi, gpu 2" in table[2]
    assert "cpu 1.5, gpu 5" in table[2]
    assert table[2].rstrip().endswith("1.00")
    assert "gpu 6" in table[1]
    assert table[3].startswith("  team-b ")
    assert " none " in table[3]
    assert "-" in table[3].split()  # team-b has no deserved: shown as "-"
