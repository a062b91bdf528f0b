"""What every ``agurk`` command shares: the one-line-error parser, errors, shared options, outputs.

What the commands show while they work is in :mod:`agurk.monitors`.

The shared options (seed, JSON output, quiet, backend, the rules) are declared once, in :mod:`agents.command`
(below the application, so that a library call takes the options its command parses). Each command declares its
options as one dataclass (:mod:`agurk_env.options`) that builds on them; :func:`add_options` makes its argparse
options, and :func:`from_args` reads them back, typed.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import importlib
import os
import shutil
import sys
import textwrap
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias, TypeVar

from agents.command import PROG, in_command_order, rule_overrides
from agents.command import JsonFlag as JsonFlag  # the shared option sets, declared below the application
from agents.command import rules_label as rules_label
from agurk_env.atomic import atomic_write_text
from agurk_env.install import install
from agurk_env.options import Bounds, Option, OptionError, declared, split_list
from agurk_env.rules import OPTION_NAMES, Rules, RulesError

if TYPE_CHECKING:
    from rich.console import Console


HELP_COLUMNS = 100
"""The widest ``--help``, however wide the terminal."""
_T = TypeVar("_T")


class CliError(Exception):
    """A user error: reported as one ``agurk: error: ...`` line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit status 2), and that takes no abbreviated option."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False  # --match is not --matches
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print ``agurk: error: MESSAGE (see 'PROG --help')`` and exit 2."""
        one_line = " ".join(message.split())
        self.exit(2, f"{PROG}: error: {one_line} (see '{self.prog} --help')\n")


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Keep the hand-wrapped descriptions and examples where they fit the terminal; a little wider help column.

    The help is as wide as the terminal, :data:`HELP_COLUMNS` at most. A description or epilog with a
    line wider than that is wrapped again at its spaces: a paragraph's unindented lines are joined, and an
    indented line (an example, a list item with its deeper-indented continuation lines) is wrapped alone,
    its rest indented below it.
    """

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32, width=min(shutil.get_terminal_size().columns, HELP_COLUMNS) - 2)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        """``text`` after ``indent``, as written if every line fits ``width``, else wrapped again (see the class)."""
        lines = text.splitlines()
        if all(len(indent + line) <= width for line in lines):
            return "\n".join(indent + line for line in lines)
        blocks: list[list[str]] = []  # a paragraph's unindented lines, or an indented item with its continuation
        for line in lines:
            last = blocks[-1] if blocks and blocks[-1][0].strip() and not blocks[-1][-1].endswith("\\") else None
            depth, first = _depth(line), _depth(last[0]) if last else 0
            if last and line.strip() and (depth == first == 0 or depth > first > 0):
                last.append(line)
            else:
                blocks.append([line])
        out = []
        for block in blocks:
            depth = _depth(block[0])
            rest = _depth(block[1]) if len(block) > 1 else depth + 4 if depth else 0
            wrap = textwrap.TextWrapper(
                width, indent + " " * depth, indent + " " * rest, break_long_words=False, break_on_hyphens=False
            )
            out += wrap.wrap(" ".join(line.strip() for line in block)) or [""]
        return "\n".join(out)


def _depth(line: str) -> int:
    """The spaces ``line`` is indented by."""
    return len(line) - len(line.lstrip())


# ----------------------------------------------------------------------------- checks and rules


@functools.cache
def arg_type(kind: object, **bounds: Any) -> Callable[[str], object]:
    """An argparse ``type=``: the text as ``kind`` within ``bounds`` (``low=``, ``above=``, ...), checked at parse time.

    A ``list[...]`` kind reads ``A,B,C`` (:func:`agurk_env.options.split_list`). The options' one converter
    (:meth:`agurk_env.options.Option.convert`) reads the text; a bad value is argparse's one-line error naming the
    option (``argument --seed: must be an integer >= 0, not '-1'``), exit status 2. One kind and bounds, one
    converter: the ``--seed`` of a declared option set is :data:`SEED`.
    """
    value = Option("value", kind, None, bounds=Bounds(**bounds))
    is_list = typing.get_origin(kind) is list

    def convert(text: str) -> object:
        pieces = split_list(text) if is_list else [text]
        try:
            result = value.convert(pieces if is_list else text)
            numbers = zip(pieces, result if is_list else [result], strict=True)
            if any(type(number) is int and not _integer(piece) for piece, number in numbers):  # not a bool flag
                raise OptionError(text)  # 1e3 is a number in a config, never an integer option on the command line
        except OptionError:
            raise argparse.ArgumentTypeError(f"must be {value.what()}, not {text!r}") from None
        return result

    convert.__name__ = value.what()  # what a help text's %(type)s says: ``an integer >= 0``
    return convert


