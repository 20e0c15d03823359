"""Building blocks shared by the methods: retrieve, generate (and later organize, verify)."""
