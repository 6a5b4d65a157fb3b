"""Every hook, with plain `def` handlers (every_hook_async.py is the same
with `async def`). The end-to-end tests check each hook's effect."""

from yohost import Continue, Deny, Edit, Note, Plugin, Reject, Rewrite, ToolResult, log

plugin = Plugin("every-hook")
events = []


@plugin.tool(
    name="shout",
    description="Upper-case the text",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}},
)
def shout(call):
    return ToolResult(call["args"]["text"].upper() + "!", details={"by": "python"})


@plugin.before_tool
def policy(call):
    text = call["args"].get("text", "")
    if text == "forbidden":
        return Deny("python says no")
    if text == "rewrite me":
        return Rewrite({"text": "rewritten by python"})
    return None


@plugin.after_tool
def tag_output(call):
    if call["tool"] == "echo":
        return Edit(content=call["output"]["content"][0]["text"] + " [filtered]")
    return None


@plugin.before_model
def note(turn):
    return Note(f"python note for {turn['model']}")


@plugin.on_input
def gate(prompt):
    if "blocked" in prompt["text"]:
        return Reject("python rejects this input")
    return None


@plugin.on_stop
def verify(stop):
    if "draft" in stop["answer"] and stop["continues"] == 0:
        return Continue("please finalize the draft")
    return None


@plugin.on_event
def observe(event):
    events.append(event["event"])


@plugin.finish
def done(end):
    log.info(f"finished: {end['end']} after {len(events)} events")
    events.clear()
