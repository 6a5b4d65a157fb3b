"""A Python tool: word statistics of a text (an `async def` handler)."""

import asyncio
import logging
from collections import Counter

from yohost import CallTool, Plugin, ToolReply, ToolResult

plugin = Plugin("python-tool")
logger = logging.getLogger(__name__)


@plugin.tool(
    name="word_stats",
    description="Count the words of a text and name the most common ones.",
    parameters={
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The text to count"},
            "top": {"type": "integer", "description": "How many common words to name"},
        },
        "required": ["text"],
    },
)
async def word_stats(call: CallTool) -> ToolReply:
    args = call["args"]
    words = args["text"].lower().split()
    await asyncio.sleep(0)  # a real tool would await I/O here
    common = Counter(words).most_common(args.get("top", 3))
    logger.info("counted %d words", len(words))
    summary = ", ".join(f"{word} ({n})" for word, n in common)
    return ToolResult(f"{len(words)} words; most common: {summary}", details=dict(common))
