"""Click's exception classes, wherever this Typer keeps them: recent Typer releases ship their own
copy of Click (typer._click), older ones use the click package."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typer._click.exceptions import ClickException, UsageError
else:
    try:
        from typer._click.exceptions import ClickException, UsageError
    except ImportError:  # Typer before it shipped its own Click
        from click.exceptions import ClickException, UsageError


def _no_args_is_help() -> Any:
    try:
        from typer._click import exceptions
    except ImportError:
        from click import exceptions  # type: ignore[no-redef]
    # Click 8.2+: `gpuctl` alone prints the help through this "error"; older Click exits 0 itself.
    return getattr(exceptions, "NoArgsIsHelpError", None)


NoArgsIsHelpError: Any = _no_args_is_help()

__all__ = ["ClickException", "NoArgsIsHelpError", "UsageError"]
