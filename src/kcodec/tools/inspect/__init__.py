"""Annotated hex: the schemas walked over real bytes."""
