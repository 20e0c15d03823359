"""Paper 002, PCAS: joint retrieval of a document and the relevant piece of a user's personal context. It
retrieves rather than answers, so it has no answer methods: ``PersonalRetriever`` serves ``ask --user``
and the service, and ``RETRIEVAL_METHODS`` are what ``eval`` runs on a retrieval dataset (ORCA-ShARC)."""