def _integer(text: str) -> bool:
    """Whether ``text`` is an integer as Python writes it (``1000``, ``-3``, ``1_000``; not ``1e3`` or ``1000.0``)."""
    try:
        int(text)
    except ValueError:
        return False
    return True


def add_options(
    p: argparse.ArgumentParser,
    cls: type,
    skip: Iterable[str] = (),
    notes: Mapping[str, str] | None = None,
    docs: Mapping[str, str] | None = None,
) -> None:
    """Add ``--NAME`` for every option of the dataclass ``cls`` (:func:`agurk_env.options.declared`) but ``skip``.

    Each has its declared metavar, default and converter (:func:`arg_type`); its help is the field's docstring (or
    this command's wording of a shared option in ``docs``), then its ``notes`` (what a docstring cannot hold, such as
    a list made at run time), then the allowed values and the default. A ``bool`` is a flag (``--no-NAME`` too when
    it defaults to true or None), a ``Literal`` offers its choices, a ``list[...]`` is repeated (``--set A --set B``)
    or one ``A,B`` value (``joined``), a ``positional`` option is given without its name, and an option without a
    default is required.
    They come in the order of the class's own fields, then its bases' (the command's options before the shared
    ones). :func:`from_args` reads them back.
    """
    for opt in in_command_order(cls):
        name = opt.name
        if name in skip:
            continue
        doc = (docs or {}).get(name, opt.doc) + (notes or {}).get(name, "")
        flag = f"--{name.replace('_', '-')}"
        names = [name] if opt.bounds.positional else [*filter(None, [opt.bounds.alias]), flag]
        if opt.type is bool or opt.type == bool | None:
            action = "store_true" if opt.default is False else argparse.BooleanOptionalAction
            p.add_argument(*names, action=action, default=opt.default, help=doc.replace("%", "%%"))
            continue
        repeated = typing.get_origin(opt.written) is list and not opt.bounds.joined
        kind = typing.get_args(opt.written)[0] if repeated else opt.written
        bounds = {
            f.name: getattr(opt.bounds, f.name)
            for f in dataclasses.fields(Bounds)
            if f.name not in ("metavar", "positional", "alias", "joined") and getattr(opt.bounds, f.name) != f.default
        }
        convert = arg_type(kind, **bounds)
        details = [] if kind is str or opt.choices else [convert.__name__]
        if opt.default not in (None, [], ""):
            shown = opt.default if isinstance(opt.default, list) else [opt.default]
            details.append(f"default: {','.join(_shown(opt, v) for v in shown)}")
        help_text = _with_details(doc, details)
        extra: dict[str, Any] = {"choices": opt.choices} if opt.choices else {}
        if opt.bounds.positional:
            extra["nargs"] = None if opt.required else "?"
        else:
            extra["required"] = opt.required
        p.add_argument(
            *names,
            metavar=opt.bounds.metavar or (None if opt.choices else name.upper()),
            type=convert,
            action="append" if repeated else "store",
            default=None if opt.required else opt.default,
            help=help_text.replace("%", "%%"),
            **extra,
        )


def _with_details(doc: str, details: list[str]) -> str:
    """``doc`` with ``details`` in brackets, inside those ``doc`` ends with (``(default: the budget's; ...)``)."""
    if not details:
        return doc
    if doc.endswith(")"):
        return f"{doc[:-1]}; {'; '.join(details)})"
    return f"{doc} ({'; '.join(details)})"


def _shown(opt: Option, value: object) -> str:
    """A default as a command line writes it: ``5`` for ``5.0``."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else opt.show(value)


def from_args(cls: type[_T], args: argparse.Namespace) -> _T:
    """The option set ``cls`` from the parsed options that :func:`add_options` added for it.

    :func:`agents.command.command_line` is its inverse: the command line that parses to an option set.
    """
    return cls(**{name: getattr(args, name) for name in declared(cls)})


Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""The subcommands object each command's ``add_parser`` registers itself on."""
SEED = arg_type(int, low=0)
"""``type=`` of every ``--seed``: an integer >= 0 (what ``numpy.random.default_rng`` takes)."""


def resolve_rules(preset: str | None, sets: Sequence[str] | None) -> Rules:
    """Resolve the preset (``standard`` when None) with every ``--set OPTION=VALUE`` on top."""
    return Rules.preset(preset or "standard", **rule_overrides(sets))


RULE_NOTES = {"set": " Options: " + ", ".join(OPTION_NAMES)}
"""What the help of ``--set`` adds to its declared doc: the names of the rule options."""


