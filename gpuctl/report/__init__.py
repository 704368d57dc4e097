"""Renderers: rich tables for people, versioned JSON envelopes, JUnit XML."""
