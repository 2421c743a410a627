"""Settings of a loadmaster process: logging, and how Python's garbage collector runs in it."""
