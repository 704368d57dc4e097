"""gpuctl_template: ansible.builtin.template's lookup, without a deep copy of every variable per file.

ansible-core's template lookup deep-copies all of the task's variables for each file it renders,
only to add a few keys of its own on top (template_path, ansible_managed, ...): a shallow copy
gives the template the same variables. In a no-op run the runtime role renders its drop-in and
config.toml on every host to compare them with the host's files, where the deep copies were about a
fifth of the comparison's CPU (docs/hosts.md, "Speed"). Options and results are the builtin's.
"""

from __future__ import annotations

from typing import Any

from ansible.plugins.lookup.template import LookupModule as TemplateLookup

DOCUMENTATION = """
name: gpuctl_template
short_description: ansible.builtin.template's lookup, sharing the task's variables with the template
description:
  - Renders each file found in the role's or play's templates search path, as
    ansible.builtin.template's lookup does, and returns the rendered texts.
  - The task's variables are copied shallowly for each file, not deeply.
options:
  _terms:
    description: The template files to render.
  template_vars:
    description: Variables the templates see besides the task's.
    type: dict
    default: {}
  variable_start_string:
    description: Where a print statement begins.
    type: str
    default: "{{"
  variable_end_string:
    description: Where a print statement ends.
    type: str
    default: "}}"
  comment_start_string:
    description: Where a comment begins.
    type: str
    default: "{#"
  comment_end_string:
    description: Where a comment ends.
    type: str
    default: "#}"
  trim_blocks:
    description: Whether the first newline after a block tag is removed.
    type: bool
    default: true
"""


class _ShallowlyCopied(dict):  # type: ignore[type-arg]
    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return dict(self)


class LookupModule(TemplateLookup):
    def run(self, terms: list[Any], variables: dict[str, Any] | None = None, **kwargs: Any) -> list[Any]:
        rendered: list[Any] = super().run(terms, variables=_ShallowlyCopied(variables or {}), **kwargs)
        return rendered
