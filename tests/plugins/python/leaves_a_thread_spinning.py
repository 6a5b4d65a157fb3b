"""Leaves a thread spinning forever in Python code after its import, and
says in `before_tool` whether the thread is still running."""

import threading
import time

from yohost import Plugin, Rewrite

plugin = Plugin("leaves-a-thread-spinning")
spins = 0


def spin():
    global spins
    while True:
        spins += 1


threading.Thread(target=spin, daemon=True).start()


@plugin.before_tool
def tag(call):
    before = spins
    time.sleep(0.05)
    state = "spinning" if spins != before else "stopped"
    return Rewrite({"text": call["args"]["text"] + f" +{state}"})
