"""One hypothesis profile for the whole suite (tests/conftest.py), so no property test's verdict
depends on how busy the machine is, and no test file quietly sets it back."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, settings

TESTS = Path(__file__).resolve().parent
# What only the profile may set: a per-test value replaces the profile's instead of adding to it.
PROFILE_ONLY = ("deadline=", "suppress_health_check=", "print_blob=")


def test_the_suite_runs_hypothesis_without_deadlines_or_slowness_health_checks() -> None:
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check
    assert HealthCheck.data_too_large in settings.default.suppress_health_check
    assert settings.default.print_blob is True


def test_no_test_file_overrides_what_the_profile_sets() -> None:
    # Only files that use hypothesis can override its profile (a replacement's ``deadline=`` is not one).
    overriding = [
        f"{path.relative_to(TESTS)}: {word}"
        for path in sorted(TESTS.rglob("*.py"))
        if path.name not in ("conftest.py", Path(__file__).name)
        and "hypothesis" in (text := path.read_text(encoding="utf-8"))
        for word in PROFILE_ONLY
        if word in text
    ]
    assert overriding == []
