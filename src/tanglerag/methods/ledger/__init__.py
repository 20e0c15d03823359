"""``ledger`` (ours): a ledger of the claims the passages make, each with the words that state it, counted by
independent source and settled by declared policies (witnesses, dates, authority, the model's own knowledge) into a
typed conflict report (``tanglerag.conflicts``)."""
