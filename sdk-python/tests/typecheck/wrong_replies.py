"""Plugins with wrong replies: mypy must reject each line whose comment
names an error code after ``E:``, and nothing else. Checked by
``test_typing.py``; never loaded by a host."""

from yohost import (
    AfterTool,
    AfterToolReply,
    BeforeTool,
    BeforeToolReply,
    Deny,
    Note,
    OnStop,
    OnStopReply,
    Plugin,
    ToolResult,
)

plugin = Plugin("wrong")


@plugin.before_tool
def misspelt_key(call: BeforeTool) -> BeforeToolReply:
    return {"deni": "no"}  # E: return-value


@plugin.before_tool  # E: type-var
def a_string(call: BeforeTool) -> str:
    return "deny"


@plugin.before_tool
def a_string_in_the_body(call: BeforeTool) -> BeforeToolReply:
    return "deny"  # E: return-value


@plugin.after_tool  # E: type-var
def deny_from_after_tool(call: AfterTool) -> Deny:
    return Deny("no")


@plugin.after_tool
def deny_in_an_after_tool_body(call: AfterTool) -> AfterToolReply:
    return Deny("no")  # E: return-value


@plugin.after_tool  # E: type-var
async def async_deny_from_after_tool(call: AfterTool) -> Deny:
    return Deny("no")


plugin.after_tool(lambda call: Deny("no"))  # E: type-var

plugin.before_model(lambda model: {"nope": "x"})  # E: type-var


@plugin.before_tool  # E: type-var
def wrong_argument(call: AfterTool) -> BeforeToolReply:
    return None


@plugin.on_stop
def note_from_on_stop(stop: OnStop) -> OnStopReply:
    return Note("not a verdict")  # E: return-value


@plugin.tool(name="count")  # E: type-var
def count(call: object) -> int:
    return 3


@plugin.tool(name="half")
def half(call: object) -> ToolResult:
    return ToolResult(content=3)  # E: arg-type
