"""Anthropic Messages transcripts of a computer-use loop: ``reader`` (the reader), ``actions`` (the computer
tool's and the toolsets' actions), ``logs`` (the shapes harnesses save a transcript in)."""
