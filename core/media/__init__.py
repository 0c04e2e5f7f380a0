"""Decoding frames and DOM snapshots, and reading text on the screen."""
