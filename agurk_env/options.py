"""Typed options declared once: a dataclass field is an option's name, type, default, bounds and doc.

Every option set of the project (the rules, each agent kind's ``k=v;k=v`` options, each
training config section) is a dataclass. A field's type hint is the option's type
(``int``, ``float``, ``bool``, ``str``, a ``Literal`` of choices, ``X | None``, ``list``,
``dict``, a nested section), its default the default, :func:`option` adds bounds and the
word that stands for ``None`` (``tricks=auto``), and the docstring under the field is the
one-line doc. One converter (:meth:`Option.convert`) turns YAML values, ``KEY=VALUE``
text and ``k=v`` text into the type and checks the bounds; its errors are one line that
names the key. The help texts, ``agurk agents`` and the docs read :func:`declared`.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import itertools
import math
import textwrap
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

REQUIRED: Any = object()
"""The ``default`` of an :func:`option` that has none: it must be given (``--agents`` of ``agurk evaluate``)."""
TRUE_WORDS = ("true", "1", "yes", "on")
FALSE_WORDS = ("false", "0", "no", "off")
_T = TypeVar("_T")
_R = TypeVar("_R")


class OptionError(ValueError):
    """A bad option name or value (one-line message naming the key)."""


@dataclass(frozen=True)
class Bounds:
    """What :func:`option` adds to a field beyond its type and default."""

    low: float | None = None
    """Least value allowed (inclusive); for lists and mappings, of every item."""
    high: float | None = None
    """Greatest value allowed (inclusive)."""
    above: float | None = None
    """The value must be greater than this."""
    below: float | None = None
    """The value must be less than this."""
    none: str | None = None
    """The word that stands for ``None`` (``auto``, ``all``) in text and in the docs."""
    flag: tuple[str, str] = ("true", "false")
    """How a ``bool`` is written in the docs and messages (``("on", "off")``); every word of both is read."""
    renamed: tuple[tuple[str, str], ...] = ()
    """Old values and their new names (``(("fast", "ppo"),)``): still refused, the error names the new one."""
    metavar: str | None = None
    """What stands for the value in a usage line (``PRESET``, ``SPEC[,SPEC...]``); none: the name in capitals."""
    positional: bool = False
    """On a command line, the value is given without its ``--NAME`` (``agurk exploit AGENT``)."""
    alias: str | None = None
    """A short name on a command line besides ``--NAME`` (``-q``)."""
    joined: bool = False
    """On a command line, a list is one comma-separated value (``--worlds 16,64``), not a repeated option."""


def option(
    default: _T,
    *,
    low: float | None = None,
    high: float | None = None,
    above: float | None = None,
    below: float | None = None,
    none: str | None = None,
    flag: tuple[str, str] = ("true", "false"),
    renamed: Mapping[str, str] | None = None,
    metavar: str | None = None,
    positional: bool = False,
    alias: str | None = None,
    joined: bool = False,
) -> _T:
    """A dataclass field with bounds (a list or dict default is copied for every instance).

    ``default`` :data:`REQUIRED` makes an option without a default that must be given (a keyword-only field).
    """
    bounds = Bounds(
        low, high, above, below, none, flag, tuple((renamed or {}).items()), metavar, positional, alias, joined
    )
    if default is REQUIRED:
        return dataclasses.field(kw_only=True, metadata={"option": bounds})
    if isinstance(default, list | dict):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata={"option": bounds})
    return dataclasses.field(default=default, metadata={"option": bounds})


@dataclass(frozen=True)
class Option:
    """One declared option: its name, type, default, bounds and doc (read off a dataclass field)."""

    name: str
    type: Any
    default: Any
    doc: str = ""
    bounds: Bounds = Bounds()
    required: bool = False
    """The option has no default: it must be given."""
    _plain: Any = dataclasses.field(default=None, init=False, repr=False, compare=False)
    """The type when it is a plain one (``int``, ``float``, ``str``, ``bool``): a value of it needs its bounds only."""
    _choices: tuple[Any, ...] | None = dataclasses.field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        base = _base(self.type)
        object.__setattr__(self, "_plain", base if base in (int, float, str, bool) else None)
        if typing.get_origin(base) is typing.Literal:
            object.__setattr__(self, "_choices", typing.get_args(base))

    @property
    def written(self) -> Any:
        """The type a value is written as in text: without ``| None`` unless a word stands for ``None``."""
        return self.type if self.bounds.none else _base(self.type)

    @property
    def choices(self) -> tuple[Any, ...] | None:
        """The allowed values of a ``Literal`` option (``None`` for any other)."""
        base = _base(self.type)
        return typing.get_args(base) if typing.get_origin(base) is typing.Literal else None

    @property
    def kind(self) -> str:
        """The type in words, for help and docs: ``int``, ``float``, ``bool``, ``rollout|exact``, ``auto|int``."""
        words = _words(_base(self.type), self.bounds)[0]
        return f"{self.bounds.none}|{words}" if self.bounds.none and _optional(self.type) else words

    @property
    def shown_default(self) -> str:
        """The default as it is written in text (``auto`` for ``None``, ``on``/``off`` for flags)."""
        return self.show(self.default)

    def show(self, value: object) -> str:
        """``value`` as it is written in text."""
        if value is None:
            return self.bounds.none or "none"
        if isinstance(value, bool):
            return self.bounds.flag[0 if value else 1]
        return str(value)

    def what(self) -> str:
        """The allowed values in words, as an error message gives them (``an integer >= 1``)."""
        words = _words(_base(self.type), self.bounds)[1]
        if _optional(self.type):
            return f"{self.bounds.none or 'none'} or {words}"
        return words

    def convert(self, value: object, key: str | None = None) -> Any:
        """``value`` (text or a YAML value) as the option's type, in bounds; :class:`OptionError` names ``key``."""
        if value.__class__ is self._plain:  # already of the type and in bounds: the common case of a checked instance
            if isinstance(value, str | bool):
                return value
            if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
                if _within(value, self.bounds):
                    return value
        elif isinstance(value, str) and self._choices is not None and value in self._choices:
            return value
        key = key or self.name
        if _optional(self.type) and (value is None or (self.bounds.none is not None and value == self.bounds.none)):
            return None
        try:
            result = _convert(_base(self.type), value, key)
        except _Bad:
            now = dict(self.bounds.renamed).get(value) if isinstance(value, str) else None
            hint = f" ({value!r} is now {now!r})" if now else ""
            raise OptionError(f"{key} must be {self.what()}, not {value!r}{hint}") from None
        for number in _numbers(result):
            if not _within(number, self.bounds):
                raise OptionError(f"{key} must be {self.what()}, not {value!r}")
        return result


