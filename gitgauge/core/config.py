"""Load and validate `gitgauge.yaml` and agent configs.

Every problem becomes a one-line `ConfigError` naming the file and the key, and saying what to do:
YAML syntax (with its line), an empty file, a missing or mistyped key, the unknown keys (all of
them at once, each with its path and the closest known key as a suggestion).

`gitgauge.yaml`'s `tests.patterns` gain the folders the project's pytest configuration names in
its `testpaths` (`core.testpaths`): mining, protection and the additions rule read them there.
"""

from __future__ import annotations

import difflib
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from gitgauge.core.errors import ConfigError
from gitgauge.core.schema import AgentConfig, RepoConfig
from gitgauge.core.testpaths import testpaths_patterns

CONFIG_FILE = "gitgauge.yaml"
BUILT_IN_CONFIGS = ("gold", "noop")
"""Agent configs `-c` names without a file: the baselines take no settings. A file of that name
wins; the text is the shipped example's (`examples/gold.yaml`, `examples/noop.yaml`)."""

Model = TypeVar("Model", bound=BaseModel)


def load_repo_config(repo_root: Path) -> RepoConfig:
    path = repo_root / CONFIG_FILE
    if not path.exists():
        raise ConfigError(f"{path} not found: run `gitgauge init`, then set testCommand in it")
    config = parse_config_file(path, RepoConfig)
    added = [p for p in testpaths_patterns(repo_root) if p not in config.tests.patterns]
    if not added:
        return config
    tests = config.tests.model_copy(update={"patterns": [*config.tests.patterns, *added]})
    return config.model_copy(update={"tests": tests})


def load_agent_config(path: Path) -> AgentConfig:
    if not path.is_file():
        if path.as_posix() in BUILT_IN_CONFIGS and not path.exists():
            shipped = resources.files("gitgauge.examples").joinpath(f"{path.as_posix()}.yaml")
            return parse_config_text(
                shipped.read_text(encoding="utf-8"), AgentConfig, source=f"{path} (built in)"
            )
        raise ConfigError(
            f"{path}: agent config file not found (check the -c/--config path; "
            f"{' and '.join(f'-c {name}' for name in BUILT_IN_CONFIGS)} need no file)"
        )
    return _not_reserved(parse_config_file(path, AgentConfig), path)


def _not_reserved(config: AgentConfig, path: Path) -> AgentConfig:
    """`gold` and `noop` name the baselines in every report, comparison and calibration: a
    config file may take one of those names only when it is that baseline."""
    reserved = config.name.lower()
    if reserved in BUILT_IN_CONFIGS and (config.name, config.adapter) != (reserved, reserved):
        raise ConfigError(
            f"{path}: name: {config.name!r} is reserved for gitgauge's {reserved} baseline "
            f"(adapter: {reserved}); give this config another name"
        )
    return config


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader where a key written twice is an error: plain YAML keeps the last one silently,
    so a second `testCommand:` further down would quietly win over the first."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<:` may override merged keys
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # unhashable: the base class reports it
                continue
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
        return super().construct_mapping(node, deep=deep)


def parse_config_file(path: Path, model: type[Model]) -> Model:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; save it as UTF-8") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read ({error.strerror or error})") from None
    return parse_config_text(text, model, source=str(path))


def parse_config_text(text: str, model: type[Model], *, source: str) -> Model:
    """Validate YAML `text` against `model`; every failure is a `ConfigError`."""
    try:
        raw = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader: no arbitrary objects
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}" if mark is not None else "somewhere"
        problem = error.problem or error.context or "syntax error"
        raise ConfigError(f"{source}: invalid YAML at {where}: {problem}") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{source}: invalid YAML: {' '.join(str(error).split())}") from None
    except RecursionError:
        raise ConfigError(f"{source}: invalid YAML: nested too deeply") from None
    if raw is None:
        # The file `gitgauge init` writes is all comments: say so, it is the usual first error.
        what = "has only comments" if text.strip() else "is empty"
        raise ConfigError(f"{source}: the file {what}; {_required_hint(model)}")
    if not isinstance(raw, dict):
        raise ConfigError(
            f"{source}: expected a mapping of keys (like `{_first_required(model)}: ...`), "
            f"got {_yaml_type(raw)}"
        )
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(f"{source}: {_describe(error, model, raw)}") from None
    except (TypeError, ValueError, RecursionError) as error:  # unhashable keys and the like
        raise ConfigError(f"{source}: invalid configuration ({error})") from None


