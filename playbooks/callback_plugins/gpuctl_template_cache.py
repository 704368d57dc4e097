"""Keep the Python code Jinja compiles the roles' templates into, across Ansible's workers and runs.

ansible-playbook runs each task of each host in a worker process forked for that one task, and a
worker compiles every template and expression it evaluates (the roles' variables, `when`
conditions, task arguments, the .j2 files): lexing, parsing, generating Python source and
compiling it. ansible-core keeps nothing compiled between workers, so a no-op host bootstrap of 4
hosts compiled 1,237 times for 171 distinct templates, about 0.3 CPU s a host (docs/hosts.md,
"Speed"). This plugin is a bytecode cache, as Python's own __pycache__ is for modules: the code
object of each compiled template is kept in a file named by a hash of everything the compile
depends on, and read back instead of compiling again.

- Where: the directory named by GPUCTL_TEMPLATE_CACHE (gpuctl sets one under the user's cache
  directory). Without it, or empty, the plugin does nothing and Ansible runs as it always does.
- Trust: loading a cached file runs code, so the directory must be the user's own and writable by
  nobody else (as checked on each start); files are written whole, then renamed into place.
- Key: the template's text and its kind (template or expression), Jinja's syntax settings, the
  options ansible-core compiles it with (backslash escaping), and, for the whole cache, the
  versions of Python, Jinja and ansible-core, this file's format and the Ansible plugin and
  collection paths (their modification times), whose filters and tests the generated code names.
  A change to any of them starts a new cache; of the others, only the newest three are kept.
- Bounded: a cache holding more than MAX_ENTRIES templates is emptied and starts again.
- Harmless when it cannot work: any failure to read, check or write the cache compiles as Ansible
  would; a failure to install it (another ansible-core) leaves Ansible untouched.

The entries are read once in ansible-playbook's own process when the playbook starts; the forked
workers inherit them and add what they compile. Measured in docs/hosts.md ("Speed", eighth round).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import marshal
import os
import stat
import sys
import tempfile
import threading
from pathlib import Path
from types import CodeType
from typing import Any

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
    name: gpuctl_template_cache
    type: aggregate
    short_description: keep Jinja's compiled templates across workers and runs
    description:
      - Stores the code objects of compiled Jinja templates and expressions in the directory named
        by GPUCTL_TEMPLATE_CACHE and reuses them; does nothing when that variable is unset or empty.
"""

ENV_VAR = "GPUCTL_TEMPLATE_CACHE"
FORMAT = 1  # raise when what an entry holds, or how its key is made, changes
MAX_ENTRIES = 4096
# Caches of other versions kept, the current one included (another venv may use the same directory).
KEEP_NAMESPACES = 4
# Jinja settings that change how a template's text is read, hence the code compiled from it.
SYNTAX = ("block_start_string", "block_end_string", "variable_start_string", "variable_end_string",
          "comment_start_string", "comment_end_string", "line_statement_prefix", "line_comment_prefix",
          "trim_blocks", "lstrip_blocks", "newline_sequence", "keep_trailing_newline",
          "optimized", "autoescape", "is_async")  # fmt: skip


class CompiledTemplates:
    """The cache directory of one namespace: code objects by key, read on start and written on miss."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.loaded: dict[str, CodeType] = {}

    def load_all(self) -> None:
        names = [name for name in os.listdir(self.directory) if not name.startswith(".")]
        if len(names) > MAX_ENTRIES:
            for name in names:
                with contextlib.suppress(OSError):
                    os.unlink(self.directory / name)
            return
        for name in names:
            self.get(name)

    def get(self, key: str) -> CodeType | None:
        code = self.loaded.get(key)
        if code is not None:
            return code
        try:
            code = marshal.loads((self.directory / key).read_bytes())
        except OSError:
            return None
        except (EOFError, ValueError, TypeError):  # a damaged entry: compile again and replace it
            return None
        if not isinstance(code, CodeType):
            return None
        self.loaded[key] = code
        return code

    def put(self, key: str, code: CodeType) -> None:
        self.loaded[key] = code
        with contextlib.suppress(OSError, ValueError):
            handle, temporary = tempfile.mkstemp(prefix=f".{key}.", dir=self.directory)
            try:
                with os.fdopen(handle, "wb") as stream:
                    stream.write(marshal.dumps(code))
                os.replace(temporary, self.directory / key)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise


def private_directory(path: Path) -> bool:
    """Made if missing (mode 0700); then it must be a directory this user owns that no one else can write."""
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700, parents=True)
    info = path.lstat()
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022


def namespace(plugin_paths: list[str]) -> str:
    """Names the cache of everything a compiled template depends on beyond its own key."""
    import ansible.release
    import jinja2

    stamps = []
    for path in plugin_paths:
        with contextlib.suppress(OSError):
            stamps.append((path, os.stat(path).st_mtime_ns))
    versions = (sys.version, importlib.util.MAGIC_NUMBER, jinja2.__version__, ansible.release.__version__)
    parts = (FORMAT, versions, stamps)
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def plugin_paths() -> list[str]:
    """The directories Ansible finds filter and test plugins in: configured, and collections'."""
    from ansible import constants
    from ansible.utils.collection_loader import AnsibleCollectionConfig

    found = [*constants.DEFAULT_FILTER_PLUGIN_PATH, *constants.DEFAULT_TEST_PLUGIN_PATH]
    for root in AnsibleCollectionConfig.collection_paths or []:
        collections = os.path.join(root, "ansible_collections")
        found.append(collections)
        with contextlib.suppress(OSError):
            found += [os.path.join(collections, name) for name in sorted(os.listdir(collections))]
    return found


