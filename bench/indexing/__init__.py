"""Indexing: a cold index, one saved file until queryable, branch switches, large repositories."""
