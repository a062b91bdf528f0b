"""What every command's options share, declared once below the application, and the way back to a command line.

A command's options are one dataclass (:mod:`agurk_env.options`) that builds on the option sets here
(``--seed``, ``--json``, ``-q``, ``--backend``, ``--rules`` and ``--set``). They live below the
application so that a library call (``skill.exploit.exploit(ExploitOptions(...))``) takes the very
options the command parses; :func:`command_line` writes a set of them back as the command that
gives them (the inverse of ``agurk.cli.common.from_args``), for a report's "reproduce this run" line.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agents.tasks.backend import BackendName
from agurk_env.options import Option, OptionError, check, declared, option, split_assignment
from agurk_env.rules import OPTION_NAMES, Rules, RulesError, RuleValue, parse_option

if TYPE_CHECKING:
    from agents.tasks import Backend

PROG = "agurk"
"""The command's name."""


@dataclass(frozen=True, kw_only=True)
class Seeded:
    """``--seed``: every command's seed (its ``docs`` say what it seeds)."""

    seed: int = option(0, low=0, metavar="S")
    """seed of the deals and agents"""


@dataclass(frozen=True, kw_only=True)
class JsonFlag:
    """``--json`` as a flag: print the results as one JSON object."""

    json: bool = False
    """print every figure as one JSON object"""


@dataclass(frozen=True, kw_only=True)
class JsonFile:
    """``--json FILE``: also write the results as JSON (``-``: on stdout)."""

    json: str | None = option(None, metavar="FILE")
    """also write the results as JSON; '-' prints it to stdout"""


@dataclass(frozen=True, kw_only=True)
class Quiet:
    """``-q/--quiet``: leave out the progress display (its ``docs`` say what else)."""

    quiet: bool = option(False, alias="-q")
    """no progress bar"""


@dataclass(frozen=True, kw_only=True)
class Backends:
    """``--backend`` and ``--ray-address``: where the tasks run (:mod:`agents.tasks`)."""

    backend: BackendName = "local"
    """where the tasks run: worker processes on this machine, or Ray (a local Ray instance with --workers CPUs, or
    the cluster of --ray-address; needs the ray extra). The numbers are the same on both"""
    ray_address: str | None = option(None, metavar="ADDRESS")
    """with --backend ray: connect to this running Ray cluster (auto, HOST:PORT or ray://HOST:10001) instead of
    starting a local instance; every node needs this package installed"""

    def tasks_backend(self) -> Backend:
        """The :class:`agents.tasks.Backend` of ``--backend`` and ``--ray-address`` (``OptionError`` if they clash)."""
        from agents.tasks import Backend

        if self.ray_address is not None and self.backend != "ray":
            raise OptionError("--ray-address needs --backend ray")
        return Backend(self.backend, self.ray_address)


@dataclass(frozen=True)
class TableOptions:
    """The rules of a table: a preset and rule options over it (every command's ``--rules`` and ``--set``)."""

    rules: str | None = option("standard", metavar="PRESET")
    """rule preset to start from; 'agurk rules' lists them"""
    set: list[str] = option([], metavar="OPTION=VALUE")
    """override one rule option on top of the preset; repeat for more (e.g. --set players=6 --set limit=21)."""

    def __post_init__(self) -> None:
        check(self)

    def preset(self) -> str:
        """The preset: ``--rules``, or ``standard`` where a command leaves it out (None)."""
        return self.rules or "standard"

    def resolve(self) -> Rules:
        """The rules: the preset with every ``--set OPTION=VALUE`` on top."""
        return Rules.preset(self.preset(), **rule_overrides(self.set))

    def label(self) -> str:
        """The rules for summaries: ``standard`` or ``danish21 + players=6 + limit=31``."""
        return rules_label(self.rules, self.set)


def worker_count(given: int | None, most: int | None = None) -> int:
    """``--workers``: as given, else the CPU count (at most ``most``), so a command's default fits the machine."""
    if given is not None:
        return given
    cpus = os.cpu_count() or 1
    return max(1, min(cpus, most)) if most else cpus


def rule_overrides(sets: Iterable[str] | None) -> dict[str, RuleValue]:
    """Every ``--set OPTION=VALUE`` as a typed rule option (the options' one converter; ``RulesError`` if bad)."""
    overrides: dict[str, RuleValue] = {}
    for item in sets or ():
        try:
            name, text = split_assignment(item, "OPTION=VALUE")
        except ValueError as e:
            raise RulesError(f"{e}; options are: {', '.join(OPTION_NAMES)}") from None
        overrides[name] = parse_option(name, text)
    return overrides


def rules_label(preset: str | None, sets: Iterable[str] | None) -> str:
    """Label rules for summaries: ``standard`` or ``danish21 + players=6 + limit=31``."""
    return " + ".join([preset or "standard", *(s.strip() for s in sets or ())])


def in_command_order(cls: type) -> list[Option]:
    """The options of the dataclass ``cls`` as its command line lists them: its own fields, then its bases'."""
    options = declared(cls)
    return [
        options[n]
        for n in dict.fromkeys(n for c in cls.__mro__ for n in vars(c).get("__annotations__", {}))
        if n in options
    ]


def command_line(command: str, options: object, skip: Iterable[str] = ()) -> str:
    """``agurk COMMAND ...``: the command line that parses to ``options`` (every option but ``skip`` off its default).

    The inverse of ``agurk.cli.common.from_args``: a positional option comes first, a flag is
    ``--NAME`` or ``--no-NAME``, a list is repeated or one ``A,B`` value as its option declares.
    """
    ordered = [opt for opt in in_command_order(type(options)) if opt.name not in skip]
    words = [PROG, command]
    for opt in sorted(ordered, key=lambda o: not o.bounds.positional):
        value = getattr(options, opt.name)
        if value != opt.default:
            words += _words(opt, value)
    return shlex.join(words)


def _words(opt: Option, value: object) -> list[str]:
    """``value`` of ``opt`` as command-line words."""
    flag = f"--{opt.name.replace('_', '-')}"
    if opt.bounds.positional:
        return [opt.show(value)]
    if isinstance(value, bool) and opt.type in (bool, bool | None):
        return [flag if value else f"--no-{flag[2:]}"]
    if isinstance(value, list) and opt.bounds.joined:
        return [flag, ",".join(map(opt.show, value))]
    if isinstance(value, list):
        return [word for item in value for word in (flag, opt.show(item))]
    return [flag, opt.show(value)]
