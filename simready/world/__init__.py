"""World contract: frames, identity, ontology and world templates (no Dagster)."""
