"""The compiler's version: in the CLI's --version and in every cache key."""

__version__ = "0.1.0"
