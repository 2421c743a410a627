"""Resource quantities: parsing user text into canonical integers, and back.

Every resource is held as an integer in a canonical unit so that the scheduler's arithmetic is exact
and the scoring formulas can use truncating integer division:

=========  ==================  =========================================
resource   canonical unit      examples
=========  ==================  =========================================
cpu        millicores          ``2`` -> 2000, ``"500m"`` -> 500, ``0.5`` -> 500
memory     bytes               ``"2Gi"`` -> 2147483648, ``"1.5G"`` -> 1500000000
gpu        milli-devices       ``1`` -> 1000, ``0.5`` -> 500 (one device = 1000)
others     milli-units         ``ingress_ip: 1`` -> 1000
=========  ==================  =========================================

Scaling every non-memory resource by 1000 keeps every ratio (and so every score) unchanged while
allowing fractions. Amounts finer than the unit round up, as Kubernetes does (``0.0001`` cpu -> 1m).
Amounts above the bounds of ``core.limits`` (1e6 cores, 1 PiB, 1e12 of anything else) are refused.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

from loadmaster.core.limits import (
    MAX_BITS_PER_SECOND,
    MAX_CPU_CORES,
    MAX_DECIMAL_EXPONENT,
    MAX_DURATION_S,
    MAX_MEMORY_BYTES,
    MAX_OTHER_UNITS,
    short_text,
)

CPU = "cpu"
MEMORY = "memory"
GPU = "gpu"
# Every resource except memory is stored in thousandths of its user-facing unit.
MILLI = 1000
GPU_DEVICE = MILLI  # one whole GPU device in canonical units
# A node's address pool (an agent's ``--address-pool``): a count, one per replica with ``address: true``.
ADDRESSES = "addresses"
ONE_ADDRESS = MILLI

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_QUANTITY = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z]{0,2})\s*$")
_RESOURCE_NAME = re.compile(r"^[a-z0-9]([a-z0-9_./-]*[a-z0-9])?$")


class QuantityError(ValueError):
    """A quantity that cannot be parsed; the message says what is wrong (the caller adds the path)."""


def scale_of(resource: str) -> int:
    """Canonical units per user-facing unit: 1 for memory (bytes), 1000 for everything else."""
    return 1 if resource == MEMORY else MILLI


def max_amount(resource: str) -> int:
    """The largest amount of ``resource`` accepted, in canonical units (``core.limits``)."""
    if resource == CPU:
        return MAX_CPU_CORES * MILLI
    if resource == MEMORY:
        return MAX_MEMORY_BYTES
    return MAX_OTHER_UNITS * MILLI


def limit_text(resource: str) -> str:
    """The bound of ``resource`` as a user writes it: ``1000000 cores``, ``1Pi bytes``."""
    if resource == CPU:
        return f"{MAX_CPU_CORES} cores"
    if resource == MEMORY:
        return "1Pi bytes"
    return f"{MAX_OTHER_UNITS}"


def _to_decimal(value: object) -> tuple[Decimal, str]:
    if isinstance(value, bool):
        raise QuantityError(f"bad quantity {value!r}: expected a number or a string like '500m' or '2Gi'")
    if isinstance(value, int):
        return Decimal(value), ""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"bad quantity {value!r}: not a finite number")
        return Decimal(repr(value)), ""
    if isinstance(value, str):
        match = _QUANTITY.match(value)
        if not match:
            raise QuantityError(f'bad quantity "{value}"')
        try:
            return Decimal(match.group(1)), match.group(2)
        except InvalidOperation as exc:  # pragma: no cover - the regex admits only valid decimals
            raise QuantityError(f'bad quantity "{value}"') from exc
    raise QuantityError(f"bad quantity {value!r}: expected a number or a string, got {type(value).__name__}")


def parse_quantity(resource: str, value: object) -> int:
    """Parse ``value`` for ``resource`` into canonical integer units (see the module table).

    Suffixes: ``m`` (thousandths; not for memory), ``Ki Mi Gi Ti Pi Ei`` (binary) and
    ``k M G T P E`` (decimal). Negative quantities are refused.
    """
    number, suffix = _to_decimal(value)
    if not number.is_zero():  # bound the exponent before any arithmetic can overflow
        if number.adjusted() > MAX_DECIMAL_EXPONENT and number > 0:
            raise _above_limit(resource, value)
        if number.adjusted() < -MAX_DECIMAL_EXPONENT:
            number = Decimal(1).copy_sign(number).scaleb(-MAX_DECIMAL_EXPONENT)  # still rounds up to 1
    if suffix == "m":
        if resource == MEMORY:
            raise QuantityError(f'bad quantity "{value}": memory cannot be given in milli-bytes')
        number = number / MILLI
    elif suffix in _BINARY:
        number = number * _BINARY[suffix]
    elif suffix in _DECIMAL:
        number = number * _DECIMAL[suffix]
    elif suffix:
        raise QuantityError(
            f'bad quantity "{value}": unknown unit "{suffix}" (use m, k, M, G, T, Ki, Mi, Gi or Ti)'
        )
    if number < 0:
        raise QuantityError(f"negative quantity {short_text(value)}")
    canonical = int((number * scale_of(resource)).to_integral_value(rounding="ROUND_CEILING"))
    if canonical > max_amount(resource):
        raise _above_limit(resource, value)
    return canonical


def _above_limit(resource: str, value: object) -> QuantityError:
    return QuantityError(f"{short_text(value)} is above the limit of {limit_text(resource)}")


def validate_resource_name(name: object) -> str:
    if not isinstance(name, str) or not _RESOURCE_NAME.match(name):
        raise QuantityError(
            f"bad resource name {name!r}: use lowercase letters, digits and '_', '-', '.', '/'"
        )
    return name


def parse_resources(value: object) -> dict[str, int]:
    """Parse a mapping ``{resource: quantity}``; errors name the resource, e.g. ``memory: bad quantity``."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise QuantityError(f"expected a mapping of resource to quantity, got {type(value).__name__}")
    parsed: dict[str, int] = {}
    for name, quantity in value.items():
        try:
            parsed[validate_resource_name(name)] = parse_quantity(name, quantity)
        except QuantityError as exc:
            raise QuantityError(f"{name}: {exc}") from None
    return parsed


