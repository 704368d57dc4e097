"""The compiled-template cache (playbooks/callback_plugins/gpuctl_template_cache.py), run by a real
ansible-playbook on this machine (connection local): a cached run renders what an uncached one does,
for templates that share their text but not how ansible-core compiles them."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path
from types import CodeType

import pytest

from tests import module_file
from tests.local_ansible import run_playbook

REPO = Path(__file__).resolve().parents[2]
PLUGINS = REPO / "playbooks" / "callback_plugins"
gpuctl_template_cache = module_file.load(PLUGINS / "gpuctl_template_cache.py")

# The same Jinja text twice over: from YAML (backslashes escaped inside expressions) and from a
# template file (not escaped); and in two template files, one of which overrides Jinja's syntax.
PLAYBOOK = r"""
- name: Render the same text compiled different ways
  hosts: localhost
  gather_facts: false
  vars:
    numbers: [1, 2, 3]
    backslash_yaml: "{{ 'a\\tb' }}"
    results:
      backslash_yaml: "{{ backslash_yaml }}"
      backslash_file: "{{ lookup('ansible.builtin.template', 'backslash.j2') }}"
      syntax_plain: "{{ lookup('ansible.builtin.template', 'syntax_plain.j2') }}"
      syntax_file: "{{ lookup('ansible.builtin.template', 'syntax.j2') }}"
      total: "{{ numbers | map('int') | sum }}"
      chosen: "{{ 'many' if numbers | length > 2 else 'few' }}"
  tasks:
    - name: Write what was rendered
      ansible.builtin.copy:
        content: "{{ results | to_nice_json }}"
        dest: "{{ playbook_dir }}/out.json"
        mode: "0600"
      when: numbers | length == 3
"""
TEMPLATES = {
    "backslash.j2": "{{ 'a\\tb' }}",
    "syntax_plain.j2": "[% 1 + 1 %] {{ 2 + 2 }}",
    "syntax.j2": "#jinja2:variable_start_string:'[%', variable_end_string:'%]'\n[% 1 + 1 %] {{ 2 + 2 }}",
}
EXPECTED = {
    "backslash_yaml": "a\\tb",  # a backslash and a t
    "backslash_file": "a\tb",  # a tab
    "syntax_plain": "[% 1 + 1 %] 4",
    "syntax_file": "2 {{ 2 + 2 }}",
    "total": 6,
    "chosen": "many",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "play").mkdir()
    (tmp_path / "play" / "site.yml").write_text(PLAYBOOK, encoding="utf-8")
    (tmp_path / "play" / "templates").mkdir()
    for name, text in TEMPLATES.items():
        (tmp_path / "play" / "templates" / name).write_text(text, encoding="utf-8")
    return tmp_path


def _run(project: Path, cache: Path | None, *extra: str) -> dict[str, object]:
    out = project / "play" / "out.json"
    out.unlink(missing_ok=True)
    env = {**os.environ, "ANSIBLE_CALLBACK_PLUGINS": str(PLUGINS), "ANSIBLE_LOCAL_TEMP": str(project / "tmp")}
    env.pop(gpuctl_template_cache.ENV_VAR, None)
    if cache is not None:
        env[gpuctl_template_cache.ENV_VAR] = str(cache)
    done = run_playbook(project / "play" / "site.yml", *extra, env=env, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(out.read_text(encoding="utf-8"))


def _entries(cache: Path) -> dict[str, int]:
    """Each entry of the cache's one namespace, with its modification time."""
    (namespace,) = [path for path in cache.iterdir() if path.is_dir()]
    return {entry.name: entry.stat().st_mtime_ns for entry in namespace.iterdir()}


def test_cached_runs_render_what_an_uncached_run_does(project: Path) -> None:
    cache = project / "cache"
    assert _run(project, None) == EXPECTED
    assert not cache.exists()  # without the variable the plugin does nothing

    assert _run(project, cache) == EXPECTED  # compiles and keeps
    kept = _entries(cache)
    assert len(kept) >= len(EXPECTED) + 1  # the results, the condition, both template files, ...
    assert all(isinstance(marshal.loads(path.read_bytes()), CodeType) for path in cache.glob("*/*"))
    assert oct((cache.stat().st_mode) & 0o777) == oct(0o700)

    assert _run(project, cache) == EXPECTED  # reads back
    assert _entries(cache) == kept  # nothing compiled again: no entry added or rewritten


def test_a_damaged_entry_is_compiled_again(project: Path) -> None:
    cache = project / "cache"
    _run(project, cache)
    for entry in cache.glob("*/*"):
        entry.write_bytes(entry.read_bytes()[:3])
    assert _run(project, cache) == EXPECTED
    assert all(isinstance(marshal.loads(path.read_bytes()), CodeType) for path in cache.glob("*/*"))


@pytest.mark.parametrize("mode", [0o770, 0o707])
def test_a_cache_others_can_write_to_is_not_read(project: Path, mode: int) -> None:
    cache = project / "cache"
    cache.mkdir(mode=mode)
    cache.chmod(mode)
    planted = cache / "planted"
    planted.mkdir()
    assert _run(project, cache) == EXPECTED
    assert [path.name for path in cache.iterdir()] == ["planted"]  # not read, not written, not cleaned


def test_only_the_newest_caches_of_other_versions_are_kept(project: Path) -> None:
    cache = project / "cache"
    others = [cache / (str(number) * 32) for number in range(gpuctl_template_cache.KEEP_NAMESPACES)]
    for age, other in enumerate(others):
        other.mkdir(parents=True, mode=0o700)
        (other / "entry").write_bytes(marshal.dumps(compile("1", "<x>", "eval")))
        os.utime(other, ns=(10**18 - age * 10**9, 10**18 - age * 10**9))  # others[0] the newest
    _run(project, cache)
    assert [other.exists() for other in others] == [True, True, True, False]
    assert len([path for path in cache.iterdir() if path.is_dir()]) == gpuctl_template_cache.KEEP_NAMESPACES


def test_a_cache_past_its_bound_starts_again(project: Path) -> None:
    cache = project / "cache"
    _run(project, cache)
    (namespace,) = [path for path in cache.iterdir() if path.is_dir()]
    for number in range(gpuctl_template_cache.MAX_ENTRIES + 1):
        (namespace / f"filler-{number}").write_bytes(b"")
    assert _run(project, cache) == EXPECTED
    names = list(_entries(cache))
    assert names
    assert not [name for name in names if name.startswith("filler-")]


def test_a_value_from_ansible_vault_is_not_kept(project: Path) -> None:
    cache = project / "cache"
    password = project / "vault-password"
    password.write_text("not-a-real-password\n", encoding="utf-8")
    vault = Path(sys.executable).with_name("ansible-vault")
    argv = [str(vault), "encrypt_string", "--vault-password-file", str(password), "--name", "secret_text",
            "s3cret-{{ numbers | length }}"]  # fmt: skip
    encrypted = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True).stdout
    (project / "play" / "vault.yml").write_text(encrypted, encoding="utf-8")
    playbook = project / "play" / "site.yml"
    playbook.write_text(
        PLAYBOOK.replace("  vars:\n", "  vars_files: [vault.yml]\n  vars:\n").replace(
            '      chosen: "', '      secret: "{{ secret_text }}"\n      chosen: "'
        ),
        encoding="utf-8",
    )
    results = _run(project, cache, "--vault-password-file", str(password))
    assert (
        results.pop("secret") == "s3cret-{{ numbers | length }}"
    )  # ansible-core renders no template from a vault
    assert results == EXPECTED
    assert not [path for path in cache.glob("*/*") if b"s3cret" in path.read_bytes()]
