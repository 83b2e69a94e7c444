"""Shared pytest configuration for the whole test suite."""
