"""Write yohost plugins in Python.

A plugin is a module (a ``.py`` file, or a package folder with
``__init__.py``) that creates one :class:`Plugin` at top level and registers
its handlers with the plugin's decorators::

    from yohost import BeforeTool, BeforeToolReply, Deny, Plugin, log

    plugin = Plugin("guard")

    @plugin.before_tool
    def no_rm(call: BeforeTool) -> BeforeToolReply:
        if "rm -rf" in call["args"].get("command", ""):
            log.warning("refused a destructive command")
            return Deny("`rm -rf` is not allowed")
        return None

Every handler takes one argument, the hook's argument as a ``dict`` (typed
below as ``TypedDict``\\ s), and may be ``def`` or ``async def``. It returns
the hook's reply: ``None``, a plain ``dict``/``str``/``list`` in the contract's
JSON shape, or one of the reply helpers (:class:`Deny`, :class:`Rewrite`,
:class:`Note`, ...). Raising :class:`HookError` (or any other exception) fails
the hook: the host fails closed, logs the message (with the traceback for an
exception other than :class:`HookError`), and the plugin keeps serving the
run. ``sys.exit()`` is a crash: the plugin is unloaded for the rest of the run.

The decorators are typed per hook: a handler annotated with its reply type
(``-> BeforeToolReply``, ``-> AfterToolReply``, ...) is checked by mypy, and
a handler whose declared return does not fit the hook it is registered for
is refused by the decorator's type (``Deny`` from ``after_tool``, a string
from ``before_tool``, a dict with a misspelt key).

The host provides this module to plugins itself (its own copy wins over an
installed one, so the SDK always matches the host); ``pip install`` it for
editors, type checkers and unit tests of your handlers.
"""

from __future__ import annotations

import contextvars
import inspect
import logging
from typing import (
    Any,
    Awaitable,
    Callable,
    Dict,
    List,
    Literal,
    NotRequired,
    Optional,
    Tuple,
    TypedDict,
    TypeVar,
    Union,
)

# The reply helpers, their plain-dict forms and each hook's reply type.
from yohost._replies import (
    AfterToolReply as AfterToolReply,
    BeforeModelReply as BeforeModelReply,
    BeforeToolReply as BeforeToolReply,
    Continue as Continue,
    ContinueDict as ContinueDict,
    Deny as Deny,
    DenyDict as DenyDict,
    Edit as Edit,
    EditDict as EditDict,
    Fail as Fail,
    FailDict as FailDict,
    Note as Note,
    NoteDict as NoteDict,
    OnInputReply as OnInputReply,
    OnStopReply as OnStopReply,
    Reject as Reject,
    RejectDict as RejectDict,
    Reply as Reply,
    Rewrite as Rewrite,
    RewriteDict as RewriteDict,
    Stop as Stop,
    StopDict as StopDict,
    ToolReply as ToolReply,
    ToolResult as ToolResult,
    ToolResultDict as ToolResultDict,
    to_reply as to_reply,
)

__all__ = [
    "API_VERSION",
    "Plugin",
    "HookError",
    "Deny",
    "Rewrite",
    "Edit",
    "Note",
    "Stop",
    "Reject",
    "Continue",
    "Fail",
    "ToolResult",
    "Run",
    "ToolOutput",
    "CallTool",
    "BeforeTool",
    "AfterTool",
    "BeforeModel",
    "OnInput",
    "OnStop",
    "OnEvent",
    "Finish",
    "ToolReply",
    "BeforeToolReply",
    "AfterToolReply",
    "BeforeModelReply",
    "OnInputReply",
    "OnStopReply",
    "DenyDict",
    "RewriteDict",
    "EditDict",
    "NoteDict",
    "StopDict",
    "RejectDict",
    "ContinueDict",
    "FailDict",
    "ToolResultDict",
    "log",
    "progress",
    "current_run_id",
]

#: The version of the hook contract this SDK speaks.
API_VERSION = "0.1.0"

#: The hooks a plugin may handle, in contract order.
HOOKS = (
    "tools",
    "call_tool",
    "before_tool",
    "after_tool",
    "before_model",
    "on_input",
    "on_stop",
    "on_event",
    "finish",
)


# ---------------------------------------------------------------- arguments


class Run(TypedDict):
    """The run a hook call belongs to."""

    run_id: str
    label: NotRequired[str]
    depth: int
    parent_run_id: NotRequired[str]
    delegated_by: NotRequired[str]


class ToolOutput(TypedDict):
    """A tool's output: content blocks, details and the error flag."""

    content: List[Dict[str, Any]]
    details: Any
    is_error: bool


class CallTool(TypedDict):
    """``call_tool``: a call of one of the plugin's tools."""

    run: Run
    tool: str
    call_id: str
    args: Dict[str, Any]