class _Bad(Exception):
    """A value that does not convert (reported by :meth:`Option.convert` with the key)."""


def _optional(hint: object) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in typing.get_args(hint)


def _base(hint: object) -> object:
    """The type without ``| None``."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return args[0]
    return hint


def _range(bounds: Bounds) -> str:
    """The bounds in words (`` 2..8``, `` >= 0``, `` in [0, 1)``), or nothing."""
    low = bounds.low if bounds.low is not None else bounds.above
    high = bounds.high if bounds.high is not None else bounds.below
    if low is not None and high is not None:
        if bounds.low is not None and bounds.high is not None:
            return f" {_num(low)}..{_num(high)}"
        left = "[" if bounds.low is not None else "("
        right = "]" if bounds.high is not None else ")"
        return f" in {left}{_num(low)}, {_num(high)}{right}"
    if low is not None:
        return f" >= {_num(low)}" if bounds.low is not None else f" > {_num(low)}"
    if high is not None:
        return f" <= {_num(high)}" if bounds.high is not None else f" < {_num(high)}"
    return ""


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _words(base: object, bounds: Bounds) -> tuple[str, str]:
    """The type in words: short (``int``, ``a|b``: help and docs) and as a message gives it (``an integer >= 1``)."""
    origin = typing.get_origin(base)
    if origin is typing.Literal:
        choices = [str(c) for c in typing.get_args(base)]
        return "|".join(choices), f"one of {', '.join(choices)}"
    if base is bool:
        return "|".join(bounds.flag), " or ".join(bounds.flag)
    if origin in (list, dict):
        short, long = _words(typing.get_args(base)[-1], bounds)
        container = "list of" if origin is list else "mapping to"
        return f"{container} {short}", f"a {container} {_plural(long)}"
    if dataclasses.is_dataclass(base):
        return "section", "a mapping of its keys"
    if base is Any:
        return "any", "any value"
    long_names: dict[object, str] = {int: "an integer", float: "a number", str: "a string"}
    long = long_names.get(base, str(base))
    return getattr(base, "__name__", str(base)), long + (_range(bounds) if base in (int, float) else "")


def _plural(words: str) -> str:
    """``an integer >= 1`` to ``integers >= 1`` (the items of a list or mapping)."""
    for one, many in (("an integer", "integers"), ("a number", "numbers"), ("a string", "strings")):
        if words.startswith(one):
            return many + words[len(one) :]
    if words == "any value":
        return "values of any type"
    return f"values, each {words}"


def _number(text: str) -> float:
    """A number from text (``3``, ``0.5``, ``3e-4``: YAML 1.1 leaves exponents without a dot a string)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise _Bad from None


def _convert(base: object, value: object, key: str) -> object:
    origin = typing.get_origin(base)
    if base is Any:
        return value
    if isinstance(base, type) and dataclasses.is_dataclass(base):
        if not isinstance(value, Mapping):
            raise _Bad
        return build(base, value, noun="config key", prefix=f"{key}.")
    if origin is typing.Literal:
        if value not in typing.get_args(base):
            raise _Bad
        return value
    if base is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in TRUE_WORDS + FALSE_WORDS:
            return value.strip().lower() in TRUE_WORDS
        raise _Bad
    if base in (int, float):
        if isinstance(value, str):
            value = _number(value.strip())
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise _Bad
        if base is int:
            if int(value) != value:
                raise _Bad
            return int(value)
        return float(value)
    if base is str:
        if not isinstance(value, str):
            raise _Bad
        return value
    if origin is list:
        (item,) = typing.get_args(base)
        items = value if isinstance(value, list) else [value]
        return [_convert(item, v, f"{key}[{i}]") for i, v in enumerate(items)]
    if origin is dict:
        _, item = typing.get_args(base)
        if not isinstance(value, Mapping):
            raise _Bad
        return {str(k): _convert(item, v, f"{key}.{k}") for k, v in value.items()}
    raise _Bad  # pragma: no cover - a type no option set declares


