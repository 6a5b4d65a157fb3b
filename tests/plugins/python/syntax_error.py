from yohost import Plugin

def broken(:
    pass
