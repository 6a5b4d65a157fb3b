"""The conformance fixture in Python. What each hook does is the protocol in
host/tests/conformance/main.rs. Python plugins are trusted code: the suite
sends them no `memory` or `file` case."""

import asyncio

from yohost import (
    Continue,
    Deny,
    Edit,
    HookError,
    Note,
    Plugin,
    Reject,
    Rewrite,
    ToolResult,
    log,
)

plugin = Plugin("conformance-fixture")

# A 1x1 transparent PNG.
PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

# Put in every error the plugin raises itself: the model must never see it.
SECRET = "fx-secret-7f3a"

PARAMETERS = {"type": "object", "properties": {"text": {"type": "string"}}}


@plugin.tool(name="fx_echo", description="Echo the text", parameters=PARAMETERS)
def fx_echo(call):
    return call["args"].get("text", "")


@plugin.tool(name="fx_image", description="A text and a 1x1 PNG", parameters=PARAMETERS)
def fx_image(call):
    return ToolResult(
        [
            {"type": "text", "text": "fx image"},
            {"type": "image", "data": PIXEL_PNG, "mimeType": "image/png"},
        ]
    )


@plugin.tool(name="fx_end", description="End the run with the text", parameters=PARAMETERS)
def fx_end(call):
    return ToolResult(call["args"].get("text", ""), terminate=True)


@plugin.tool(
    name="fx_bad_image",
    description="An image of a type the host refuses",
    parameters=PARAMETERS,
)
def fx_bad_image(call):
    return ToolResult([{"type": "image", "data": PIXEL_PNG, "mimeType": "image/svg+xml"}])


async def never():
    await asyncio.Event().wait()


@plugin.before_tool
def before_tool(call):
    if call["tool"] != "run":
        return None
    cmd = str(call["args"].get("cmd", ""))
    log.info(f"before_tool {cmd}")
    if cmd.startswith("deny") or "rm -rf" in cmd:
        return Deny(f"fx denied: {cmd}")
    if cmd.startswith("rewrite:"):
        return Rewrite({"cmd": cmd[len("rewrite:") :]})
    if cmd == "whoami" or cmd.startswith("whoami "):
        return Rewrite({"cmd": f"whoami:{call['run']['run_id']}{cmd[len('whoami'):]}"})
    if cmd == "throw":
        raise RuntimeError(f"{SECRET}: raised on purpose")
    if cmd == "error":
        raise HookError(f"{SECRET}: failed on purpose")
    if cmd == "hang":
        return never()
    if cmd == "spin":
        while True:
            pass
    if cmd == "shape":
        return {"allow": True}
    if cmd == "oversize":
        return Deny("x" * (17 * 1024 * 1024))
    if cmd == "flood":
        for i in range(100_000):
            log.info(f"flood {i}")
    if cmd == "deluge":
        pad = "x" * 8000
        for i in range(8192):
            log.info(f"deluge {i} {pad}")
    return None


@plugin.after_tool
def after_tool(call):
    for block in call["output"]["content"]:
        if block.get("type") == "text" and "redact-me" in block["text"]:
            return Edit(content="[redacted by fx]")
    return None


@plugin.before_model
def before_model(turn):
    return Note("fx note")


@plugin.on_input
def on_input(prompt):
    if "forbidden-input" in prompt["text"]:
        return Reject("fx rejects forbidden-input")
    return None


@plugin.on_stop
def on_stop(stop):
    if "lazy" in stop["answer"] and stop["continues"] == 0:
        return Continue("fx: try again")
    return None


@plugin.on_event
def on_event(event):
    log.info(f"event {event['event']['type']}")


@plugin.finish
def finish(end):
    log.info(f"finish {end['end']}")
