"""Imports fine, but creates no `yohost.Plugin`."""

VALUE = 1
