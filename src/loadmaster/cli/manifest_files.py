"""What ``-f`` names: a file, a directory (every ``.yaml``/``.yml``/``.json`` below it, in name order)
or ``-`` for stdin; read and validated on this side, so a bad manifest is shown without a round trip."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from loadmaster.cli.remote.client import EXIT_BAD_INPUT, CommandError
from loadmaster.manifests import Manifest, ManifestError, ManifestErrors, parse_manifests

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"


@dataclass(frozen=True, slots=True)
class Source:
    origin: str  # the path as the user will recognise it, or <stdin>
    text: str


def read_sources(paths: Sequence[str]) -> list[Source]:
    """The text of every file named (directories expanded); exit 2 for a path that cannot be read."""
    if not paths:
        raise CommandError("give -f FILE, -f DIR or -f - (stdin)", EXIT_BAD_INPUT)
    sources: list[Source] = []
    for given in paths:
        if given == STDIN:
            sources.append(Source("<stdin>", sys.stdin.read()))
            continue
        path = Path(given)
        files = _files_under(path) if path.is_dir() else [path]
        for file in files:
            try:
                sources.append(Source(str(file), file.read_text(encoding="utf-8")))
            except FileNotFoundError:
                raise CommandError(f"{file}: no such file or directory", EXIT_BAD_INPUT) from None
            except UnicodeDecodeError:
                raise CommandError(f"{file}: not UTF-8 text", EXIT_BAD_INPUT) from None
            except OSError as exc:
                raise CommandError(f"{file}: cannot read: {exc.strerror}", EXIT_BAD_INPUT) from None
    return sources


def _files_under(directory: Path) -> list[Path]:
    files = sorted(
        path
        for path in directory.rglob("*")
        if path.is_file()
        and path.suffix in MANIFEST_SUFFIXES
        and not any(part.startswith(".") for part in path.relative_to(directory).parts)
    )
    if not files:
        raise CommandError(f"{directory}: no {', '.join(MANIFEST_SUFFIXES)} files in it", EXIT_BAD_INPUT)
    return files


def validate_sources(sources: Sequence[Source]) -> list[Manifest]:
    """Every object of every source, validated; every problem of every file reported together (exit 2)."""
    manifests: list[Manifest] = []
    errors: list[ManifestError] = []
    seen: dict[str, str] = {}
    for source in sources:
        try:
            parsed = parse_manifests(source.text, source.origin)
        except ManifestErrors as exc:
            errors.extend(exc.errors)
            continue
        for manifest in parsed:
            if manifest.ref in seen and seen[manifest.ref] != source.origin:
                errors.append(
                    ManifestError(manifest.ref, "metadata.name", f"also defined in {seen[manifest.ref]}")
                )
            seen.setdefault(manifest.ref, source.origin)
            manifests.append(manifest)
    if errors:
        count = f"{len(errors)} problem{'s' if len(errors) != 1 else ''}"
        lines = [f"refused before sending ({count}; nothing was stored):"]
        lines.extend(f"  {error}" for error in errors)
        raise CommandError("\n".join(lines), EXIT_BAD_INPUT)
    if not manifests:
        names = ", ".join(source.origin for source in sources)
        raise CommandError(f"{names}: no objects to send", EXIT_BAD_INPUT)
    return manifests


def joined_yaml(sources: Sequence[Source]) -> str:
    """All sources as one YAML stream (for ``--no-validate``: the server then sees the text as written)."""
    return "\n---\n".join(source.text.rstrip("\n") for source in sources) + "\n"
