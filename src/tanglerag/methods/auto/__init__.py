"""``auto``: find the question's tangle in its passages and answer with the method that fits it."""
