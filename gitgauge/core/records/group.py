"""The base of every group of record fields."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class FieldGroup(BaseModel):
    """A group of a record's fields, each declared once with its docstring and composed into the
    records that have them (`Task`, `RunResult`, the drafts). A group is never validated on its
    own, so pydantic builds no validator for it (`defer_build`, saving start-up time); a record
    composing groups sets its own config, `defer_build=False` with it."""

    model_config = ConfigDict(defer_build=True)
