"""The single benchmark runner every method plugs into."""
