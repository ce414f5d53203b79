"""An engine package that forgot to name its ``GAME``."""
