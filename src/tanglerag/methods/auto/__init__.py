"""``auto``: read the question's tangle from its passages and answer with the method that fits it."""
