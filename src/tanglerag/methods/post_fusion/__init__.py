"""Paper 004, "Modeling Uncertainty and Using Post-fusion as Fallback": post-fusion, the chain-of-thought
prompts and the two hybrids, with their prompts, trace steps and the %NM metric."""
