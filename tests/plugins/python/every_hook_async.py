"""Every hook, with `async def` handlers (see every_hook.py)."""

import asyncio

from yohost import Continue, Deny, Edit, Note, Plugin, Reject, Rewrite, ToolResult, log

plugin = Plugin("every-hook-async")
events = []


@plugin.tool(
    name="shout",
    description="Upper-case the text",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}},
)
async def shout(call):
    await asyncio.sleep(0)
    return ToolResult(call["args"]["text"].upper() + "!", details={"by": "python"})


@plugin.before_tool
async def policy(call):
    text = call["args"].get("text", "")
    if text == "forbidden":
        return Deny("python says no")
    if text == "rewrite me":
        return Rewrite({"text": "rewritten by python"})
    await asyncio.sleep(0)
    return None


@plugin.after_tool
async def tag_output(call):
    if call["tool"] == "echo":
        return Edit(content=call["output"]["content"][0]["text"] + " [filtered]")
    await asyncio.sleep(0)
    return None


@plugin.before_model
async def note(turn):
    await asyncio.sleep(0)
    return Note(f"python note for {turn['model']}")


@plugin.on_input
async def gate(prompt):
    if "blocked" in prompt["text"]:
        return Reject("python rejects this input")
    await asyncio.sleep(0)
    return None


@plugin.on_stop
async def verify(stop):
    if "draft" in stop["answer"] and stop["continues"] == 0:
        return Continue("please finalize the draft")
    await asyncio.sleep(0)
    return None


@plugin.on_event
async def observe(event):
    await asyncio.sleep(0)
    events.append(event["event"])


@plugin.finish
async def done(end):
    await asyncio.sleep(0)
    log.info(f"finished: {end['end']} after {len(events)} events")
    events.clear()
