"""Suite-wide set-up: the etcd fixtures, and one hypothesis profile for every property test.

The profile makes a property test's verdict independent of how busy the machine is: no per-example
deadline and no "generation is too slow" health checks (a shared 2-core CI machine is sometimes ten
times slower than a laptop), and a failure prints the blob that replays it exactly
(``@reproduce_failure``). A test may still choose its own ``max_examples``; nothing else is set per file.
"""

from hypothesis import HealthCheck, settings

pytest_plugins = ["tests.etcd_fixtures"]

settings.register_profile(
    "loadmaster",
    deadline=None,
    # function_scoped_fixture: the HTTP property tests share one real server across examples on purpose
    # (starting one per example would take minutes); what they check does not depend on a fresh one.
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
        HealthCheck.function_scoped_fixture,
    ],
    print_blob=True,
)
settings.load_profile("loadmaster")
