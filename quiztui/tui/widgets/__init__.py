"""Reusable widgets of the quiztui TUI."""
