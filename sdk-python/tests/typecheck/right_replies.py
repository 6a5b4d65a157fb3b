"""Plugins with every right reply shape: mypy must accept this file.
Checked by ``test_typing.py``; never loaded by a host."""

from typing import Any

from yohost import (
    AfterTool,
    AfterToolReply,
    BeforeModel,
    BeforeModelReply,
    BeforeTool,
    BeforeToolReply,
    CallTool,
    Continue,
    Deny,
    Edit,
    Finish,
    Note,
    OnEvent,
    OnInput,
    OnInputReply,
    OnStop,
    OnStopReply,
    Plugin,
    Reject,
    Rewrite,
    ToolReply,
    ToolResult,
)

plugin = Plugin("right")


@plugin.before_tool
def judge(call: BeforeTool) -> BeforeToolReply:
    if call["tool"] == "rm":
        return Deny("no")
    if call["tool"] == "push":
        return Rewrite({**call["args"], "force": False})
    if call["tool"] == "plain":
        return {"deny": "plain dicts work too"}
    return None


@plugin.after_tool
async def redact(call: AfterTool) -> AfterToolReply:
    if call["output"]["is_error"]:
        return {"is_error": True}
    return Edit(content="[redacted]")


@plugin.before_model
def note(model: BeforeModel) -> BeforeModelReply:
    return "a plain string is a note" if model["tools"] else Note("n")


@plugin.on_input
def check_input(data: OnInput) -> OnInputReply:
    return Reject("empty") if not data["text"] else None


@plugin.on_stop
def verify(stop: OnStop) -> OnStopReply:
    return Continue("go on") if stop["continues"] == 0 else {"fail": "still unfinished"}


@plugin.on_event
def observe(event: OnEvent) -> None:
    pass


@plugin.finish
async def done(end: Finish) -> None:
    pass


@plugin.tool(name="echo")
def echo(call: CallTool) -> ToolReply:
    return str(call["args"].get("text", ""))


@plugin.tool(name="rich")
async def rich(call: CallTool) -> ToolResult:
    return ToolResult("ok", details={"n": 1})


plugin.on_input(lambda data: None)
untyped: Any = judge({"run": {"run_id": "r", "depth": 0}, "tool": "ls", "call_id": "c", "args": {}})
