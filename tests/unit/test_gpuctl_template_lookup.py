"""The container_runtime role's gpuctl_template lookup renders what ansible.builtin.template's does
(options, template_vars and the variables Ansible adds included), run by a real ansible-playbook on
this machine (connection local), and a template cannot change the task's variables through it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.local_ansible import run_playbook

REPO = Path(__file__).resolve().parents[2]
LOOKUPS = REPO / "playbooks" / "roles" / "container_runtime" / "lookup_plugins"

PLAYBOOK = """
- name: Render each template with both lookups
  hosts: localhost
  gather_facts: false
  vars:
    greeting: hello
    nested: {items: [1, 2, 3]}
    rendered:
      plain: "{{ lookup(plugin, 'plain.j2', template_vars={'extra': 'x'}) }}"
      syntax: "{{ lookup(plugin, 'syntax.j2', variable_start_string='[%', variable_end_string='%]') }}"
      trimmed: "{{ lookup(plugin, 'blocks.j2', trim_blocks=false) }}"
      changing: "{{ [lookup(plugin, 'changing.j2'), nested] }}"
      after: >-
        {{ [lookup(plugin, 'plain.j2', template_vars={'extra': 'x'}),
            extra is defined, template_path is defined] }}
  tasks:
    - name: Write what each lookup rendered
      ansible.builtin.copy:
        content: "{{ rendered | to_json }}"
        dest: "{{ playbook_dir }}/out.json"
        mode: "0600"
      vars:
        plugin: ansible.builtin.template
"""
TEMPLATES = {
    "plain.j2": "{{ greeting }} {{ nested['items'] | join(',') }} {{ template_path | basename }} {{ extra }}"
    " {{ ansible_managed is defined }}\n",
    "syntax.j2": "[% greeting %] {{ greeting }}\n",
    "blocks.j2": "{% if true %}\nkept\n{% endif %}\n",
    "changing.j2": "{{ nested['items'].append(4) or '' }}{{ nested.update({'added': 1}) or '' }}done\n",
}


def render_with(plugin: str, tmp_path: Path) -> dict[str, object]:
    (tmp_path / "templates").mkdir(parents=True)
    for name, text in TEMPLATES.items():
        (tmp_path / "templates" / name).write_text(text)
    playbook = tmp_path / "play.yml"
    playbook.write_text(PLAYBOOK.replace("plugin: ansible.builtin.template", f"plugin: {plugin}"))
    done = run_playbook(playbook, env={**os.environ, "ANSIBLE_LOOKUP_PLUGINS": str(LOOKUPS)})
    assert done.returncode == 0, done.stdout + done.stderr
    written: dict[str, object] = json.loads((tmp_path / "out.json").read_text())
    return written


def test_renders_what_the_builtin_lookup_renders(tmp_path: Path) -> None:
    builtin = render_with("ansible.builtin.template", tmp_path / "builtin")
    gpuctl = render_with("gpuctl_template", tmp_path / "gpuctl")

    assert gpuctl == builtin
    assert gpuctl == {
        "plain": "hello 1,2,3 plain.j2 x True\n",
        "syntax": "hello {{ greeting }}\n",
        "trimmed": "\nkept\n",
        "changing": ["done\n", {"items": [1, 2, 3]}],  # the template's changes stay in the template
        "after": ["hello 1,2,3 plain.j2 x True\n", False, False],  # nor do the lookup's own variables
    }
