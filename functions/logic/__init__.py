"""Business logic of each function, free of Lambda wiring so it can be tested directly."""
