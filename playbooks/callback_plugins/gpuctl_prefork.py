"""Make the worker processes ansible-playbook forks cheaper: load shared plugins once, freeze the heap.

ansible-playbook runs each task of each host in a worker process forked for that one task (11 per
host in a no-op host bootstrap, 31 when this plugin was written). A worker inherits what the parent
has loaded and loads the rest itself, so every worker repeated the same work, and its cost grows
with the number of hosts:

- importing the Jinja filter and test plugins the roles' templates call, the action plugins of
  their tasks and the ssh connection's plugins. This plugin loads them in the parent when the
  playbook starts, and every worker inherits them.
- a garbage collection in the worker walks the objects inherited from the parent, and so copies
  the memory pages that hold them (copy-on-write). Once the plugins are loaded, gc.freeze() moves
  the parent's objects (the playbooks, the inventory, the modules) out of the collector's reach,
  as Python's documentation advises before forking, and gc.set_threshold() makes young
  collections rarer in parent and workers alike. Frozen objects are still freed when their last
  reference goes; only reference cycles among them wait for the end of the run. The freeze is
  taken once: taken again before each task, it also kept the garbage cycles of every task until
  the end of the run, and measured no faster.

Measured in bench/host-speed-log.md. It changes the garbage collector of the process it runs in,
so it is opt-in: it sits in callback_plugins/ next to the playbooks but runs only where enabled
(ANSIBLE_CALLBACKS_ENABLED=gpuctl_prefork), which gpuctl's runner does for its own runs; a user's
own ansible-playbook run of these roles does without it. It writes nothing and changes no result;
if a step fails (another ansible-core version), the workers load what they need themselves.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Any

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
    name: gpuctl_prefork
    type: aggregate
    short_description: load shared plugins before Ansible forks its workers, then freeze the heap
    description:
      - Loads the Jinja filter and test plugins, the action plugins of gpuctl's roles and the ssh
        connection's plugins in ansible-playbook's own process when the playbook starts, so that
        the forked workers inherit them, then calls gc.freeze().
"""

# The action plugins behind the tasks of gpuctl's roles (a task with none runs "normal"), then
# the plugins every task over SSH uses.
# gpuctl_facts is found once a role that depends on gpuctl_probe is loaded, as the playbooks are by now.
ACTIONS = ("assert", "command", "copy", "debug", "gpuctl_facts", "group_by", "include_vars", "normal",
           "raw", "set_fact", "set_stats", "template")  # fmt: skip
CONNECTION = (("connection_loader", "ssh"), ("shell_loader", "sh"), ("become_loader", "sudo"))
# Young collections every 20,000 allocations instead of 700 (gpuctl's own CLI raises it too).
GC_THRESHOLD = (20_000, 10, 10)


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpuctl_prefork"
    CALLBACK_NEEDS_ENABLED = True  # never changes a user's own run's garbage collector

    def v2_playbook_on_start(self, _playbook: Any) -> None:
        from ansible.plugins import loader

        with contextlib.suppress(Exception):
            for jinja_loader in (loader.filter_loader, loader.test_loader):
                for _plugin in jinja_loader.all():
                    pass
            for action in ACTIONS:
                loader.action_loader.get(action, class_only=True)
            for name, plugin in CONNECTION:
                getattr(loader, name).get(plugin, class_only=True)
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLD)