def _numbers(value: object) -> Iterable[float]:
    """The numbers the bounds apply to: the value, or every item of a list or mapping."""
    if isinstance(value, bool):
        return ()
    if isinstance(value, int | float):
        return (value,)
    if isinstance(value, list):
        return [v for v in value if isinstance(v, int | float) and not isinstance(v, bool)]
    if isinstance(value, dict):
        return [v for v in value.values() if isinstance(v, int | float) and not isinstance(v, bool)]
    return ()


def _within(x: float, b: Bounds) -> bool:
    return (
        (b.low is None or x >= b.low)
        and (b.high is None or x <= b.high)
        and (b.above is None or x > b.above)
        and (b.below is None or x < b.below)
    )


def _cache_by_class(fn: Callable[[type], _R]) -> Callable[[type], _R]:
    """:func:`functools.cache` for a function of a class, typed as one (mypy takes no ``type[T]`` for ``Hashable``)."""
    return functools.cache(fn)


@functools.cache
def _field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of ``cls`` (read from its source, as CleanRL's ``tyro`` does), first paragraph."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for node, after in itertools.pairwise(body):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                text = str(after.value.value).strip().split("\n\n")[0]
                docs[node.target.id] = " ".join(text.split())
    return docs


@_cache_by_class
def declared(cls: type) -> dict[str, Option]:
    """Every option of the dataclass ``cls``, by name, in field order (a redeclared field keeps its base's doc)."""
    hints = typing.get_type_hints(cls)
    docs: dict[str, str] = {}
    for base in reversed(cls.__mro__):
        if dataclasses.is_dataclass(base):
            docs.update(_field_docs(base))
    out: dict[str, Option] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = None
        bounds = f.metadata.get("option", Bounds())
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        out[f.name] = Option(f.name, hints[f.name], default, docs.get(f.name, ""), bounds, required)
    return out


def unknown(key: str, names: Iterable[str], noun: str = "option") -> OptionError:
    """The one-line error of an unknown option ``key``, listing the known ones."""
    return OptionError(f"unknown {noun} {key!r}; {noun}s are: {', '.join(names)}")


def build(cls: type[_T], data: Mapping[str, object], noun: str = "option", prefix: str = "") -> _T:
    """An instance of the option set ``cls`` from (partial) ``data``: every value converted; unknown keys refused."""
    options = declared(cls)
    for key in data:
        if key not in options:
            raise unknown(f"{prefix}{key}", options, noun)
    return cls(**{k: options[k].convert(v, f"{prefix}{k}") for k, v in data.items()})


def check(instance: object, error: type[Exception] = OptionError) -> None:
    """Convert every field of a dataclass instance in place (``__post_init__``): its type and bounds, one place."""
    for name, opt in declared(type(instance)).items():
        value = getattr(instance, name)
        if dataclasses.is_dataclass(value):
            continue  # a section checks itself when it is built
        try:
            converted = opt.convert(value)
        except OptionError as e:
            raise error(str(e)) from None
        if converted is not value:
            object.__setattr__(instance, name, converted)


def check_choice(name: str, value: object, allowed: Iterable[object]) -> None:
    """Raise :class:`OptionError` naming ``name`` unless ``value`` is one of ``allowed`` (a keyword's check)."""
    allowed = tuple(allowed)
    if value not in allowed:
        raise OptionError(f"{name} must be one of {', '.join(map(str, allowed))}, not {value!r}")


def split_assignment(item: str, example: str) -> tuple[str, str]:
    """``"KEY=VALUE"`` to ``(key, value)``, stripped; ``ValueError`` naming ``example`` when malformed.

    The one reader of ``--set`` items, for rule options and config keys alike.
    """
    key, sep, value = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise OptionError(f"--set needs {example}, not {item!r}")
    return key, value.strip()


def parse(cls: type[_T], text: str | None, sep: str = ";") -> _T:
    """The option set ``cls`` from ``k=v;k=v`` text (``worlds=32;rollout=shed``) over its defaults."""
    names = ", ".join(declared(cls))
    pairs: dict[str, str] = {}
    for item in text.split(sep) if text else []:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise OptionError(f"bad option {item!r}: write key=value, separated by {sep!r} (options: {names})")
        pairs[key.strip()] = value.strip()
    return build(cls, pairs)


def split_list(text: str) -> list[str]:
    """``"A,B,C"`` to its stripped items (the one splitter of ``SPEC,SPEC`` lists)."""
    return [s.strip() for s in text.split(",")]