def format_quantity(resource: str, amount: int) -> str:
    """Canonical units back to short human text: ``cpu 1500 -> "1.5"``, ``memory 2**31 -> "2Gi"``."""
    if resource == MEMORY:
        for suffix in ("Ti", "Gi", "Mi", "Ki"):
            unit = _BINARY[suffix]
            if amount >= unit and amount % (unit // 1024 if unit > 1024 else 1) == 0:
                shown = amount / unit
                return f"{shown:.4g}{suffix}" if shown != int(shown) else f"{int(shown)}{suffix}"
        return str(amount)
    if amount % MILLI == 0:
        return str(amount // MILLI)
    if resource == CPU:
        return f"{amount}m"
    return f"{amount / MILLI:g}"


def parse_bits_per_second(value: object) -> int:
    """``"120Mbps"`` -> 120_000_000 bits/s. Units: bps, Kbps, Mbps, Gbps (decimal); a number is bps."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise QuantityError(f"bad throughput {value!r}: not a finite number")
        if value < 0:
            raise QuantityError(f"negative throughput {short_text(value)}")
        bits = int(value)
    elif not isinstance(value, str):
        raise QuantityError(f"bad throughput {value!r}: expected e.g. '120Mbps'")
    else:
        match = re.match(r"^\s*(\d{1,30}(?:\.\d{1,30})?)\s*([KMG]?)bps\s*$", value)
        if not match:
            raise QuantityError(
                f"bad throughput {short_text(value)}: expected a number followed by bps, Kbps, Mbps or Gbps"
            )
        factor = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9}[match.group(2)]
        bits = int(Decimal(match.group(1)) * factor)
    if bits > MAX_BITS_PER_SECOND:
        raise QuantityError(
            f"{short_text(value)} is above the limit of {MAX_BITS_PER_SECOND} bits per second"
        )
    return bits


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")


def parse_duration_s(value: object) -> float:
    """``"60s"``, ``"5m"``, ``"1h30m"``, ``"500ms"`` or a plain number of seconds -> seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if isinstance(value, float) and math.isnan(value):
            raise QuantityError(f"bad duration {value!r}: not a number")
        if value < 0:
            raise QuantityError(f"negative duration {short_text(value)}")
        return _bounded_duration_s(value if value <= MAX_DURATION_S else math.inf, value)
    if not isinstance(value, str) or not value.strip():
        raise QuantityError(f"bad duration {value!r}: expected e.g. '30s', '5m' or '1h'")
    text = value.strip()
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise QuantityError(f'bad duration "{value}": expected e.g. "30s", "5m", "1h30m" or "500ms"')
    unit_s = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
    return _bounded_duration_s(sum(float(n) * unit_s[u] for n, u in parts), value)


def _bounded_duration_s(seconds: float, value: object) -> float:
    if not seconds <= MAX_DURATION_S:  # also refuses inf (a huge number written out)
        raise QuantityError(f"{short_text(value)} is above the limit of {MAX_DURATION_S} s (ten years)")
    return float(seconds)
