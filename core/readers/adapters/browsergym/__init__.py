"""BrowserGym / AgentLab experiment directories: ``reader`` (the reader), ``actions`` (the high-level action
code), ``stepinfo`` (what a StepInfo says beside its action: page, time, tokens)."""
