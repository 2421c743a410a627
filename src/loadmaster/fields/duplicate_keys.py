"""Where a YAML text repeats a mapping key: the path of the second occurrence, and its line.

``yaml_rs`` refuses a duplicate key but names neither the mapping nor the line, so when it says
"duplicate mapping key", the text is composed again with PyYAML (nodes with positions, nothing
constructed) to find it. This runs only on that error path. Aliases are walked once each (a node
reached twice is skipped), so a document of nested aliases costs its size, not its expansion.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

DUPLICATE_KEY_ERROR = "duplicate mapping key"


@dataclass(frozen=True, slots=True)
class DuplicateKey:
    path: str  # e.g. "metadata.labels.tier" or "spec.services[0].replicas"
    key: str
    line: int  # 1-based, within the text
    first_line: int  # where the key was first given

    def message(self, line_offset: int = 0) -> str:
        """``the key "x" is given twice (lines 4 and 6); give it once`` (lines shifted by the offset of
        the text in its file)."""
        first, second = self.first_line + line_offset, self.line + line_offset
        where = f"line {first}" if first == second else f"lines {first} and {second}"
        return f'the key "{self.key}" is given twice ({where}); give it once'


def find_duplicate_key(text: str) -> DuplicateKey | None:
    """The first repeated key of ``text`` (one YAML document), or None (none, or not readable)."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    visited: set[int] = set()
    stack: list[tuple[yaml.Node, str]] = [] if root is None else [(root, "")]
    while stack:
        node, path = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            seen: dict[tuple[str, str], int] = {}
            children: list[tuple[yaml.Node, str]] = []
            for key, value in node.value:
                name = str(key.value) if isinstance(key, yaml.ScalarNode) else f"<{key.tag}>"
                child = f"{path}.{name}" if path else name
                line = key.start_mark.line + 1
                if isinstance(key, yaml.ScalarNode) and (key.tag, name) in seen:
                    return DuplicateKey(child, name, line, seen[(key.tag, name)])
                seen.setdefault((key.tag, name), line)
                children.append((value, child))
            stack.extend(reversed(children))  # depth first, in document order
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, f"{path}[{index}]") for index, item in reversed(list(enumerate(node.value))))
    return None
