"""Run assembly, below both faces: config → provider → prompt → judge accuracy → run options → run.

The headless CLI (``quiztui.cli``) and the TUI (through the services the CLI hands it) build every
kind of run here, so a prompt override, a judge profile or a price applies the same way whichever
face started the run. One module per run kind; :mod:`quiztui.assemble.common` holds what they share.
"""
