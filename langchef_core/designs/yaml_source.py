"""Reading a design's YAML: PyYAML's node API under the YAML 1.2 core schema, with the
line of every value kept so each rejected field is reported where it stands.

Bounded: a design is small, so anchors and aliases (``&a`` / ``*a``, the means of a
"billion laughs" bomb that a few hundred bytes can make exhaust memory), nesting deeper
than :data:`MAX_DEPTH` and more than :data:`MAX_NODES` values are refused while the file is
composed, before anything is built from it."""

from __future__ import annotations

import re

import yaml

from .model import DesignError, nfc

# --------------------------------------------------------------------------------------
# YAML with line numbers
# --------------------------------------------------------------------------------------

MAX_DEPTH = 32
MAX_NODES = 20_000


class _DesignLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars, refusing aliases, anchors, deep nesting
    and huge documents (see the module docstring)."""

    file = "design"
    _depth = 0
    _nodes = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        line = event.start_mark.line + 1 if event.start_mark else None
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise DesignError("uses a YAML anchor or alias (&name / *name), which designs do not "
                              "allow", file=self.file, line=line,
                              hint="write the value out in full")
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise DesignError(f"has more than {MAX_NODES} values; a design is a short "
                              "pre-registration", file=self.file, line=line)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise DesignError(f"is nested more than {MAX_DEPTH} levels deep", file=self.file,
                                  line=line, hint="flatten the structure")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_REPLACED_TAGS = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                  "tag:yaml.org,2002:timestamp"}
_DesignLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag not in _REPLACED_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_DesignLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_DesignLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?[0-9]+$"), list("-+0123456789"))
_DesignLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
               r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."))


def _construct_decimal_int(loader, node):
    # YAML 1.1 reads "010" as octal 8; in YAML 1.2 core (and to a person) it is ten.
    return int(loader.construct_scalar(node).replace("_", ""), 10)


_DesignLoader.add_constructor("tag:yaml.org,2002:int", _construct_decimal_int)


def parse_yaml(text: str, file: str) -> tuple[object, dict]:
    """The document as plain values, plus the 1-based line of every key and list item."""
    loader = _DesignLoader(text)
    loader.file = file
    try:
        node = loader.get_single_node()
        if node is None:
            raise DesignError("the file is empty", file=file, line=1,
                              hint="write the design as a YAML mapping (see `langchef init`)")
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "not valid YAML"
        raise DesignError(f"not valid YAML ({problem})", file=file,
                          line=mark.line + 1 if mark else None,
                          hint="fix the indentation or quoting at that line") from None
    except DesignError:
        raise
    except (yaml.YAMLError, ValueError) as error:
        raise DesignError(f"not valid YAML ({error})", file=file) from None
    except (RecursionError, MemoryError):
        raise DesignError("is too deeply nested or too large to read", file=file,
                          hint="a design is a short YAML mapping (see `langchef init`)") from None
    finally:
        loader.dispose()
    lines: dict[tuple, int] = {(): node.start_mark.line + 1}
    _record_lines(node, (), lines, file)
    return normalise_text(data), lines


def _record_lines(node, path: tuple, lines: dict, file: str) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise DesignError("a key must be plain text", file=file, field=dotted_path(path),
                                  line=line)
            key = nfc(key_node.value)
            if key in seen and key != "<<":
                raise DesignError(f"key '{key}' appears twice (first on line {seen[key]})",
                                  file=file, field=dotted_path(path + (key,)), line=line,
                                  hint="keep one of them")
            seen[key] = line
            lines[path + (key,)] = line
            _record_lines(value_node, path + (key,), lines, file)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[path + (index,)] = item.start_mark.line + 1
            _record_lines(item, path + (index,), lines, file)


def normalise_text(value):
    if isinstance(value, dict):
        return {(nfc(key) if isinstance(key, str) else key): normalise_text(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [normalise_text(item) for item in value]
    if isinstance(value, str):
        return nfc(value)
    return value


def dotted_path(path: tuple) -> str | None:
    if not path:
        return None
    text = ""
    for part in path:
        # List items are counted from 1, as a person reading the file counts them.
        text += f"[{part + 1}]" if isinstance(part, int) else ("." if text else "") + str(part)
    return text
