"""The Textual TUI. ``QuiztuiApp`` consumes the pipeline's event stream; no judging here."""
