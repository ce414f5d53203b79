"""Broken engines for the registry's tests (never registered anywhere else)."""
