"""Command-line interface: argument parsing and rendering only."""
