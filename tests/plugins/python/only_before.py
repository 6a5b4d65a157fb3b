from yohost import Plugin, Rewrite

plugin = Plugin()


@plugin.before_tool
def tag(call):
    return Rewrite({"text": call["args"]["text"] + " +before"})
