# Replaced at install time by setup.py with the build tree installed from.
BUILD_DIRS: list = []
