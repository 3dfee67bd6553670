"""Screens of the quiztui TUI, one per module."""
