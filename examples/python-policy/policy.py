"""A Python policy: denies destructive shell commands and makes force-pushes
safer by rewriting them."""

import re

from yohost import BeforeTool, BeforeToolReply, Deny, Plugin, Rewrite, log

plugin = Plugin("python-policy")

DESTRUCTIVE = re.compile(r"rm\s+-[a-z]*r[a-z]*f|mkfs|dd\s+if=|:\(\)\s*\{")


@plugin.before_tool
def guard_shell(call: BeforeTool) -> BeforeToolReply:
    if call["tool"] != "bash":
        return None
    command = call["args"].get("command", "")
    if DESTRUCTIVE.search(command):
        log.warning(f"denied a destructive command: {command!r}")
        return Deny("python-policy: destructive commands are not allowed")
    if "git push --force " in command + " ":
        safer = command.replace("--force", "--force-with-lease")
        log.info("rewrote a force-push to --force-with-lease")
        return Rewrite({**call["args"], "command": safer})
    return None
