"""Jinja2 rendering of the Kubernetes manifests under templates/ (`*.yaml.j2`).

Templates ship inside the wheel as the `gpuctl.templates` package data (setup.py maps the
repository's top-level templates/ folder there). Every variable must be passed: StrictUndefined
turns a forgotten one into an error instead of an empty string in a manifest.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from gpuctl.errors import ConfigError
from gpuctl.package_data import TEMPLATE_SUFFIX, templates_dir

if TYPE_CHECKING:
    import jinja2


def template_names() -> list[str]:
    """Every renderable template file name (`*.yaml.j2`; `_*` partials left out), sorted."""
    names = (path.name for path in templates_dir().glob(f"*{TEMPLATE_SUFFIX}"))
    return sorted(name for name in names if not name.startswith("_"))


def _to_json(value: Any) -> str:
    # JSON is valid YAML: quoting arbitrary strings (images, keys) this way is always safe.
    # default=str makes an undefined variable raise StrictUndefined's error, naming it.
    return json.dumps(value, default=str)


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # YAML, not HTML: escaping would corrupt manifests
    )
    env.filters["tojson"] = _to_json
    return env


def render_template(name: str, **variables: Any) -> str:
    """Render one template; a missing variable or template is a ConfigError naming it."""
    import jinja2

    try:
        text = _environment().get_template(name).render(**variables)
    except jinja2.TemplateNotFound as error:
        raise ConfigError(
            f"template {name}: not found in {templates_dir()}",
            hint="reinstall gpuctl (`pip install .`) so that its templates ship with it",
        ) from error
    except jinja2.UndefinedError as error:
        raise ConfigError(
            f"template {name}: {error.message}",
            hint="pass every variable the template uses (see `gpuctl render --help`)",
        ) from error
    return text.rstrip("\n") + "\n"
