"""One module per method; ``registry`` maps CLI names to them."""
