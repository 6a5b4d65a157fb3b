"""The host's side of the Python engine (module ``_yohost_host``).

Rust calls into this module for three things: setting up the interpreter
(:func:`start`), importing a plugin (:func:`load`), and running a hook on
a worker thread (:meth:`Worker.call`). Replies cross to Rust as JSON text.
"""

import asyncio
import importlib.util
import inspect
import json
import logging
import os
import site
import sys
import traceback

import yohost

# Replies are encoded with one encoder made once: `json.dumps` with any
# non-default option builds a new encoder per call.
_REPLY = json.JSONEncoder(allow_nan=False)


class Interrupted(BaseException):
    """Raised into a hook's thread when the host gives up on it."""


class ExitRefused(BaseException):
    """Raised by ``os._exit`` in the host's process: a plugin cannot end it."""


class LoadFailure(Exception):
    """A plugin could not be imported; the message names the file and line."""


def start(native_log, venv):
    """Route logs to the host, put ``venv``'s packages on ``sys.path``, and
    never write into the plugin directory (no ``__pycache__`` beside a
    plugin: it would also count as a change of the live directory)."""
    sys.dont_write_bytecode = True
    yohost._sink = native_log
    root = logging.getLogger()
    root.addHandler(_HostHandler())
    root.setLevel(logging.DEBUG)
    logging.getLogger("asyncio").setLevel(logging.WARNING)  # the host's loops, not the plugin's
    if venv:
        _add_venv(venv)
    _guard_exit()


def _guard_exit():
    """Make ``os._exit`` raise :class:`ExitRefused` in the host's own process.
    A child made by ``fork`` (``multiprocessing`` does that) still exits."""
    real_exit = os._exit
    host_pid = os.getpid()

    def _exit(code):
        if os.getpid() != host_pid:
            real_exit(code)
        raise ExitRefused(f"called os._exit({code!r}); a plugin cannot exit the host")

    os._exit = _exit
    sys.modules[os.name]._exit = _exit  # `posix` (or `nt`), where os got it


def _add_venv(venv):
    """``venv``'s site-packages, ahead of the interpreter's own (as a venv's
    own interpreter would have them)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    before = list(sys.path)
    for lib in ("lib", "lib64"):
        packages = os.path.join(venv, lib, version, "site-packages")
        if os.path.isdir(packages):
            site.addsitedir(packages)
    added = [p for p in sys.path if p not in before]
    first_site = next(
        (i for i, p in enumerate(before) if p.endswith("site-packages")), len(before)
    )
    sys.path[:] = before[:first_site] + added + before[first_site:]


class _HostHandler(logging.Handler):
    """Send ``logging`` records to the host, tagged with the current call."""

    def emit(self, record):
        try:
            message = self.format(record)
            yohost._emit(record.levelname.lower(), message)
        except Exception:  # a log line must never fail a hook
            self.handleError(record)


def load(path, module_name, folder, package, name, data_dir):
    """Import the plugin at ``path`` as ``module_name``; its import-time log
    lines are tagged with ``name``, and its ``Plugin`` takes ``data_dir``
    (its data folder, or ``None``).

    Returns ``(plugin, name, hooks)``. Raises :class:`LoadFailure` with the
    file and line of the error.
    """
    if folder not in sys.path:
        sys.path.append(folder)
    locations = [folder] if package else None
    spec = importlib.util.spec_from_file_location(
        module_name, path, submodule_search_locations=locations
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    token = yohost._current.set(("", name, None))
    data_token = yohost._data_dir.set(data_dir)
    try:
        spec.loader.exec_module(module)
    except BaseException as error:
        del sys.modules[module_name]
        raise LoadFailure(_where(error, folder)) from None
    finally:
        yohost._data_dir.reset(data_token)
        yohost._current.reset(token)
    plugins = [v for v in vars(module).values() if isinstance(v, yohost.Plugin)]
    if len(plugins) != 1:
        del sys.modules[module_name]
        found = "no" if not plugins else str(len(plugins))
        raise LoadFailure(
            f"{path}: defines {found} `yohost.Plugin` at top level; "
            "a plugin module creates exactly one (`plugin = Plugin(\"name\")`)"
        )
    plugin = plugins[0]
    return plugin, plugin.name, plugin.hooks


def _where(error, folder):
    """``error`` with the plugin's file and line it came from."""
    if isinstance(error, SyntaxError):
        return f"{error.filename}:{error.lineno}: SyntaxError: {error.msg}"
    if isinstance(error, SystemExit):
        what = f"called sys.exit({error.code!r}) while importing"
    else:
        what = f"{type(error).__name__}: {error}"
    frames = traceback.extract_tb(error.__traceback__)
    own = [f for f in frames if f.filename.startswith(folder)] or frames
    if not own:
        return what
    frame = own[-1]
    return f"{frame.filename}:{frame.lineno}: {what}"


class Worker:
    """One host worker thread's Python side: its event loop and its call."""

    def __init__(self):
        self.loop = None
        self.task = None
        self.interrupted = False

    def call(self, plugin, name, hook, args_json, progress):
        """Run ``hook`` of ``plugin``, its progress going to ``progress``
        (``None``: no one listens): ``(status, text)``, where status is
        ``ok`` (text is the JSON reply), ``guest`` (the plugin raised: its
        own error), ``bad_reply`` or ``interrupted``."""
        args = json.loads(args_json)
        run = args if hook == "tools" else args["run"]
        token = yohost._current.set((run["run_id"], name, progress))
        try:
            result = plugin.handler(hook)(args)
            if result is not None and inspect.isawaitable(result):
                result = self._run(result)
            if hook in ("on_event", "finish"):
                return "ok", "null"  # the contract ignores these replies
            reply = yohost.to_reply(result)
            if reply is None:
                return "ok", "null"
            try:
                return "ok", _REPLY.encode(reply)
            except (TypeError, ValueError) as error:
                return "bad_reply", f"not JSON-serializable: {error}"
        except yohost.HookError as error:
            return "guest", str(error)
        except BaseException as error:
            if self.interrupted or isinstance(error, Interrupted):
                return "interrupted", "interrupted at its deadline"
            yohost._emit("error", f"{hook} raised:\n{traceback.format_exc()}")
            if isinstance(error, SystemExit):
                return "crashed", f"called sys.exit({error.code!r}); a plugin cannot exit the host"
            if not isinstance(error, Exception):
                return "crashed", f"{type(error).__name__}: {error}"
            # An exception is the plugin's answer: the call fails closed and
            # the plugin keeps serving the run.
            return "guest", f"{type(error).__name__}: {error}"
        finally:
            yohost._current.reset(token)

    def forget(self, module_name):
        """Drop an unloaded plugin's module (and its submodules)."""
        for name in [n for n in sys.modules if n == module_name or n.startswith(module_name + ".")]:
            del sys.modules[name]

    def _run(self, awaitable):
        """Run a coroutine on this worker's event loop (made on first use)."""
        if self.loop is None:
            self.loop = asyncio.new_event_loop()
        self.task = self.loop.create_task(_awaited(awaitable))
        try:
            return self.loop.run_until_complete(self.task)
        finally:
            self.task = None

    def interrupt(self):
        """Called from another thread at the deadline: cancel the task being
        awaited, if any, and say whether there was one (the host then raises
        :class:`Interrupted` into the thread as well)."""
        self.interrupted = True
        if self.task is None or self.loop is None:
            return False
        self.loop.call_soon_threadsafe(self.task.cancel)
        return True


async def _awaited(awaitable):
    return await awaitable
