"""Running as many processes, on one machine or many, sharing Redis: what must hold for the
whole service rather than for one process (``limits``: rate limits and socket caps)."""
