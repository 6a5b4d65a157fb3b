"""Holds the GIL at import and never lets go: one C call that never reaches
a bytecode boundary, so no exception raised into its thread can stop it."""

from yohost import Plugin

plugin = Plugin("holds-the-interpreter")

sum(range(10**18))
