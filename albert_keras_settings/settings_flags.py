"""A job's flags, generated from its settings class: the flag, its type, default, choices and
help all come from the dataclass field (`setting()`), so each default is written once.

Here, beside the settings and free of TensorFlow, because both command lines use it: `albert-keras`
(`albert_keras_cli`) and the data writer's `python -m pipelines.pretraining_data`.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing

from albert_keras_settings.setting import Settings, resolve_settings


def add_settings_flags(
    parser: argparse.ArgumentParser,
    cls: type,
    *,
    skip: tuple[str, ...] = (),
    aliases: dict[str, tuple[str, ...]] | None = None,
) -> None:
    """Adds one `--NAME` flag per field of `cls` (but those made with `flag=False` or in `skip`).

    `bool` fields become switches (`--NAME`, or `--no-NAME` where the default is True); a
    field whose type allows `None` takes its type's values and defaults to `None`; a field
    without a default is a required flag.

    Args:
        parser: the command's parser.
        cls: the job's settings class (a dataclass of `setting()` fields).
        skip: field names the command gives another way.
        aliases: field name -> further flag names (e.g. `{"init_from": ("--model",)}`).

    Example:
    >>> from albert_keras_settings.setting import setting
    >>> @dataclasses.dataclass(frozen=True, kw_only=True)
    ... class S:
    ...     records: str = setting(help="glob of shards")
    ...     steps: int = setting(10, "optimizer steps")
    ...     eval_records: str | None = setting(None, "held-out shards")
    ...     dynamic: bool = setting(False, "re-mask")
    >>> parser = argparse.ArgumentParser()
    >>> add_settings_flags(parser, S)
    >>> vars(parser.parse_args(["--records", "r/*", "--steps", "3", "--dynamic"]))
    {'records': 'r/*', 'steps': 3, 'eval_records': None, 'dynamic': True}
    """
    aliases = aliases or {}
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        meta = field.metadata
        if not meta.get("flag", True) or field.name in skip:
            continue
        names = [f"--{field.name}", *aliases.get(field.name, ())]
        help_text = (meta.get("help") or "").replace("%", "%%")  # argparse formats help with %
        kwargs = {"help": help_text or None, "dest": field.name}
        if meta.get("metavar"):
            kwargs["metavar"] = meta["metavar"]
        value_type = _flag_type(hints[field.name], field.name, cls)
        has_default = field.default is not dataclasses.MISSING
        default = field.default if has_default else None
        if field.default_factory is not dataclasses.MISSING:
            default, has_default = field.default_factory(), True
        if value_type is bool:
            kwargs.pop("metavar", None)
            action = argparse.BooleanOptionalAction if default else "store_true"
            parser.add_argument(*names, action=action, default=bool(default), **kwargs)
            continue
        if meta.get("choices") is not None:
            kwargs["choices"] = meta["choices"]
        if has_default:
            kwargs["default"] = default
        else:
            kwargs["required"] = True
        if len(names) > 1:
            kwargs["action"] = _OneValueAcrossNames
        parser.add_argument(*names, type=value_type, **kwargs)


class _Named(str):
    """A flag's value that remembers which of its setting's names gave it."""

    flag = ""


class _TwoValues:
    """What a setting holds once two of its names gave two values: refused when the settings
    are made (`check_one_value_per_setting`)."""

    def __init__(self, first: _Named, flag: str, value: str):
        self.message = (
            f"{first.flag}={str(first)!r} and {flag}={value!r} name one setting: give one of them"
        )


class _OneValueAcrossNames(argparse.Action):
    """Stores the value of a setting that has several flag names (`--init_from` / `--model`),
    remembering which name gave it, so that two names given two values are refused when the
    settings are made (argparse alone lets the last one win silently). Nothing is added to
    the parsed namespace: its keys stay the settings' names."""

    def __call__(self, parser, namespace, values, option_string=None):
        previous = getattr(namespace, self.dest, None)
        if isinstance(previous, _TwoValues):
            return
        if isinstance(previous, _Named) and previous.flag != option_string and previous != values:
            setattr(namespace, self.dest, _TwoValues(previous, option_string, values))
            return
        named = _Named(values)
        named.flag = option_string
        setattr(namespace, self.dest, named)


def check_one_value_per_setting(args: argparse.Namespace) -> None:
    """Raises `ValueError` where two names of one setting were given different values.

    Example:
    >>> parser = argparse.ArgumentParser()
    >>> _ = parser.add_argument("--init_from", "--model", action=_OneValueAcrossNames)
    >>> check_one_value_per_setting(parser.parse_args(["--init_from", "a", "--model", "a"]))
    >>> check_one_value_per_setting(parser.parse_args(["--init_from", "a", "--model", "b"]))
    Traceback (most recent call last):
    ValueError: --init_from='a' and --model='b' name one setting: give one of them
    """
    for value in vars(args).values():
        if isinstance(value, _TwoValues):
            raise ValueError(value.message)  # noqa: TRY004 (the CLI reports ValueErrors)


def settings_from_args(cls: type[Settings], args: argparse.Namespace, **values) -> Settings:
    """The settings the parsed flags give, with `values` (settings a flag does not give, e.g.
    `config` parsed from `--config`) on top.

    Example:
    >>> from albert_keras_settings.setting import setting
    >>> @dataclasses.dataclass(frozen=True, kw_only=True)
    ... class S:
    ...     steps: int = setting(10, "optimizer steps")
    ...     config: dict = setting({}, "overrides", flag=False)
    >>> settings_from_args(S, argparse.Namespace(steps=3, verbose=0), config={"a": 1})
    S(steps=3, config={'a': 1})
    """
    check_one_value_per_setting(args)
    names = {field.name for field in dataclasses.fields(cls)}
    given = {
        name: str(value) if isinstance(value, _Named) else value  # a plain str in the settings
        for name, value in vars(args).items()
        if name in names
    }
    return resolve_settings(cls, None, {**given, **values})


def _flag_type(hint, name: str, cls: type):
    """The `type=` of a field's flag: its type, or its type less `None`."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        members = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(members) != 1:
            raise TypeError(f"{cls.__name__}.{name}: one type besides None, not {hint}")
        hint = members[0]
    if hint in (str, int, float, bool):
        return hint
    raise TypeError(f"{cls.__name__}.{name}: a flag needs str, int, float or bool, not {hint}")
