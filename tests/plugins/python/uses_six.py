"""Imports a package installed in the virtualenv (`pip install six`)."""

import six

from yohost import Plugin

plugin = Plugin("uses-six")


@plugin.tool(description="The installed six's version and file")
def six_version(call):
    return f"{six.__version__} {six.__file__}"
