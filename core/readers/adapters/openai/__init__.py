"""OpenAI Responses transcripts of a computer-use loop: ``reader`` (the reader), ``actions`` (the computer tool's
actions)."""
