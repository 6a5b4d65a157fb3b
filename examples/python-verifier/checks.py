"""What counts as unfinished."""

MARKERS = ("TODO", "FIXME", "<placeholder>")


def unfinished(answer: str) -> list[str]:
    """The markers of unfinished work in ``answer``."""
    return [marker for marker in MARKERS if marker in answer]
