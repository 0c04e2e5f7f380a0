"""Questions asked of a ledger: comparisons of arms, agreement of verdict sources, tables, two runs side by side,
and the CI gate."""
