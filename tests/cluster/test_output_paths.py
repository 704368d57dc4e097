"""Files gpuctl writes where the user says never replace a file the same command reads (the
kubeconfig, any file of KUBECONFIG, a CA file it names, the scenario, the inventory), whatever
path names it (a link, `../`, a hard link), and are never written through a link planted at the
target or beside it (gpuctl/output_paths.py). Each runs the real command against a real sim."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

SCENARIO = {"devicePlugin": "installed", "nodes": [{"name": "gpu-0", "gpus": 8}]}
VICTIM = "the victim's own file\n"
HOSTS = "all:\n  children:\n    gpu_nodes:\n      hosts:\n        n1: {ansible_host: 127.0.0.1}\n"


@pytest.fixture
def cluster(sim: Any) -> Any:
    return sim(SCENARIO)


def _verify(cli: Any, *args: str | Path) -> Any:
    return cli("verify", "--no-pods", *args)


def test_report_over_the_kubeconfig_is_refused_and_the_file_kept(cluster: Any, cli: Any) -> None:
    before = cluster.kubeconfig.read_bytes()
    result = _verify(cli, "--kubeconfig", cluster.kubeconfig, "--report", cluster.kubeconfig)
    assert result.exit_code == 2, result.output
    error = result.stderr.splitlines()[0]
    assert error.startswith(f"error: --report {cluster.kubeconfig}: is the kubeconfig {cluster.kubeconfig}")
    assert cluster.kubeconfig.read_bytes() == before


def test_any_name_of_a_file_of_kubeconfig_is_refused(
    cluster: Any, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """KUBECONFIG=a:b with --report naming b through a link, through `..`, or a hard link of b."""
    second = tmp_path / "b.kubeconfig"
    second.write_bytes(cluster.kubeconfig.read_bytes())
    (tmp_path / "link").symlink_to(second)
    os.link(second, tmp_path / "hard")
    (tmp_path / "sub").mkdir()
    monkeypatch.setenv("KUBECONFIG", f"{cluster.kubeconfig}{os.pathsep}{second}")
    for report in ("link", "sub/../b.kubeconfig", "hard"):
        result = _verify(cli, "--report", tmp_path / report)
        assert result.exit_code == 2, (report, result.output)
        assert f"is the kubeconfig {second}" in result.stderr.splitlines()[0], result.stderr
    assert second.read_bytes() == cluster.kubeconfig.read_bytes()


def test_report_over_a_certificate_file_the_kubeconfig_names_is_refused(
    cluster: Any, cli: Any, tmp_path: Path
) -> None:
    authority = tmp_path / "ca.crt"
    authority.write_bytes(cluster.server.certificate.certificate_pem)
    document = yaml.safe_load(cluster.kubeconfig.read_text())
    cluster_entry = document["clusters"][0]["cluster"]
    del cluster_entry["certificate-authority-data"]
    cluster_entry["certificate-authority"] = "ca.crt"  # relative to the kubeconfig, as kubectl reads it
    kubeconfig = tmp_path / "file-ca.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(document))
    result = _verify(cli, "--kubeconfig", kubeconfig, "--report", authority)
    assert result.exit_code == 2, result.output
    assert f"is the kubeconfig's certificate-authority file {authority}" in result.stderr
    assert authority.read_bytes() == cluster.server.certificate.certificate_pem
    assert _verify(cli, "--kubeconfig", kubeconfig, "--report", tmp_path / "ok.html").exit_code == 0


def test_report_replaces_a_link_planted_at_it_and_never_writes_through_one(
    cluster: Any, cli: Any, tmp_path: Path
) -> None:
    """A link at the target is replaced by the page (the file it points to is untouched); a link
    at the temporary name earlier versions used (`.NAME.gpuctl-tmp`) is not followed either."""
    folder = tmp_path / "shared"
    folder.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM)
    report = folder / "verify.html"
    report.symlink_to(victim)
    (folder / ".verify.html.gpuctl-tmp").symlink_to(victim)
    result = _verify(cli, "--kubeconfig", cluster.kubeconfig, "--report", report)
    assert result.exit_code == 0, result.output
    assert victim.read_text() == VICTIM
    assert not report.is_symlink()
    assert "<html" in report.read_text()
    assert sorted(path.name for path in folder.iterdir()) == [".verify.html.gpuctl-tmp", "verify.html"]


def test_report_is_readable_as_the_umask_allows(cluster: Any, cli: Any, tmp_path: Path) -> None:
    previous = os.umask(0o027)
    try:
        result = _verify(cli, "--kubeconfig", cluster.kubeconfig, "--report", tmp_path / "verify.html")
    finally:
        os.umask(previous)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "verify.html").stat().st_mode & 0o777 == 0o640


def test_render_out_replaces_planted_links_without_following_them(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "manifests"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM)
    first = cli("render", "--out", tmp_path / "first")
    assert first.exit_code == 0, first.output
    names = sorted(path.name for path in (tmp_path / "first").iterdir())
    for name in names:
        (out / name).symlink_to(victim)
    result = cli("render", "--out", out)
    assert result.exit_code == 0, result.output
    assert victim.read_text() == VICTIM
    assert sorted(path.name for path in out.iterdir()) == names
    assert not any(path.is_symlink() for path in out.iterdir())


def test_sim_up_never_writes_over_its_scenario_or_inventory(cli: Any, tmp_path: Path) -> None:
    """`sim up --scenario K.sim.json --kubeconfig K` deleted the scenario (the record's name);
    a kubeconfig path that is the scenario or the --hosts-from inventory would replace it."""
    scenario = tmp_path / "cluster.kubeconfig.sim.json"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(HOSTS)
    texts = {path: path.read_bytes() for path in (scenario, inventory)}
    cases = [
        (["--scenario", scenario, "--kubeconfig", tmp_path / "cluster.kubeconfig", "--detach"], scenario),
        (["--scenario", scenario, "--kubeconfig", scenario], scenario),
        (["--hosts-from", inventory, "--kubeconfig", tmp_path / "sub" / ".." / "hosts.yml"], inventory),
    ]
    for argv, victim in cases:
        result = cli("sim", "up", *argv)
        assert result.exit_code == 2, (argv, result.output)
        assert f"{victim} this command reads" in result.stderr.splitlines()[0], result.stderr
        assert {path: path.read_bytes() for path in texts} == texts
    assert not (tmp_path / "cluster.kubeconfig").exists()
