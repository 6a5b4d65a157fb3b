"""Holds the GIL at import for eight seconds, then lets go: `PyDLL` calls C
without releasing the GIL, and `usleep` never returns to the interpreter."""

import ctypes

from yohost import Plugin

plugin = Plugin("holds-the-interpreter-for-a-while")

ctypes.PyDLL(None).usleep(8_000_000)
