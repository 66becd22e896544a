"""Sample bots for gin-referee, each runnable as ``python -m sample_bots.<name>``."""
