"""Simulations of the papers and loaders for the shipped real data."""
__all__: list[str] = []