class BeforeTool(TypedDict):
    """``before_tool``: a tool call to allow, deny or rewrite."""

    run: Run
    tool: str
    call_id: str
    args: Dict[str, Any]
    user_request: NotRequired[str]
    latest_user_text: NotRequired[str]


class AfterTool(TypedDict):
    """``after_tool``: a tool call and its output, to filter."""

    run: Run
    tool: str
    call_id: str
    args: Dict[str, Any]
    output: ToolOutput


class BeforeModel(TypedDict):
    """``before_model``: a model request about to be sent."""

    run: Run
    model: str
    tools: List[str]
    user_request: NotRequired[str]


class OnInput(TypedDict):
    """``on_input``: the text of a prompted run's input."""

    run: Run
    text: str


class OnStop(TypedDict):
    """``on_stop``: the model's final answer, to verify."""

    run: Run
    answer: str
    continues: int


class OnEvent(TypedDict):
    """``on_event``: one of yoagent's events, in its JSON form."""

    run: Run
    event: Dict[str, Any]


class Finish(TypedDict):
    """``finish``: how the run ended."""

    run: Run
    end: Literal["completed", "stopped", "rejected", "cancelled", "failed"]
    reason: NotRequired[str]
    error: NotRequired[str]


class HookError(Exception):
    """Raise to fail a hook with your own message.

    The host treats it as the plugin's answer, not a crash: the hook fails
    closed, and the plugin keeps serving the rest of the run.
    """


# ------------------------------------------------------------------ plugins

Handler = Callable[[Any], Union[Any, Awaitable[Any]]]

_R = TypeVar("_R")
#: A handler taking ``A`` and returning ``R``, directly or awaited.
_Sync = Union[_R, Awaitable[_R]]

# One type variable per hook: the decorator returns the function unchanged
# (so it stays callable in tests with its own signature), and its bound is
# the hook's handler type, so a handler whose return does not fit the hook
# is a type error at the decorator.
_BeforeTool = TypeVar("_BeforeTool", bound=Callable[[BeforeTool], _Sync[BeforeToolReply]])
_AfterTool = TypeVar("_AfterTool", bound=Callable[[AfterTool], _Sync[AfterToolReply]])
_BeforeModel = TypeVar(
    "_BeforeModel", bound=Callable[[BeforeModel], _Sync[BeforeModelReply]]
)
_OnInput = TypeVar("_OnInput", bound=Callable[[OnInput], _Sync[OnInputReply]])
_OnStop = TypeVar("_OnStop", bound=Callable[[OnStop], _Sync[OnStopReply]])
_OnEvent = TypeVar("_OnEvent", bound=Callable[[OnEvent], object])
_Finish = TypeVar("_Finish", bound=Callable[[Finish], object])
_Tool = TypeVar("_Tool", bound=Callable[[CallTool], _Sync[ToolReply]])


