"""simready: simulation-ready scenes and structured driving scenarios."""