def _describe(error: ValidationError, model: type[BaseModel], raw: Any) -> str:
    """Every unknown key in the order the file has them (each with its path and the closest
    known key), then the first other problem, on one line. An unknown key is usually a typo of
    a missing one: a missing key that an unknown one's suggestion names is left out (the typo
    is the real cause)."""
    errors = error.errors()
    unknown = sorted(
        (item for item in errors if item["type"] == "extra_forbidden"),
        key=lambda item: _position(raw, item["loc"]),
    )
    suggested: set[tuple[str, ...]] = set()
    said: list[str] = []
    for item in unknown:
        loc = [str(part) for part in item["loc"]]
        text, close = _unknown_key(loc, model)
        said.append(text)
        if close is not None:
            suggested.add((*loc[:-1], close))
    rest = [
        item
        for item in errors
        if item["type"] != "extra_forbidden"
        and not (item["type"] == "missing" and tuple(map(str, item["loc"])) in suggested)
    ]
    parts: list[str] = []
    if said:
        noun = "unknown key" if len(said) == 1 else "unknown keys"
        parts.append(f"{noun} {', '.join(said)}")
    if rest or not parts:
        parts.append(_describe_one(rest[0] if rest else errors[0]))
    return "; ".join(parts)


def _position(raw: Any, loc: tuple[int | str, ...]) -> list[int]:
    """Where the key at `loc` stands in the file: its index among its mapping's keys, level by
    level (YAML mappings keep the file's order)."""
    found: list[int] = []
    for part in loc:
        keys = list(raw) if isinstance(raw, dict) else []
        if part not in keys:
            break
        found.append(keys.index(part))
        raw = raw[part]
    return found


def _unknown_key(loc: list[str], model: type[BaseModel]) -> tuple[str, str | None]:
    """`'timeouts.tset' (did you mean 'test'?)`, and the suggested key (None without one)."""
    key = ".".join(loc) or "(top level)"
    known = _known_keys(model, loc[:-1])
    close = difflib.get_close_matches(loc[-1], known, n=1, cutoff=0.5) if loc else []
    hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(known)}"
    return f"{key!r} ({hint})", close[0] if close else None


def _describe_one(first: ErrorDetails) -> str:
    """One validation error that is not an unknown key, as `key: what is wrong`."""
    loc = [str(part) for part in first["loc"]]
    key = ".".join(loc) or "(top level)"
    kind = first["type"]
    value = first.get("input")
    if kind == "missing":
        return f"missing required key {key!r}"
    if kind in {"int_type", "int_parsing", "int_from_float"}:
        return f"{key}: expected a whole number, got {_show(value)}"
    if kind == "greater_than":
        return f"{key}: must be greater than 0, got {_show(value)}"
    if kind == "string_type":
        return f"{key}: expected a string, got {_show(value)}"
    if kind == "string_too_short":
        return f"{key}: must not be empty"
    if kind in {"list_type"}:
        return f"{key}: expected a list, got {_show(value)}"
    if kind in {"model_type", "model_attributes_type", "dict_type"}:
        return f"{key}: expected a mapping of keys, got {_show(value)}"
    if kind == "value_error":
        message = str(first["msg"]).removeprefix("Value error, ")
        return f"{key}: {message}"
    return f"{key}: {first['msg']}"


def _known_keys(model: type[BaseModel], path: list[str]) -> list[str]:
    current: type[BaseModel] = model
    for part in path:
        field = current.model_fields.get(part)
        annotation = field.annotation if field is not None else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        current = annotation
    return list(current.model_fields)


def _required_hint(model: type[BaseModel]) -> str:
    required = [name for name, field in model.model_fields.items() if field.is_required()]
    return f"set {', '.join(required)}" if required else "add some keys"


def _first_required(model: type[BaseModel]) -> str:
    required = [name for name, field in model.model_fields.items() if field.is_required()]
    return required[0] if required else next(iter(model.model_fields))


def _yaml_type(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the text {_show(value)}"
    return f"{type(value).__name__} {_show(value)}"


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
