"""A package plugin: its handlers live in a module of its own."""

from yohost import Plugin

from .helpers import reverse

plugin = Plugin("package")


@plugin.tool(parameters={"type": "object", "properties": {"text": {"type": "string"}}})
def backwards(call):
    """Reverse the text."""
    return reverse(call["args"]["text"])
