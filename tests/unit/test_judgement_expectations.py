"""What the user expects (gpuctl.core.verify.expectations): `--expect-nodes`, `--expect-gpus` and
`--toleration` parsed as the flags document them, each refusal with the flag, the value and a hint,
and the expected count each node is judged by."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuctl.core.verify.expectations import (
    all_patterns,
    expected_globs,
    expected_gpus,
    is_expected,
    is_glob,
    matches,
    missing_node,
    parse_expectations,
    parse_toleration,
)
from gpuctl.core.verify.model import CheckStatus, Expectations, Toleration
from gpuctl.errors import ConfigError


def refusal(expect_nodes: str | None, expect_gpus: str | None) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_expectations(expect_nodes, expect_gpus)
    return caught.value


def test_globs_and_names() -> None:
    assert is_glob("gpu-*")
    assert is_glob("gpu-?")
    assert is_glob("gpu-[01]")
    assert not is_glob("gpu-0")
    assert matches("gpu-*", "gpu-12")
    assert not matches("gpu-*", "GPU-12")  # node names are lower case: the match is exact
    assert not matches("gpu-1", "gpu-12")


def test_nothing_expected() -> None:
    assert parse_expectations(None, None) == Expectations()
    assert parse_expectations("", "") == Expectations()


def test_expect_nodes_lists_names_and_globs() -> None:
    parsed = parse_expectations(" gpu-*, dgx-01 ,,", None)
    assert parsed == Expectations(node_patterns=("gpu-*", "dgx-01"))
    assert is_expected(parsed, "gpu-7")
    assert is_expected(parsed, "dgx-01")
    assert not is_expected(parsed, "dgx-02")
    assert expected_gpus(parsed, "gpu-7") is None


def test_expect_nodes_refusals_name_the_flag_and_the_value() -> None:
    empty = refusal(" , ", None)
    assert str(empty) == "--expect-nodes ' , ': names no node"
    assert empty.hint == "e.g. --expect-nodes 'gpu-*,dgx-01', or leave it out"
    upper = refusal("GPU-0", None)
    assert str(upper) == "--expect-nodes: 'GPU-0' is not a node name or glob"
    assert upper.hint == "use lower-case node names or globs, e.g. --expect-nodes 'gpu-*,dgx-01'"
    for bad in ("-gpu", "gpu-", "gpu_0", "gpu 0"):
        assert "is not a node name or glob" in str(refusal(bad, None)), bad
    for good in ("a", "gpu-0", "gpu.0", "a1", "gpu-[0-3]", "*", "?"):
        assert parse_expectations(good, None).node_patterns == (good,), good


def test_expect_gpus_one_count_for_every_node() -> None:
    parsed = parse_expectations(None, " 8 ")
    assert parsed == Expectations(gpus_default=8)
    assert expected_gpus(parsed, "anything") == 8
    assert not is_expected(parsed, "anything")
    assert parse_expectations(None, "0").gpus_default == 0


def test_expect_gpus_refuses_a_count_below_zero_or_not_a_number() -> None:
    for bad in ("-1", "eight", "8.0"):
        error = refusal(None, bad)
        assert str(error) == f"--expect-gpus: {bad!r} is not a GPU count (an integer >= 0)", bad
        assert error.hint == (
            "e.g. --expect-gpus 8 or --expect-gpus 'gpu-0=8,gpu-*=4' or --expect-gpus @gpus.yaml"
        )


def test_expect_gpus_by_name_the_first_pattern_that_matches_wins() -> None:
    parsed = parse_expectations("dgx-01", "gpu-0=8, gpu-*=4,")
    assert parsed.gpus_by_pattern == (("gpu-0", 8), ("gpu-*", 4))
    assert parsed.node_patterns == ("dgx-01",)
    assert expected_gpus(parsed, "gpu-0") == 8
    assert expected_gpus(parsed, "gpu-1") == 4
    assert expected_gpus(parsed, "dgx-01") is None
    assert is_expected(parsed, "gpu-1")
    assert all_patterns(parsed) == ["dgx-01", "gpu-0", "gpu-*"]
    assert all_patterns(parse_expectations("gpu-0", "gpu-0=8")) == ["gpu-0"]


def test_expect_gpus_by_name_refusals() -> None:
    missing = refusal(None, "gpu-0=8,gpu-1")
    assert str(missing) == "--expect-gpus: 'gpu-1' is not NAME=COUNT"
    assert missing.hint == "e.g. --expect-gpus 'gpu-0=8,gpu-1=4'"
    count = refusal(None, "gpu-0=x")
    assert str(count) == "--expect-gpus: gpu-0: 'x' is not a GPU count (an integer >= 0)"
    name = refusal(None, "GPU=8")
    assert str(name) == "--expect-gpus: 'GPU' is not a node name or glob"


def test_expect_gpus_from_a_yaml_file(tmp_path: Path) -> None:
    mapping = tmp_path / "gpus.yaml"
    mapping.write_text("gpu-0: 8\n'gpu-*': 4\n", encoding="utf-8")
    parsed = parse_expectations(None, f"@{mapping}")
    assert parsed.gpus_by_pattern == (("gpu-0", 8), ("gpu-*", 4))
    two = tmp_path / "two.yaml"
    two.write_text("gpu-0,gpu-1: 8\n", encoding="utf-8")
    error = refusal(None, f"@{two}")
    assert str(error) == f"--expect-gpus @{two}: 'gpu-0,gpu-1' is not one node name or glob"
    assert error.hint == "e.g. --expect-gpus 'gpu-0=8'"
    negative = tmp_path / "negative.yaml"
    negative.write_text("gpu-0: -2\n", encoding="utf-8")
    assert str(refusal(None, f"@{negative}")) == (
        f"--expect-gpus @{negative}: gpu-0: '-2' is not a GPU count (an integer >= 0)"
    )


def test_expect_gpus_file_refusals(tmp_path: Path) -> None:
    listed = tmp_path / "list.yaml"
    listed.write_text("- gpu-0\n", encoding="utf-8")
    error = refusal(None, f"@{listed}")
    assert str(error) == f"--expect-gpus @{listed}: expected a mapping of node name → GPU count"
    assert error.hint == "the file is a mapping such as `gpu-0: 8`"
    broken = tmp_path / "broken.yaml"
    broken.write_text("gpu-0: [8\n", encoding="utf-8")
    invalid = refusal(None, f"@{broken}")
    assert str(invalid).startswith(f"--expect-gpus @{broken}: invalid YAML: ")
    assert "\n" not in str(invalid)
    assert invalid.hint == "the file is a mapping such as `gpu-0: 8`"
    absent = refusal(None, f"@{tmp_path / 'absent.yaml'}")
    assert str(absent).startswith(f"--expect-gpus @{tmp_path / 'absent.yaml'}")
    assert absent.hint


def test_toleration_forms_as_kubectl_taint_writes_them() -> None:
    assert parse_toleration("nvidia.com/gpu") == Toleration("nvidia.com/gpu", "Exists", "", "")
    assert parse_toleration("nvidia.com/gpu:NoSchedule") == Toleration(
        "nvidia.com/gpu", "Exists", "", "NoSchedule"
    )
    assert parse_toleration("dedicated=ml:NoExecute") == Toleration("dedicated", "Equal", "ml", "NoExecute")
    assert parse_toleration("dedicated=") == Toleration("dedicated", "Equal", "", "")


def test_toleration_refusals() -> None:
    with pytest.raises(ConfigError) as empty:
        parse_toleration("")
    assert str(empty.value) == "--toleration '': empty (`:EFFECT` tolerates every taint of that effect)"
    assert (
        empty.value.hint == "give KEY[=VALUE][:EFFECT], e.g. --toleration nvidia.com/gpu=present:NoSchedule"
    )
    with pytest.raises(ConfigError) as effect:
        parse_toleration("dedicated=ml:Sometimes")
    assert str(effect.value).startswith("--toleration 'dedicated=ml:Sometimes': ")
    assert (
        effect.value.hint == "give KEY[=VALUE][:EFFECT], e.g. --toleration nvidia.com/gpu=present:NoSchedule"
    )


def test_a_missing_node_fails_with_its_expected_count() -> None:
    expectations = parse_expectations("dgx-01", "dgx-*=8")
    result = missing_node("dgx-01", expectations)
    assert result.name == "dgx-01"
    assert result.gpus.expected == 8
    assert (result.gpus.capacity, result.gpus.allocatable, result.gpus.seen) == (0, 0, None)
    (check,) = result.checks
    assert check.id == "node.exists"
    assert check.status is CheckStatus.FAIL
    assert check.message == "expected node dgx-01 is not in the cluster"
    assert check.hint == (
        "`kubectl get nodes` — is the node joined, and is the name in --expect-nodes/--expect-gpus right?"
    )


def test_expected_globs_no_node_matches() -> None:
    assert expected_globs([]) == []
    assert expected_globs(["dgx-01"]) == []
    (check,) = expected_globs(["dgx-01", "gpu-*", "a-?"])
    assert check.id == "cluster.expected-nodes"
    assert check.status is CheckStatus.FAIL
    assert check.message == "no node matches gpu-*, a-?"
    assert check.hint == "`kubectl get nodes` and check the globs passed to --expect-nodes/--expect-gpus"


def test_expect_gpus_file_messages_name_the_flag_and_the_cause(tmp_path: Path) -> None:
    folder = refusal(None, f"@{tmp_path}")
    assert str(folder) == f"{tmp_path}: --expect-gpus file is a directory, not a regular file"
    absent = refusal(None, f"@{tmp_path / 'absent.yaml'}")
    assert str(absent) == f"--expect-gpus @{tmp_path / 'absent.yaml'}: No such file or directory"
    assert absent.hint == "pass an existing YAML file mapping node names or globs to GPU counts"
    broken = tmp_path / "broken.yaml"
    broken.write_text("gpu-0: [8\n", encoding="utf-8")
    assert (
        str(refusal(None, f"@{broken}"))
        == f"--expect-gpus @{broken}: invalid YAML: while parsing a flow sequence"
    )


def test_expect_gpus_file_with_a_byte_that_is_not_utf8_in_a_comment(tmp_path: Path) -> None:
    latin1 = tmp_path / "gpus.yaml"
    latin1.write_bytes(b"gpu-0: 8\n# caf\xe9\n")
    assert parse_expectations(None, f"@{latin1}").gpus_by_pattern == (("gpu-0", 8),)


def test_a_count_with_a_second_equals_sign_is_not_a_count() -> None:
    assert (
        str(refusal(None, "gpu-0=8=9")) == "--expect-gpus: gpu-0: '8=9' is not a GPU count (an integer >= 0)"
    )


def test_one_count_for_every_node_keeps_the_expected_nodes() -> None:
    parsed = parse_expectations("gpu-*", "8")
    assert parsed == Expectations(node_patterns=("gpu-*",), gpus_default=8)
