"""Configuration files, paths and environment overrides."""
