"""Numbers a user gives gpuctl are checked in one place (gpuctl/bounds.py): every numeric flag of
every command goes through its Bound, and a value out of range is one error naming the flag or
variable and the range (exit 2)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gpuctl.bounds import CONCURRENCY, REQUEST_TIMEOUT, WAIT_TIMEOUT
from gpuctl.errors import ConfigError

# Numeric flags still parsed by Typer alone: their module is being changed by another piece of
# work; each goes to number_option(...) with its Bound there, and leaves this list.
NOT_YET_BOUNDED: set[tuple[str, str]] = set()


def _numeric_options() -> Iterator[tuple[str, str, Any]]:
    import typer.main

    from gpuctl.cli.main import app

    def walk(command: Any, path: str) -> Iterator[tuple[str, str, Any]]:
        for parameter in command.params:
            if parameter.type_descriptor.annotation in (int, float):
                yield path, parameter.name, parameter.type_descriptor.parameter_info
        for name, sub in (getattr(command, "commands", None) or {}).items():
            yield from walk(sub, f"{path} {name}".strip())

    return walk(typer.main.get_command(app), "")


def test_every_numeric_flag_is_checked_by_its_bound() -> None:
    unchecked = {
        (command, name) for command, name, info in _numeric_options() if info.parser is None
    } - NOT_YET_BOUNDED
    assert unchecked == set()


@pytest.mark.parametrize("raw", ["inf", "-inf", "nan", "1e400", "1e12", "0", "-1", "0x10", "60s", ""])
def test_out_of_range_or_not_a_number_is_refused_naming_the_range(raw: str) -> None:
    with pytest.raises(ConfigError) as refused:
        WAIT_TIMEOUT.parse(raw)
    assert refused.value.message == f"--timeout {raw}: must be a number of seconds from 1 to 86400"
    assert refused.value.hint == "e.g. --timeout 300"


@pytest.mark.parametrize("raw", ["2.5", "1e3", "32.0", "300"])
def test_a_whole_number_flag_takes_only_whole_numbers_in_range(raw: str) -> None:
    with pytest.raises(ConfigError, match=r"--concurrency .*: must be a whole number of requests at a time"):
        CONCURRENCY.count(raw)


def test_values_in_range_are_taken_as_typed() -> None:
    assert WAIT_TIMEOUT.parse(" 90.5 ") == 90.5
    assert CONCURRENCY.count("256") == 256
    assert REQUEST_TIMEOUT.parse("0.1") == 0.1


def test_a_variable_is_named_with_its_value_and_how_to_unset_it() -> None:
    with pytest.raises(ConfigError) as refused:
        REQUEST_TIMEOUT.parse("inf")
    assert (
        refused.value.message == "GPUCTL_REQUEST_TIMEOUT='inf': must be a number of seconds from 0.1 to 3600"
    )
    assert refused.value.hint == "unset GPUCTL_REQUEST_TIMEOUT or set it to e.g. 60"


@pytest.mark.parametrize("columns", ["0", "-5", "abc", "1e12", "100000000"])
def test_a_columns_setting_out_of_range_is_ignored_not_obeyed(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    """COLUMNS is the shell's, not gpuctl's: out of range it is ignored (COLUMNS=0 printed nothing)."""
    monkeypatch.setenv("COLUMNS", columns)
    log = tmp_path / "node.log"
    log.write_text("Failed to initialize NVML: Driver/library version mismatch\n", encoding="utf-8")
    result = cli("explain", log)
    assert "smi.driver-mismatch" in result.stdout, result.output
