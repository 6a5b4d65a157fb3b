"""The replies of ``yohost``'s handlers: the helpers (:class:`Deny`,
:class:`Rewrite`, :class:`Note`, ...), the same replies as plain dicts, and
each hook's reply type. ``yohost`` re-exports every name; import them from
there.

The host registers this module as ``yohost._replies`` before ``yohost``
itself, from the source it embeds, as it does ``yohost``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import (
    Any,
    Dict,
    List,
    NotRequired,
    Optional,
    TypeAlias,
    TypedDict,
    Union,
)

__all__ = [
    "Reply",
    "Deny",
    "Rewrite",
    "Edit",
    "Note",
    "Stop",
    "Reject",
    "Continue",
    "Fail",
    "ToolResult",
    "DenyDict",
    "RewriteDict",
    "EditDict",
    "NoteDict",
    "StopDict",
    "RejectDict",
    "ContinueDict",
    "FailDict",
    "ToolResultDict",
    "BeforeToolReply",
    "AfterToolReply",
    "BeforeModelReply",
    "OnInputReply",
    "OnStopReply",
    "ToolReply",
    "to_reply",
]


class Reply:
    """A reply helper: turns itself into the contract's JSON shape."""

    def to_reply(self) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class Deny(Reply):
    """``before_tool``: block the call; the model sees ``reason``."""

    reason: str

    def to_reply(self) -> Any:
        return {"deny": self.reason}


@dataclass(frozen=True)
class Rewrite(Reply):
    """``before_tool``: run the call with these arguments instead."""

    args: Dict[str, Any]

    def to_reply(self) -> Any:
        return {"args": self.args}


@dataclass(frozen=True)
class Edit(Reply):
    """``after_tool``: replace the fields given (``None`` keeps the output's)."""

    content: Union[str, List[Dict[str, Any]], None] = None
    details: Any = None
    is_error: Optional[bool] = None

    def to_reply(self) -> Any:
        edit: Dict[str, Any] = {}
        if self.content is not None:
            edit["content"] = _content(self.content)
        if self.details is not None:
            edit["details"] = self.details
        if self.is_error is not None:
            edit["is_error"] = self.is_error
        return edit or None


@dataclass(frozen=True)
class Note(Reply):
    """``before_model``: add this note to the request."""

    text: str

    def to_reply(self) -> Any:
        return {"note": self.text}


@dataclass(frozen=True)
class Stop(Reply):
    """``before_model``: end the run before this request."""

    reason: str

    def to_reply(self) -> Any:
        return {"stop": self.reason}


@dataclass(frozen=True)
class Reject(Reply):
    """``on_input``: the run does not start."""

    reason: str

    def to_reply(self) -> Any:
        return {"reject": self.reason}


@dataclass(frozen=True)
class Continue(Reply):
    """``on_stop``: send ``message`` to the model and go on."""

    message: str

    def to_reply(self) -> Any:
        return {"continue": self.message}


@dataclass(frozen=True)
class Fail(Reply):
    """``on_stop``: the answer is not acceptable; the run fails."""

    reason: str

    def to_reply(self) -> Any:
        return {"fail": self.reason}


@dataclass(frozen=True)
class ToolResult(Reply):
    """``call_tool``: a result with content, details and the error flag.

    ``terminate=True`` ends the run once this turn's tools are done, before
    the next model request, when every result of the turn asks it."""

    content: Union[str, List[Dict[str, Any]]]
    details: Any = None
    is_error: bool = False
    terminate: bool = False

    def to_reply(self) -> Any:
        reply = {
            "content": _content(self.content),
            "details": self.details,
            "is_error": self.is_error,
        }
        if self.terminate:
            reply["terminate"] = True
        return reply


def _content(content: Union[str, List[Dict[str, Any]]]) -> List[Dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content


# Replies as plain dicts, in the contract's JSON shape.


class DenyDict(TypedDict):
    """``before_tool``: ``{"deny": reason}``."""

    deny: str


class RewriteDict(TypedDict):
    """``before_tool``: ``{"args": {...}}``."""

    args: Dict[str, Any]


class EditDict(TypedDict, total=False):
    """``after_tool``: the output fields to replace."""

    content: List[Dict[str, Any]]
    details: Any
    is_error: bool


class NoteDict(TypedDict):
    """``before_model``: ``{"note": text}``."""

    note: str


class StopDict(TypedDict):
    """``before_model``: ``{"stop": reason}``."""

    stop: str


class RejectDict(TypedDict):
    """``on_input``: ``{"reject": reason}``."""

    reject: str


#: ``on_stop``: ``{"continue": message}`` (``continue`` is a keyword, hence
#: the functional form).
ContinueDict = TypedDict("ContinueDict", {"continue": str})


class FailDict(TypedDict):
    """``on_stop``: ``{"fail": reason}``."""

    fail: str


class ToolResultDict(TypedDict):
    """``call_tool``: content, with optional details and error flag."""

    content: List[Dict[str, Any]]
    details: NotRequired[Any]
    is_error: NotRequired[bool]


#: What a ``before_tool`` handler returns: ``None`` allows.
BeforeToolReply: TypeAlias = Union[None, Deny, Rewrite, DenyDict, RewriteDict]
#: What an ``after_tool`` handler returns: ``None`` keeps the output.
AfterToolReply: TypeAlias = Union[None, Edit, EditDict]
#: What a ``before_model`` handler returns: ``None`` adds nothing.
BeforeModelReply: TypeAlias = Union[None, str, Note, Stop, NoteDict, StopDict]
#: What an ``on_input`` handler returns: ``None`` accepts.
OnInputReply: TypeAlias = Union[None, Reject, RejectDict]
#: What an ``on_stop`` handler returns: ``None`` accepts the answer.
OnStopReply: TypeAlias = Union[None, Continue, Fail, ContinueDict, FailDict]
#: What a tool returns: text, or a result.
ToolReply: TypeAlias = Union[str, ToolResult, ToolResultDict]


def to_reply(value: Any) -> Any:
    """A handler's return value in the contract's JSON shape."""
    if isinstance(value, Reply):
        return value.to_reply()
    return value