class Plugin:
    """One plugin's handlers. Create exactly one per plugin module.

    Each module gets its own ``Plugin``, so two plugin files never share
    handlers. ``name`` is the name the plugin gives itself (a
    ``plugin.toml`` ``name`` wins; absent both, the file or folder name).

    ``data_dir`` is the plugin's data folder (an absolute path outside the
    plugin directory, made by the host): what the plugin writes there
    survives runs and reloads and never reloads it. ``None`` outside the
    host (in a unit test), or when the host gave the plugin none.
    """

    def __init__(self, name: Optional[str] = None) -> None:
        self.name = name
        self.data_dir: Optional[str] = _data_dir.get()
        self._handlers: Dict[str, Handler] = {}
        self._tools: Dict[str, Tuple[Dict[str, Any], Handler]] = {}

    # One decorator per hook; each registers the function and returns it.

    def before_tool(self, fn: _BeforeTool) -> _BeforeTool:
        """Judge a tool call: return ``None`` (allow), :class:`Deny` or :class:`Rewrite`."""
        self._on("before_tool", fn)
        return fn

    def after_tool(self, fn: _AfterTool) -> _AfterTool:
        """Filter a tool's output: return ``None`` or an :class:`Edit`."""
        self._on("after_tool", fn)
        return fn

    def before_model(self, fn: _BeforeModel) -> _BeforeModel:
        """Before a model request: return ``None``, a :class:`Note` (or a string) or :class:`Stop`."""
        self._on("before_model", fn)
        return fn

    def on_input(self, fn: _OnInput) -> _OnInput:
        """Check a prompted run's input: return ``None`` or :class:`Reject`."""
        self._on("on_input", fn)
        return fn

    def on_stop(self, fn: _OnStop) -> _OnStop:
        """Verify the final answer: return ``None``, :class:`Continue` or :class:`Fail`."""
        self._on("on_stop", fn)
        return fn

    def on_event(self, fn: _OnEvent) -> _OnEvent:
        """Observe each event of the run, in order (the reply is ignored)."""
        self._on("on_event", fn)
        return fn

    def finish(self, fn: _Finish) -> _Finish:
        """The run ended (the reply is ignored)."""
        self._on("finish", fn)
        return fn

    def tool(
        self,
        name: Optional[str] = None,
        *,
        description: Optional[str] = None,
        parameters: Optional[Dict[str, Any]] = None,
        label: Optional[str] = None,
    ) -> Callable[[_Tool], _Tool]:
        """Offer the decorated function as a tool.

        It is called with the :class:`CallTool` dict (its arguments are
        ``call["args"]``) and returns a string or a :class:`ToolResult`.
        ``name`` defaults to the function's name, ``description`` to its
        docstring, ``parameters`` (a JSON Schema) to an empty object schema.
        """

        def register(fn: _Tool) -> _Tool:
            tool_name = name or fn.__name__
            if tool_name in self._tools:
                raise ValueError(f"tool {tool_name!r} is registered twice")
            spec: Dict[str, Any] = {
                "name": tool_name,
                "description": description or inspect.getdoc(fn) or "",
                "parameters": parameters
                or {"type": "object", "properties": {}},
            }
            if label is not None:
                spec["label"] = label
            self._tools[tool_name] = (spec, fn)
            return fn

        return register

    def _on(self, hook: str, fn: Handler) -> None:
        if hook in self._handlers:
            raise ValueError(f"{hook} is registered twice")
        self._handlers[hook] = fn

    @property
    def hooks(self) -> List[str]:
        """The hooks this plugin handles."""
        hooks = set(self._handlers)
        if self._tools:
            hooks |= {"tools", "call_tool"}
        return [h for h in HOOKS if h in hooks]

    def handler(self, hook: str) -> Handler:
        """The function that serves ``hook`` (the host calls this)."""
        if hook == "tools" and self._tools:
            return lambda _run: [spec for spec, _ in self._tools.values()]
        if hook == "call_tool" and self._tools:
            return self._call_tool
        try:
            return self._handlers[hook]
        except KeyError:
            raise HookError(f"this plugin does not handle {hook}") from None

    def _call_tool(self, call: CallTool) -> Any:
        entry = self._tools.get(call["tool"])
        if entry is None:
            raise HookError(f"this plugin has no tool {call['tool']!r}")
        return entry[1](call)


# --------------------------------------------------------------------- logs

#: ``(run_id, plugin, progress)`` of the hook call in progress, where
#: ``progress`` passes a message to the call's progress listener (``None``
#: when no one listens); set by the host around each call, and carried into
#: ``await``\\ ed code by ``contextvars``.
_current: contextvars.ContextVar[
    Optional[Tuple[str, str, Optional[Callable[[str], None]]]]
] = contextvars.ContextVar("yohost_current", default=None)

#: The data folder of the plugin being imported; set by the host around
#: the import, so that its ``Plugin`` takes it as ``data_dir``.
_data_dir: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar(
    "yohost_data_dir", default=None
)

#: Where log lines go: ``sink(run_id, plugin, level, message)``. The host
#: sets it; without a host, lines go to the ``logging`` logger ``yohost``.
_sink: Optional[Callable[[str, str, str, str], None]] = None


def current_run_id() -> Optional[str]:
    """The ``run_id`` of the hook call in progress, if any."""
    current = _current.get()
    return current[0] if current else None


def progress(message: object) -> None:
    """Tell the user how a tool call goes (``"copied 3 of 10"``): the agent
    shows it while the call runs, and ``yohost serve`` sends it to the MCP
    client as progress. At most 256 messages per call, each cut at 1,024
    characters; dropped outside a tool's call, when no one listens, and while
    a plugin filters tool output (``after_tool``)."""
    current = _current.get()
    if current is not None and current[2] is not None:
        current[2](str(message))


def _emit(level: str, message: str) -> None:
    current = _current.get() or ("", "", None)
    if _sink is not None:
        _sink(current[0], current[1], level, message)
    else:
        logging.getLogger("yohost").log(
            logging.getLevelName(level.upper()), "%s", message
        )


class Log:
    """Log lines of the plugin; the host tags each with the run and plugin."""

    def debug(self, message: object) -> None:
        """Detail for debugging."""
        _emit("debug", str(message))

    def info(self, message: object) -> None:
        """Progress worth recording."""
        _emit("info", str(message))

    def warning(self, message: object) -> None:
        """Something looks wrong."""
        _emit("warn", str(message))

    warn = warning

    def error(self, message: object) -> None:
        """Something failed."""
        _emit("error", str(message))


#: The plugin's logger: ``log.info("...")``. The ``logging`` module works
#: too: the host routes its records the same way.
log = Log()
