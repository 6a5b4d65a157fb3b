"""Loads, then a thread it started takes the GIL and never lets go (one C
call): no import or hook of this plugin is running when that happens."""

import threading
import time

from yohost import Plugin

plugin = Plugin("thread-holds-the-interpreter")


def hold():
    time.sleep(0.5)
    sum(range(10**18))


threading.Thread(target=hold, daemon=True).start()


@plugin.after_tool
def tag(call):
    return None