def open_cache(directory: Path) -> CompiledTemplates | None:
    """The current namespace's cache under `directory`, read; all but the newest others removed."""
    if not private_directory(directory):
        return None
    current = directory / namespace(plugin_paths())
    others = [
        path for path in directory.iterdir() if path != current and path.is_dir() and not path.is_symlink()
    ]
    others.sort(key=lambda path: path.stat().st_mtime_ns, reverse=True)
    for stale in others[KEEP_NAMESPACES - 1 :]:
        for entry in stale.iterdir():
            with contextlib.suppress(OSError):
                entry.unlink()
        with contextlib.suppress(OSError):
            stale.rmdir()
    if not private_directory(current):
        return None
    cache = CompiledTemplates(current)
    cache.load_all()
    return cache


def install(directory: Path) -> CompiledTemplates | None:
    """Wrap the compile steps of ansible-core's Jinja environment class with the cache in `directory`."""
    from ansible.template import Templar

    environment_class = type(Templar().environment)
    if getattr(environment_class.compile, "gpuctl_template_cache", False):
        return None  # installed already
    cache = open_cache(directory)
    if cache is not None:
        wrap_compile(environment_class, cache)
    return cache


def wrap_compile(environment_class: Any, cache: CompiledTemplates) -> None:
    """Jinja's Environment.compile (templates) and compile_expression, read from and kept in `cache`."""
    from ansible._internal._templating._jinja_bits import _TemplateCompileContext
    from jinja2 import nodes
    from jinja2.environment import TemplateExpression

    compile_template = environment_class.compile
    compile_expression = environment_class.compile_expression
    pending = threading.local()  # the key of the expression being compiled, per thread

    def key_of(environment: Any, kind: str, *parts: Any) -> str | None:
        if getattr(environment, "_debuggable_template_source", False):
            return None  # ansible-core keeps the generated source for debugging: compile as it does
        context = _TemplateCompileContext.current(optional=True)
        escape = bool(context and context.escape_backslashes)
        syntax = tuple(getattr(environment, name) for name in SYNTAX)
        finalize = getattr(environment.finalize, "__qualname__", repr(environment.finalize))
        extensions = sorted(environment.extensions)
        text = repr((kind, parts, syntax, escape, finalize, extensions, type(environment).__qualname__))
        return hashlib.sha256(text.encode()).hexdigest()

    def cached_compile(  # noqa: PLR0917 - Jinja's Environment.compile, argument for argument
        self: Any,
        source: Any,
        name: Any = None,
        filename: Any = None,
        raw: bool = False,
        defer_init: bool = False,
    ) -> Any:
        if raw or not isinstance(source, str):
            code = compile_template(self, source, name, filename, raw, defer_init)
            expression_key = getattr(pending, "key", None)
            if expression_key and not raw and isinstance(source, nodes.Template):
                pending.key = None
                cache.put(expression_key, code)
            return code
        key = key_of(self, "template", source, name, filename, defer_init)
        code = cache.get(key) if key else None
        if code is None:
            code = compile_template(self, source, name, filename, raw, defer_init)
            if key:
                cache.put(key, code)
        return code

    def cached_compile_expression(self: Any, source: str, undefined_to_none: bool = True) -> Any:
        key = key_of(self, "expression", source)
        code = cache.get(key) if key else None
        if code is None:
            # Jinja parses the expression, then compiles it through compile() above, which keeps it.
            pending.key = key
            try:
                return compile_expression(self, source, undefined_to_none)
            finally:
                pending.key = None
        template = self.template_class.from_code(self, code, self.make_globals(None), None)
        return TemplateExpression(template, undefined_to_none)

    cached_compile.gpuctl_template_cache = True  # type: ignore[attr-defined]
    environment_class.compile = cached_compile
    environment_class.compile_expression = cached_compile_expression


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpuctl_template_cache"
    CALLBACK_NEEDS_ENABLED = False

    def v2_playbook_on_start(self, _playbook: Any) -> None:
        directory = os.environ.get(ENV_VAR, "")
        if directory:
            with contextlib.suppress(Exception):
                install(Path(directory))
