"""A bumped driver branch and toolkit pin upgrade what is installed (issue 31's host half).

One node is bootstrapped on driver branch 570 and toolkit 1.16 (it starts from the older-pins node
image, tests/hosts/_image.py, which that bootstrap made from a bare node), then both pins move to the role
defaults (580, 1.20) as a user bumping them would: a check-mode run first says the host would
change and changes nothing; the real run replaces the held packages with the new versions, holds
them again and reports the reboot the new driver needs (the running module is never unloaded);
a second run changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from gpuctl.package_data import default_driver_branch, default_toolkit_version
from tests.hosts._image import OLDER_DRIVER_BRANCH, OLDER_PINS, OLDER_TOOLKIT, NodeImage
from tests.hosts.nodes import TestNode, down, up
from tests.hosts.test_pins import TOOLKIT_PACKAGES, Run, assert_prepared_the_bare_node, bootstrap, sh, version

pytestmark = [pytest.mark.hosts, pytest.mark.slow]
DRIVER_PACKAGE = "nvidia-open"
APT_PIN = "/etc/apt/preferences.d/gpuctl-nvidia-driver"


@dataclass(frozen=True)
class Bumped:
    """The runs after both pins moved: check mode, what it left installed, the real run, a re-run."""

    node: TestNode
    check: Run
    after_check: dict[str, str]
    real: Run
    again: Run


def installed(node: TestNode) -> dict[str, str]:
    return {package: version(node, package) for package in (DRIVER_PACKAGE, *TOOLKIT_PACKAGES)}


def driver_report(run: Run) -> dict[str, object]:
    (host,) = run.report["hosts"]
    assert host["driver"] is not None, run.report
    return dict(host["driver"])


@pytest.fixture(scope="module")
def older_node(nodes: list[TestNode]) -> tuple[TestNode, dict[str, str]]:
    """The node on the older pins, converged (a re-run changes nothing)."""
    node = nodes[0]
    rerun = bootstrap(node, *OLDER_PINS)
    assert (rerun.code, rerun.changed()) == (0, 0), rerun.report
    return node, installed(node)


@pytest.fixture(scope="module")
def nodes(older_pins_image: NodeImage, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[TestNode]]:
    """A node the bootstrap with the older pins prepared (the older-pins image)."""
    assert_prepared_the_bare_node(older_pins_image)
    inventory = tmp_path_factory.mktemp("upgrade-nodes") / "hosts.yml"
    started = up(nodes=1, gpus=2, inventory=inventory, image=older_pins_image.layer)
    yield started
    down(inventory)


@pytest.fixture(scope="module")
def bumped(older_node: tuple[TestNode, dict[str, str]]) -> Bumped:
    """The check run after the bump, what it left installed, the real run and the re-run."""
    node, _ = older_node
    check = bootstrap(node, options=("--check",))
    after_check = installed(node)
    real = bootstrap(node)
    return Bumped(node, check, after_check, real, bootstrap(node))


def test_the_older_pins_are_installed(older_node: tuple[TestNode, dict[str, str]]) -> None:
    _, versions = older_node
    assert versions[DRIVER_PACKAGE].startswith(f"{OLDER_DRIVER_BRANCH}.")
    assert all(versions[package] == OLDER_TOOLKIT for package in TOOLKIT_PACKAGES)


def test_check_mode_says_the_host_would_change_and_changes_nothing(
    older_node: tuple[TestNode, dict[str, str]], bumped: Bumped
) -> None:
    _, before = older_node
    check, after_check = bumped.check, bumped.after_check
    assert check.code == 0, check.report
    assert check.report["check"] is True
    assert check.changed() > 0
    assert driver_report(check)["reboot_required"] is True
    assert after_check == before


def test_the_bump_upgrades_and_holds_the_new_versions(
    bumped: Bumped,
) -> None:
    node, real = bumped.node, bumped.real
    assert real.code == 0, real.report
    versions = installed(node)
    assert versions[DRIVER_PACKAGE].startswith(f"{default_driver_branch()}.")
    assert all(versions[package] == default_toolkit_version() for package in TOOLKIT_PACKAGES), versions
    held = set(sh(node, "apt-mark showhold")[1].split())
    assert {DRIVER_PACKAGE, *TOOLKIT_PACKAGES} <= held
    assert f"Pin: version {default_driver_branch()}.*" in sh(node, f"cat {APT_PIN}")[1]


def test_the_upgrade_reports_the_reboot_and_a_rerun_changes_nothing(
    bumped: Bumped,
) -> None:
    real, again = bumped.real, bumped.again
    assert real.code == 0, real.report
    report = driver_report(real)
    assert report["reboot_required"] is True, report
    assert again.code == 0, again.report
    assert again.changed() == 0
    assert driver_report(again)["reboot_required"] is True  # until the host reboots
