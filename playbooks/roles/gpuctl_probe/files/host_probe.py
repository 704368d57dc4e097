# Reads, in one process, everything a role needs to know about a host before it changes anything,
# and prints it as one JSON object. Run through `raw` (no module upload): one SSH round trip and one
# short Python start instead of one Ansible module per file, package, command and service.
# Read-only. The request (argv[1], JSON) names what to read, or is a list of such requests (one
# per role: one round trip reads for all of them) whose union is read; everything in it is optional:
#   files: paths -> {path: {type, mode, owner, group, sha1 (regular files)}}; missing paths are left out
#   read: paths -> {path: text}, for the files whose content the role parses; missing: left out
#   globs: {key: pattern} -> {key: sorted matching paths}
#   disks: paths -> {path: bytes available to unprivileged users on its filesystem}
#   packages: names -> {name: {version, want, status}} from dpkg (want: install | hold | ...)
#   commands: {key: argv} -> {key: {rc, stdout, stderr}}; rc -1 and msg when the program is missing
#     (no stdout_lines: a role splits the few outputs it reads by line, and containerd's
#     configuration dump, a few hundred lines, is not carried twice in every task's variables)
#   containerd_bases: {key: {config, imports, without, none}} -> {key: {rc, stdout, stderr}}:
#     `containerd config dump` of the file `config` as it is on the host, its import of the glob
#     `imports` narrowed to the files that glob matches other than `without` (or to the glob `none`,
#     which matches nothing): containerd 1.x's configuration without gpuctl's drop-in, as the
#     runtime role's containerd_base.yml dumps it from the config.toml it writes. Left out when
#     `config` cannot be read.
import glob
import grp
import hashlib
import json
import os
import pwd
import stat
import subprocess
import sys

COMMAND_TIMEOUT_S = 60


def describe(path):
    try:
        info = os.stat(path)
    except OSError:
        return None
    found = {
        "type": "directory" if stat.S_ISDIR(info.st_mode) else "file",
        "mode": "%04o" % stat.S_IMODE(info.st_mode),
        "owner": name_of(pwd.getpwuid, info.st_uid),
        "group": name_of(grp.getgrgid, info.st_gid),
    }
    if stat.S_ISREG(info.st_mode):
        with open(path, "rb") as handle:
            found["sha1"] = hashlib.sha1(handle.read()).hexdigest()
    return found


def name_of(lookup, number):
    try:
        return lookup(number)[0]
    except KeyError:
        return str(number)


def available_bytes(path):
    try:
        info = os.statvfs(path)
    except OSError:
        return None
    return info.f_bavail * info.f_frsize


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def packages(names):
    if not names:
        return {}
    try:
        listed = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Package}\\t${Version}\\t${Status}\\n"] + list(names),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True, check=False,
        ).stdout
    except OSError:  # not a dpkg system
        return {}
    found = {}
    for line in listed.splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and len(fields[2].split()) == 3:
            want, _, status = fields[2].split()
            found[fields[0]] = {"version": fields[1], "want": want, "status": status}
    return found


def run(argv, stdin_text=None):
    try:
        done = subprocess.run(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, input=stdin_text,
            stdin=subprocess.DEVNULL if stdin_text is None else None,
            universal_newlines=True, timeout=COMMAND_TIMEOUT_S, check=False,
        )
    except OSError as error:
        return {"rc": -1, "stdout": "", "stderr": "", "msg": "%s: %s" % (argv[0], error.strerror)}
    except subprocess.TimeoutExpired:
        return {"rc": -1, "stdout": "", "stderr": "", "msg": "%s: timed out" % argv[0]}
    return {"rc": done.returncode, "stdout": done.stdout.rstrip("\n"), "stderr": done.stderr.rstrip("\n")}


def containerd_base(config, imports, without, none):
    text = read_text(config)
    if text is None:
        return None
    others = [path for path in sorted(glob.glob(imports)) if path != without] or [none]
    text = text.replace(json.dumps(imports), ", ".join(json.dumps(path) for path in others))
    return run(["containerd", "--config", "/dev/stdin", "config", "dump"], text)


def union(requests):
    merged = {
        "files": [], "read": [], "disks": [], "packages": [], "globs": {}, "commands": {},
        "containerd_bases": {},
    }
    for request in requests:
        for key, wanted in request.items():
            if isinstance(wanted, dict):
                merged[key].update(wanted)
            else:
                merged[key].extend(name for name in wanted if name not in merged[key])
    return merged


def main():
    request = json.loads(sys.argv[1])
    if isinstance(request, list):
        request = union(request)
    files = {path: describe(path) for path in request.get("files", [])}
    texts = {path: read_text(path) for path in request.get("read", [])}
    result = {
        "files": {path: found for path, found in files.items() if found is not None},
        "read": {path: text for path, text in texts.items() if text is not None},
        "globs": {key: sorted(glob.glob(pattern)) for key, pattern in request.get("globs", {}).items()},
        "disks": {path: available_bytes(path) for path in request.get("disks", [])},
        "packages": packages(request.get("packages", [])),
        "commands": {key: run(argv) for key, argv in request.get("commands", {}).items()},
    }
    bases = {key: containerd_base(**wanted) for key, wanted in request.get("containerd_bases", {}).items()}
    result["containerd_bases"] = {key: dumped for key, dumped in bases.items() if dumped is not None}
    sys.stdout.write(json.dumps(result) + "\n")


main()
