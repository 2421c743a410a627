"""``POST /api/scheduling/preview``: a dry run of the real engine, with the previewed owners as the
controllers' next pass would leave them."""
