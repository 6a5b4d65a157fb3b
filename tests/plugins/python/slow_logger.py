"""Logs before and after an `await`, through `log` and through `logging`."""

import asyncio
import logging

from yohost import Plugin, log

plugin = Plugin("slow-logger")
logger = logging.getLogger(__name__)


@plugin.before_tool
async def slow(call):
    text = call["args"]["text"]
    log.info(f"start {text}")
    await asyncio.sleep(0.3)
    logger.warning(f"end {text}")
