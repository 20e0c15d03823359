"""Personal context: per-user statements and joint passage-context retrieval (PCAS, paper 002)."""
