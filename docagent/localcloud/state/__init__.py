"""The local cloud's state on disk: the journal and its replay at start."""
