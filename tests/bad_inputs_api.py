"""Bad inputs of the API boundary: numbers out of their range (flags, environment variables and
a scenario's seconds), tokens no HTTP header may carry, credential plugins that fail or never
return, and cluster addresses whose server answers something that is no Kubernetes answer.

The server cases reach paths of the simulated cluster that are no API list (its metrics page, one
node, /version): a kubeconfig of the case's own names a cluster there and, through
KUBECONFIG=OWN:SIM, the sim's user (kubectl's merge takes the first file's current-context and
the sim's credentials)."""

from __future__ import annotations

from tests.bad_inputs_cases import Case, case, kubeconfig

STATUS = "status --kubeconfig {kc}"
EXEC_API = "client.authentication.k8s.io/v1"


def cases() -> list[Case]:
    return [
        *_environment_numbers(),
        *_flag_numbers(),
        *_scenario_numbers(),
        *_tokens(),
        *_plugins(),
        *_servers(),
    ]


def _environment_numbers() -> list[Case]:
    request, plugin = "GPUCTL_REQUEST_TIMEOUT", "GPUCTL_EXEC_TIMEOUT"
    values = {"inf": "inf", "nan": "nan", "negative": "-1", "huge": "1e12", "overflow": "1e400"}
    values |= {"hex": "0x10", "tiny": "0.01", "with-unit": "60s"}
    rows = [
        case(f"request-timeout-{name}", STATUS, 2, request, env={request: value})
        for name, value in values.items()
    ]
    rows += [
        case(f"exec-timeout-{name}", STATUS, 2, plugin, env={plugin: value})
        for name, value in {"text": "soon", "zero": "0", "inf": "inf", "over-an-hour": "86400"}.items()
    ]
    return rows


def _flag_numbers() -> list[Case]:
    sharing = "render --sharing time-slicing --replicas"
    return [
        case("verify-timeout-nan", "verify --timeout nan", 2, "--timeout"),
        case("verify-timeout-huge", "verify --timeout 1e12", 2, "--timeout"),
        case("verify-timeout-zero", "verify --timeout 0", 2, "--timeout"),
        case("verify-timeout-overflow", "verify --timeout 1e400", 2, "--timeout"),
        case("verify-interval-nan", "verify --watch --interval nan", 2, "--interval"),
        case("verify-interval-inf", "verify --watch --interval inf", 2, "--interval"),
        case("verify-interval-huge", "verify --watch --interval 1e12", 2, "--interval"),
        case("verify-interval-negative", "verify --watch --interval -5", 2, "--interval"),
        case("verify-interval-text", "verify --watch --interval hourly", 2, "--interval"),
        case("verify-concurrency-huge", "verify --concurrency 100000", 2, "--concurrency"),
        case("verify-concurrency-fraction", "verify --concurrency 2.5", 2, "--concurrency"),
        case("verify-concurrency-exponent", "verify --concurrency 1e3", 2, "--concurrency"),
        case("verify-concurrency-negative", "verify --concurrency -4", 2, "--concurrency"),
        case("render-replicas-huge", f"{sharing} 100000", 2, "--replicas"),
        case("render-replicas-exponent", f"{sharing} 1e12", 2, "--replicas"),
        case("render-replicas-one", f"{sharing} 1", 2, "--replicas"),
        case(
            "bootstrap-replicas-huge",
            "bootstrap --phase cluster --kubeconfig {kc} --sharing mps --replicas 5000",
            2,
            "--replicas",
        ),
    ]


def _scenario_numbers() -> list[Case]:
    """YAML reads .nan and .inf as floats: a scenario's seconds take neither."""
    up = "sim up --scenario {dir}/s.yaml --kubeconfig {dir}/out.kubeconfig --detach"
    return [
        case(
            f"scenario-{field}-{name}", up, 2, field, {"s.yaml": f"{field}: {value}\nnodes: [{{name: g}}]\n"}
        )
        for field in ("podStartSeconds", "podRunSeconds")
        for name, value in {"nan": ".nan", "inf": ".inf", "over-a-day": "90000"}.items()
    ]


