"""Bad inputs of issue 33's input and output classes: input files that are no regular file (a
device, a directory; gpuctl/input_files.py refuses them before anything opens them), an
inventory's group_vars/host_vars that are no YAML mapping (gpuctl/hosts/inventory_vars.py names
the file and line), `explain` with nothing to read, and cluster options given before a command
that does not take them or given twice (gpuctl/cli/argv.py). Each answer: exit 2, one `error:`
line naming the file or flag, one `hint:` line.

What the catalogue cannot express (a FIFO, a socket, a huge file, standard output closed or full,
table widths) is tested in tests/cluster/test_io_files.py and tests/cluster/test_io_streams.py."""

from __future__ import annotations

from tests.bad_inputs_cases import Case, case, kubeconfig

HOSTS = "all:\n  children:\n    gpu_nodes:\n      hosts:\n        n1: {ansible_host: 127.0.0.1}\n"
HOSTS_INI = "[gpu_nodes]\nn1 ansible_host=127.0.0.1\n"
UP = "--kubeconfig {dir}/out.kubeconfig --detach"


def _devices() -> list[Case]:
    """Character devices and folders where a file is read: never read, never a hang."""
    return [
        case("io-kubeconfig-dev-zero", "status --kubeconfig /dev/zero", 2, "/dev/zero"),
        case("io-kubeconfig-dev-null", "status --kubeconfig /dev/null", 2, "/dev/null"),
        case("io-kubeconfig-env-dev-zero", "status", 2, "/dev/zero", env={"KUBECONFIG": "/dev/zero"}),
        case(
            "io-kubeconfig-env-second-is-a-device",
            "status",
            2,
            "/dev/null",
            {"kc": kubeconfig()},
            {"KUBECONFIG": "{dir}/kc:/dev/null"},
        ),
        case(
            "io-kubeconfig-env-second-is-a-folder",
            "status",
            2,
            "{dir}/sub",
            {"kc": kubeconfig(), "sub/x": ""},
            {"KUBECONFIG": "{dir}/kc:{dir}/sub"},
        ),
        case("io-verify-kubeconfig-device", "verify --kubeconfig /dev/zero", 2, "/dev/zero"),
        case("io-taint-kubeconfig-device", "taint-gpu-nodes --kubeconfig /dev/urandom", 2, "/dev/urandom"),
        case(
            "io-bootstrap-kubeconfig-device",
            "bootstrap --phase cluster --kubeconfig /dev/zero",
            2,
            "/dev/zero",
        ),
        case("io-scenario-dev-zero", f"sim up --scenario /dev/zero {UP}", 2, "/dev/zero"),
        case("io-scenario-dev-null", f"sim up --scenario /dev/null {UP}", 2, "/dev/null"),
        case("io-demo-scenario-device", "demo --scenario /dev/urandom", 2, "/dev/urandom"),
        case("io-inventory-dev-zero", "preflight --inventory /dev/zero", 2, "/dev/zero"),
        case("io-inventory-dev-null", "preflight --inventory /dev/null", 2, "/dev/null"),
        case("io-bootstrap-inventory-device", "bootstrap --phase host -i /dev/zero", 2, "/dev/zero"),
        case("io-hosts-from-device", f"sim up --hosts-from /dev/zero {UP}", 2, "/dev/zero"),
        case("io-explain-dev-zero", "explain /dev/zero", 2, "/dev/zero"),
        case("io-explain-dev-null", "explain /dev/null", 2, "/dev/null"),
        case("io-expect-gpus-device", "verify --kubeconfig {kc} --expect-gpus @/dev/zero", 2, "/dev/zero"),
        case("io-expect-gpus-folder", "verify --kubeconfig {kc} --expect-gpus @{dir}", 2, "{dir}"),
    ]


