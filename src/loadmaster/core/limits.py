"""Admission bounds: the largest numbers loadmaster accepts, each with the reason for its size.

Every amount is held as an int64 in canonical units (``core.resources``) and summed over nodes, tasks
and queues in int64 arrays. The per-object bounds below keep one amount at or below about 2**50
canonical units, so a sum over 2**13 (8192) objects at the bound still fits in an int64 (2**63) and
every amount is exact as a float64 (2**53) where a scorer divides. They are far above any real
machine or request: a value beyond them is a typo or an attack, and refusing it at the door (422 or
exit 2, naming the field) is what keeps one object from breaking every later scheduling cycle.

The server's own limits (``AdmissionLimits``: replicas and tasks per object, objects per apply) are
smaller and configurable (``loadmaster server --max-replicas/--max-objects-per-apply``): they bound
what one request can make the controllers create.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

# cpu: the largest machines have a few thousand cores; a million leaves room for any aggregate node.
MAX_CPU_CORES = 1_000_000
# memory-like sizes (memory, image and volume sizes), in bytes: 1 PiB, ~30x the largest single machine;
# 2**50 keeps 2**13 objects' worth of int64 headroom for sums (1 EiB would overflow at 8 nodes).
MAX_MEMORY_BYTES = 2**50
# every other resource (gpu, custom ones), in user units: 10**12 is 10**15 canonical milli-units.
MAX_OTHER_UNITS = 10**12
# Any integer field (priority, replicas, retries ...): exact in a float64 and in every JSON client.
MAX_INTEGER = 2**53
# Durations (grace periods, intervals, timeouts): ten years; ``now + duration`` must stay a datetime
# (year 9999), and no wait of the control plane is longer than a few hours.
MAX_DURATION_S = 10 * 365 * 24 * 3600
# Network throughput, in bits per second: 2**53 (9 Pbps) is a thousand times the fastest link.
MAX_BITS_PER_SECOND = 2**53
# Decimal exponents beyond this are refused before any arithmetic (no Decimal overflow, no
# 4300-digit int conversion): 10**30 is far above every bound here.
MAX_DECIMAL_EXPONENT = 30

# A Deployment service's replicas or a Job's tasks: 100,000 replicas already take ~400 MB of cache.
DEFAULT_MAX_REPLICAS = 100_000
# Objects in one apply or preview request (the 8 MiB body holds ~40,000 minimal objects).
DEFAULT_MAX_OBJECTS_PER_APPLY = 10_000


@dataclass(frozen=True, slots=True)
class AdmissionLimits:
    """What the server accepts in one object and one request (``ServerConfig`` sets them)."""

    max_replicas: int = DEFAULT_MAX_REPLICAS  # a service's ``replicas`` and a Job's ``tasks``
    max_objects_per_apply: int = DEFAULT_MAX_OBJECTS_PER_APPLY


# Values longer than this are shown shortened in messages (a 5000-digit number is not worth echoing).
SHORT_TEXT_MAX = 40


def short_text(value: object) -> str:
    """A value as an error message shows it: strings quoted, long ones cut, huge integers in
    scientific notation (``repr`` of an int with more than 4300 digits raises)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**SHORT_TEXT_MAX:
        return f"{Decimal(value):.3e}"
    text = f'"{value}"' if isinstance(value, str) else repr(value)
    return text if len(text) <= SHORT_TEXT_MAX else f"{text[: SHORT_TEXT_MAX - 4]}...{text[-1]}"