def warn_other_players(specs: Iterable[str], rules: Rules) -> None:
    """One warning line on stderr per ``ppo:`` checkpoint trained at other player counts than ``rules``' (it plays)."""
    for spec in dict.fromkeys(s.strip() for s in specs if s.strip().startswith("ppo:")):
        counts = trained_players(spec.removeprefix("ppo:").partition(";")[0])
        if counts and rules.players not in counts:
            trained = ", ".join(map(str, counts))
            print(
                f"{PROG}: warning: {spec} was trained at {trained} players, not {rules.players}: it plays a table "
                "it never saw",
                file=sys.stderr,
            )


def trained_players(path: str) -> list[int] | None:
    """The player counts the checkpoint at ``path`` was trained at (``None``: not recorded, or a rules mixture)."""
    from agents.policy import CheckpointError, load_checkpoint

    try:
        saved = load_checkpoint(path).get("config")
    except CheckpointError:
        return None
    if not isinstance(saved, dict) or (saved.get("mixture") or {}).get("families"):
        return None
    try:
        preset = Rules.preset(saved.get("preset", "standard"), **(saved.get("rules") or {}))
    except (RulesError, TypeError):
        return None
    return [int(p) for p in saved.get("players") or [preset.players]]


# ----------------------------------------------------------------------------- backends


@contextlib.contextmanager
def task_errors() -> Iterator[None]:
    """Report a task that failed every retry, or a backend that cannot be used, as a one-line error."""
    from agents.tasks import BackendError, TaskError

    try:
        yield
    except (BackendError, TaskError) as e:
        raise CliError(str(e)) from None


# ----------------------------------------------------------------------------- outputs


def json_default(value: object) -> object:
    """Serialize NumPy scalars and arrays that may reach a record."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def output_file(option: str, path_text: str | None) -> Path | None:
    """The file an output option names (``--json FILE``), checked before any work; None for none or ``-`` (stdout).

    Its folder must be writable and exist, or be one new folder in one that does (``runs/`` in a
    fresh clone: made, and said in one line); a typo deeper is refused at once (never a tree of new folders).
    """
    if path_text is None or path_text == "-":
        return None
    path = Path(path_text)
    folder = path.parent
    if not folder.is_dir() and folder.parent.is_dir() and not folder.exists():
        try:
            folder.mkdir()
        except OSError as e:
            reason = f"cannot make folder {str(folder)!r}: {e.strerror}"
            raise CliError(f"cannot write {option} {path_text!r}: {reason}") from None
        print(f"agurk: made the folder {str(folder)!r} for {option}", file=sys.stderr)
    if not folder.is_dir():
        raise CliError(f"cannot write {option} {path_text!r}: folder {str(folder)!r} does not exist")
    if path.is_dir():
        raise CliError(f"cannot write {option} {path_text!r}: it is a folder")
    if not os.access(folder, os.W_OK):
        raise CliError(f"cannot write {option} {path_text!r}: folder {str(folder)!r} is not writable")
    return path


def write_output(option: str, path: Path, text: str) -> None:
    """Write ``text`` to the file of ``option`` atomically: an interruption leaves the previous file whole."""
    try:
        atomic_write_text(path, text)
    except OSError as e:
        raise CliError(f"cannot write {option} {str(path)!r}: {e.strerror or e}") from None


def write_json(json_arg: str | None, path: Path | None, text: str) -> None:
    """``--json``'s ``text`` (ending in a newline) into its file ``path``, or on stdout for ``--json -``."""
    if path is not None:
        write_output("--json", path, text)
    elif json_arg == "-":
        print(text, end="")


def stderr_console() -> Console:
    """A rich console on stderr."""
    from rich.console import Console

    return Console(stderr=True)


def stdout_console() -> Console:
    """A rich console on stdout."""
    from rich.console import Console

    return Console()


RL_INSTALL = install("rl")
"""How to install the optional learning dependencies in a clone of the repository (the package is not on PyPI)."""
TRAIN_NEEDS = (("torch", "torch"), ("torch.utils.tensorboard", "tensorboard"))
"""What ``agurk train`` imports for every config: (module, the package that provides it)."""
SB3_NEEDS = (("stable_baselines3", "stable-baselines3"), ("sb3_contrib", "sb3-contrib"))
"""What ``algo: sb3`` (and ``agurk bench train``) imports besides."""


def rl_extra_error(command: str, package: str) -> CliError:
    """The one-line error of ``command`` when ``package`` of the rl extra is not installed."""
    return CliError(f"{command} needs {package}, from the rl extra: run {RL_INSTALL} in the root of the clone")


def require_rl(command: str, needs: tuple[tuple[str, str], ...]) -> None:
    """Raise :func:`rl_extra_error` for the first of ``needs`` (module, package) that cannot be imported."""
    for module, package in needs:
        try:
            importlib.import_module(module)
        except ImportError:
            raise rl_extra_error(command, package) from None
