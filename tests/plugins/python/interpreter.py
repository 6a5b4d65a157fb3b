"""A tool that reports which interpreter runs it."""

import json
import sys

from yohost import Plugin

plugin = Plugin("interpreter")


@plugin.tool(description="The embedded interpreter's version and prefix")
def interpreter(call):
    return json.dumps({"version": sys.version, "prefix": sys.prefix, "path": sys.path})
