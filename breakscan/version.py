"""breakscan's own version, in one place below every module that records or prints it."""

__version__ = "0.1.0"
