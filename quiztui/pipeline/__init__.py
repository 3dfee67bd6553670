"""Runs as async streams of typed events; the TUI and the headless CLI consume the same stream."""
