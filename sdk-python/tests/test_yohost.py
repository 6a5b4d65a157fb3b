"""The SDK on its own, without a host: `python3 -m unittest discover sdk-python/tests`."""

import asyncio
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import yohost  # noqa: E402
from yohost import Continue, Deny, Edit, HookError, Note, Plugin, Rewrite, ToolResult  # noqa: E402


class RepliesTest(unittest.TestCase):
    def test_helpers_turn_into_the_contract_shapes(self):
        self.assertEqual(yohost.to_reply(Deny("no")), {"deny": "no"})
        self.assertEqual(yohost.to_reply(Rewrite({"a": 1})), {"args": {"a": 1}})
        self.assertEqual(yohost.to_reply(Note("n")), {"note": "n"})
        self.assertEqual(yohost.to_reply(Continue("go")), {"continue": "go"})
        self.assertEqual(yohost.to_reply(Edit()), None)
        self.assertEqual(
            yohost.to_reply(Edit(content="x", is_error=False)),
            {"content": [{"type": "text", "text": "x"}], "is_error": False},
        )
        self.assertEqual(
            yohost.to_reply(ToolResult("hi")),
            {"content": [{"type": "text", "text": "hi"}], "details": None, "is_error": False},
        )
        self.assertEqual(
            yohost.to_reply(ToolResult("done", terminate=True))["terminate"],
            True,
        )
        self.assertEqual(yohost.to_reply({"deny": "plain"}), {"deny": "plain"})


class PluginTest(unittest.TestCase):
    def test_a_plugin_outside_the_host_has_no_data_folder(self):
        self.assertIsNone(Plugin("a").data_dir)
        token = yohost._data_dir.set("/data/plugins-0/a")
        try:
            self.assertEqual(Plugin("a").data_dir, "/data/plugins-0/a")
        finally:
            yohost._data_dir.reset(token)

    def test_each_plugin_has_its_own_handlers(self):
        a, b = Plugin("a"), Plugin("b")
        a.before_tool(lambda call: None)

        @b.tool(parameters={"type": "object"})
        async def shout(call):
            """Shout."""
            return call["args"]["text"].upper()

        self.assertEqual(a.hooks, ["before_tool"])
        self.assertEqual(b.hooks, ["tools", "call_tool"])
        self.assertEqual(
            b.handler("tools")({"run_id": "r"}),
            [{"name": "shout", "description": "Shout.", "parameters": {"type": "object"}}],
        )
        call = {"run": {"run_id": "r"}, "tool": "shout", "call_id": "c", "args": {"text": "hi"}}
        self.assertEqual(asyncio.run(b.handler("call_tool")(call)), "HI")
        with self.assertRaises(HookError):
            a.handler("on_stop")

    def test_registering_a_hook_twice_is_an_error(self):
        plugin = Plugin()
        plugin.on_stop(lambda stop: None)
        with self.assertRaises(ValueError):
            plugin.on_stop(lambda stop: None)

    def test_logs_without_a_host_go_to_logging(self):
        with self.assertLogs("yohost", level="INFO") as logs:
            yohost.log.info("hello")
        self.assertEqual(logs.records[0].getMessage(), "hello")
        self.assertIsNone(yohost.current_run_id())


if __name__ == "__main__":
    unittest.main()