def _tokens() -> list[Case]:
    """kubectl refuses each of these tokens ("invalid header field value"); so does gpuctl, naming
    the kubeconfig and user, before it sends anything."""
    kc = "status --kubeconfig {dir}/kc"
    rows = [
        case(f"kubeconfig-token-{name}", kc, 2, "token", {"kc": kubeconfig(user=f'{{token: "{token}"}}')})
        for name, token in {
            "newline": "abc\\n",
            "crlf": "abc\\r\\n",
            "leading-newline": "\\nabc",
            "inner-newline": "ab\\ncd",
            "nul": "ab\\0cd",
        }.items()
    ]
    block = kubeconfig().replace(
        "users: [{name: u, user: {token: x}}]\n", "users:\n- name: u\n  user:\n    token: |\n      abc\n"
    )
    rows.append(case("kubeconfig-token-block-scalar", kc, 2, "token", {"kc": block}))
    token_file = kubeconfig(user="{tokenFile: {dir}/token}")
    rows += [
        case("kubeconfig-tokenfile-two-lines", kc, 2, "tokenFile", {"kc": token_file, "token": "abc\ndef\n"}),
        case("kubeconfig-tokenfile-control", kc, 2, "tokenFile", {"kc": token_file, "token": "abc\x1bdef"}),
    ]
    return rows


def _plugin_kubeconfig(script: str) -> dict[str, str]:
    """A kubeconfig whose user's credential plugin is `sh -c SCRIPT`."""
    user = f"{{exec: {{apiVersion: {EXEC_API}, command: sh, args: [-c, '{script}']}}}}"
    return {"kc": kubeconfig(user=user)}


def _plugins() -> list[Case]:
    """Credential plugins that fail, answer nonsense or never return: one error naming the plugin
    (exit 3), never the client's log line followed by a 401 that blames the token."""
    kc = "status --kubeconfig {dir}/kc"
    plugin = "credential plugin 'sh'"

    def credential(status: str, api: str = EXEC_API) -> str:
        fields = f'\\"apiVersion\\": \\"{api}\\", \\"kind\\": \\"ExecCredential\\", \\"status\\": {status}'
        return f'printf %s "{{{fields}}}"'

    return [
        case("exec-plugin-fails", kc, 3, plugin, _plugin_kubeconfig("echo login required >&2; exit 1")),
        case(
            "exec-plugin-never-returns",
            kc,
            3,
            "did not return within 1 s",
            _plugin_kubeconfig("sleep 30"),
            {"GPUCTL_EXEC_TIMEOUT": "1"},
        ),
        case("exec-plugin-not-json", kc, 3, plugin, _plugin_kubeconfig("echo hello")),
        case("exec-plugin-no-credential", kc, 3, plugin, _plugin_kubeconfig(credential("{}"))),
        case(
            "exec-plugin-wrong-api-version",
            kc,
            3,
            plugin,
            _plugin_kubeconfig(credential('{\\"token\\": \\"t\\"}', "client.authentication.k8s.io/v1beta1")),
        ),
        case("exec-plugin-killed", kc, 3, plugin, _plugin_kubeconfig("kill -9 $$")),
        case(
            "exec-plugin-token-newline",
            kc,
            3,
            "bearer token",
            _plugin_kubeconfig(credential('{\\"token\\": \\"a\\\\nb\\"}')),
        ),
    ]


def _through_sim_user(server: str) -> tuple[dict[str, str], dict[str, str]]:
    """Files and environment for a cluster at `server`, reached with the simulated cluster's user."""
    text = (
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: '{server}', insecure-skip-tls-verify: true}}}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: gpuctl-sim}}]\n"
    )
    return {"kc": text}, {"KUBECONFIG": "{dir}/kc:{kc}"}


def _servers() -> list[Case]:
    """A server address whose answers are no Kubernetes lists: exit 3 in the server's words."""
    sim = "https://127.0.0.1:{port}"
    rows = {
        "server-is-a-metrics-page": (f"{sim}/metrics?", "text/plain"),
        "server-is-a-health-check": (f"{sim}/healthz?", "text/plain"),
        "server-answers-one-node": (f"{sim}/api/v1/nodes/gpu-0?", "no items: Node"),
        "server-answers-its-version": (f"{sim}/version?", "no items"),
        "server-answers-api-versions": (f"{sim}/api?", "no items: APIVersions"),
        "server-path-prefix": (f"{sim}/k8s/clusters/c-1", "404"),
    }
    return [
        case(name, "status", 3, names, *_through_sim_user(server)) for name, (server, names) in rows.items()
    ]