def _inventory_variables() -> list[Case]:
    """group_vars/host_vars that Ansible cannot read: the file and line, not an internal error."""
    inv = "preflight --inventory {dir}/hosts.yml"

    def bad(name: str, files: dict[str, str], names: str, argv: str = inv) -> Case:
        return case(f"io-{name}", argv, 2, names, {"hosts.yml": HOSTS, **files})

    return [
        bad("group-vars-flow", {"group_vars/all.yml": "a: 1\nb: [oops\n"}, "group_vars/all.yml:2"),
        bad(
            "group-vars-indent", {"group_vars/gpu_nodes.yml": "a: 1\n  b: 2\n"}, "group_vars/gpu_nodes.yml:2"
        ),
        bad("group-vars-tab", {"group_vars/all.yaml": "a:\n\tb: 1\n"}, "group_vars/all.yaml:2"),
        bad("group-vars-quote", {"group_vars/all.yml": 'a: "open\nb: 2\n'}, "group_vars/all.yml"),
        bad("group-vars-a-list", {"group_vars/gpu_nodes.yml": "- a\n- b\n"}, "group_vars/gpu_nodes.yml"),
        bad("group-vars-a-string", {"group_vars/all.yml": "just words\n"}, "group_vars/all.yml"),
        bad("group-vars-folder-file", {"group_vars/all/main.yml": "x: {y\n"}, "group_vars/all/main.yml:1"),
        bad("host-vars-indent", {"host_vars/n1.yml": "a: 1\n  b: 2\n"}, "host_vars/n1.yml:2"),
        bad("host-vars-a-list", {"host_vars/n1": "- n1\n"}, "host_vars/n1"),
        case(
            "io-group-vars-of-ini-inventory",
            "preflight --inventory {dir}/hosts.ini",
            2,
            "group_vars/all.yml:1",
            {"hosts.ini": HOSTS_INI, "group_vars/all.yml": "a: [1, 2\n"},
        ),
        case(
            "io-group-vars-in-inventory-folder",
            "preflight --inventory {dir}/inventory",
            2,
            "inventory/group_vars/all.yml:2",
            {"inventory/hosts.yml": HOSTS, "inventory/group_vars/all.yml": "a: 1\nb: c: d\n"},
        ),
        bad(
            "bootstrap-group-vars",
            {"group_vars/all.yml": "a: 1\n  b: 2\n"},
            "group_vars/all.yml:2",
            "bootstrap --phase host --inventory {dir}/hosts.yml",
        ),
        bad(
            "hosts-from-host-vars",
            {"host_vars/n1.yml": "- x\n"},
            "host_vars/n1.yml",
            f"sim up --hosts-from {{dir}}/hosts.yml {UP}",
        ),
    ]


def _explain() -> list[Case]:
    """explain with nothing to read (the catalogue's standard input is empty)."""
    return [
        case("io-explain-stdin-empty", "explain", 2, "standard input"),
        case("io-explain-dash-stdin-empty", "explain - -o json", 2, "standard input"),
        case("io-explain-dev-stdin-empty", "explain /dev/stdin", 2, "standard input"),
        case("io-explain-empty-file", "explain {dir}/empty.log", 2, "empty.log", {"empty.log": ""}),
        case("io-explain-blank-file", "explain {dir}/blank.log", 2, "blank.log", {"blank.log": "\n \n\t\n"}),
    ]


def _cluster_options() -> list[Case]:
    """--kubeconfig/--context before a command that does not take them, or given twice."""
    return [
        case(
            "io-context-before-sim-up",
            "--context prod sim up --scenario {dir}/none.yaml --kubeconfig {dir}/k --detach",
            2,
            "--context prod",
        ),
        case("io-context-before-sim-down", "--context prod sim down --kubeconfig {dir}/k", 2, "--context"),
        case("io-kubeconfig-before-render", "--kubeconfig {kc} render", 2, "--kubeconfig"),
        case(
            "io-kubeconfig-before-preflight", "--kubeconfig {kc} preflight -i {dir}/h.yml", 2, "--kubeconfig"
        ),
        case("io-kubeconfig-before-explain", "--kubeconfig {kc} explain", 2, "--kubeconfig"),
        case("io-context-before-version", "--context=prod version", 2, "--context prod"),
        case("io-context-before-completion", "--context prod completion bash", 2, "--context"),
        case(
            "io-kubeconfig-before-and-after",
            "--kubeconfig {dir}/other status --kubeconfig {kc}",
            2,
            "--kubeconfig given twice",
        ),
        case("io-context-twice-before", "--context a --context b status --kubeconfig {kc}", 2, "--context"),
        case(
            "io-kubeconfig-twice-after",
            "status --kubeconfig {kc} --kubeconfig={dir}/other",
            2,
            "--kubeconfig given twice",
        ),
        case("io-kubeconfig-without-command", "--kubeconfig {kc}", 2, "--kubeconfig"),
        case("io-context-without-value", "--context", 2, "--context"),
    ]


def cases() -> list[Case]:
    return [*_devices(), *_inventory_variables(), *_explain(), *_cluster_options()]
