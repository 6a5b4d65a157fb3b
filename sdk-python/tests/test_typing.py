"""The decorators' types reject wrong replies under mypy, the way ``tsc``
does for TypeScript plugins.

Needs mypy (CI installs a pinned one); skipped where it is not installed.
"""

import os
import re
import unittest
from pathlib import Path
from unittest import mock

try:
    from mypy import api as mypy_api
except ImportError:  # pragma: no cover - CI always has mypy
    mypy_api = None

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
CASES = HERE / "typecheck"
EXPECT = re.compile(r"#\s*E:\s*([a-z-]+)")
REPORTED = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): error: .*\[(?P<code>[a-z-]+)\]$")


def mypy(path: Path) -> tuple[int, set[tuple[int, str]], str]:
    """mypy --strict on ``path`` against this SDK: exit status, the
    ``(line, code)`` of each error, and the report."""
    with mock.patch.dict(os.environ, {"MYPYPATH": str(SRC)}):
        out, err, status = mypy_api.run(
            ["--strict", "--cache-dir", os.devnull, str(path)]
        )
    errors = {
        (int(m["line"]), m["code"])
        for m in map(REPORTED.match, out.splitlines())
        if m
    }
    return status, errors, out + err


@unittest.skipIf(mypy_api is None, "mypy is not installed")
class TypingTest(unittest.TestCase):
    def test_every_right_reply_passes(self) -> None:
        status, errors, report = mypy(CASES / "right_replies.py")
        self.assertEqual((status, errors), (0, set()), report)

    def test_each_wrong_reply_fails_on_its_line(self) -> None:
        path = CASES / "wrong_replies.py"
        expected = {
            (number, m[1])
            for number, line in enumerate(path.read_text().splitlines(), start=1)
            if (m := EXPECT.search(line))
        }
        self.assertGreaterEqual(len(expected), 10)
        status, errors, report = mypy(path)
        self.assertEqual(status, 1, report)
        self.assertEqual(errors, expected, report)


if __name__ == "__main__":
    unittest.main()
