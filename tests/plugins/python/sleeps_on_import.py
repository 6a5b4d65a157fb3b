"""Blocks at import for an hour (releasing the GIL while it sleeps)."""

import time

from yohost import Plugin

plugin = Plugin("sleeps-on-import")

time.sleep(3600)
