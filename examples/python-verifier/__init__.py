"""An on_stop verifier: the final answer must not leave work undone.

An answer with a TODO or an unfinished placeholder is sent back to the model
once; if it still has one, the run fails."""

from yohost import Continue, Fail, OnStop, OnStopReply, Plugin, log

from .checks import unfinished

plugin = Plugin("python-verifier")


@plugin.on_stop
def verify(stop: OnStop) -> OnStopReply:
    problems = unfinished(stop["answer"])
    if not problems:
        return None
    log.info(f"answer has unfinished parts: {problems}")
    if stop["continues"] == 0:
        return Continue(f"Your answer is unfinished ({', '.join(problems)}). Finish it.")
    return Fail(f"python-verifier: the answer is still unfinished: {', '.join(problems)}")
