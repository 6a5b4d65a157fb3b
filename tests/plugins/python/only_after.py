from yohost import Edit, Plugin

plugin = Plugin()


@plugin.after_tool
def tag(call):
    return Edit(content=call["output"]["content"][0]["text"] + " +after")
