import sys

sys.exit("not today")
