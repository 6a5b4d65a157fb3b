"""{{name}}: a yohost plugin in Python, run by the host on its embedded
interpreter. Type-check it with `mypy --strict plugin.py` once the SDK is
installed (`pip install yohost`; until it is published, `pip install
PATH/sdk-python` from a yohost checkout, as `yohost new` printed)."""

from yohost import BeforeTool, BeforeToolReply, Deny, Plugin, log

plugin = Plugin("{{name}}")


@plugin.before_tool
def guard(call: BeforeTool) -> BeforeToolReply:
    command = call["args"].get("command", "")
    if call["tool"] == "bash" and "rm -rf" in str(command):
        log.warning("denied a bash command containing `rm -rf`")
        return Deny("{{name}}: `rm -rf` is not allowed")
    return None
