"""A hostile policy: what `before_tool` does depends on the echo text."""

import asyncio
import os
import sys
import time

from yohost import Deny, HookError, Plugin, log

plugin = Plugin("hostile")
spins = 0


@plugin.before_tool
def hostile(call):
    global spins
    what = call["args"].get("text", "")
    if what == "raise":
        raise RuntimeError("hostile plugin raised on purpose")
    if what == "spin":
        while True:
            spins += 1
    if what == "still spinning?":
        before = spins
        time.sleep(0.1)
        return Deny("still spinning" if spins != before else "stopped spinning")
    if what == "sleep":
        time.sleep(999)
    if what == "nap":
        time.sleep(1.5)
        log.info("woke up after the deadline")
    if what == "exit":
        sys.exit(3)
    if what == "os exit":
        os._exit(4)
    if what == "wrong shape":
        return {"allow": True}
    if what == "not json":
        return {"deny": object()}
    if what == "refuse":
        raise HookError("hostile plugin refuses on purpose")
    if what == "async":
        return wait_forever()
    if what == "async spin":
        return spin_async()
    return None


async def wait_forever():
    try:
        await asyncio.sleep(999)
    except asyncio.CancelledError:
        log.info("cancelled at the deadline")
        raise


async def spin_async():
    global spins
    while True:
        spins += 1
