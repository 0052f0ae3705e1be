"""An agent config's `prompt:` template around the task prompt.

`{prompt}` is the task's prompt; the other fields say where the task comes from. `{{` and `}}` are
literal braces. The template is checked when the config loads (an unknown field, or no `{prompt}`,
is an error naming the key), so a typo never reaches an agent.
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # records imports this module for its validator
    from gitgauge.core.records import Task

PROMPT_FIELDS: dict[str, str] = {
    "prompt": "the task's prompt (required)",
    "taskId": "the task id",
    "base": "the full sha the agent starts at",
    "subject": "the fix commit's subject line",
    "testFiles": "the test files the fix touched, comma-separated",
}
"""Fields a `prompt:` template may use, with what each holds."""


def check_template(template: str) -> None:
    """Raise `ValueError` (a one-line reason) when `template` cannot be rendered."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as error:
        raise ValueError(f"{error}; write {{{{ and }}}} for literal braces") from None
    names: list[str] = []
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if field not in PROMPT_FIELDS:
            known = ", ".join(f"{{{name}}}" for name in PROMPT_FIELDS)
            shown = "{" + field + "}" if field else "{}"
            raise ValueError(
                f"unknown field {shown} (known: {known}; write {{{{ and }}}} for literal braces)"
            )
        if spec or conversion:
            raise ValueError(f"{{{field}}} takes no format spec or conversion")
        names.append(field)
    if "prompt" not in names:
        raise ValueError("the template must contain {prompt}, where the task's prompt goes")


def render(template: str | None, task: Task) -> str:
    """The prompt an agent receives: the task's prompt, inside `template` when there is one."""
    if template is None:
        return task.prompt
    return template.format_map(
        {
            "prompt": task.prompt,
            "taskId": task.id,
            "base": task.base,
            "subject": task.subject,
            "testFiles": ", ".join(task.testFiles),
        }
    )
