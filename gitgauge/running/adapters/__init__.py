"""Agent adapters: a small base class and a name registry; one file per adapter."""
