from quiztui.cli import entry

entry()
