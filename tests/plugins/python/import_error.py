from yohost import Plugin

import yohost_no_such_module  # line 3

plugin = Plugin()
