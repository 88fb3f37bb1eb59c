"""The YAML schemas (package data): the single source of truth for every generated codec."""
