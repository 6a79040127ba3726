"""What the stages write: where each artifact lies (:mod:`.layout`) and what each JSON file holds (:mod:`.records`).

Both only describe files (SPEC §9–§12): nothing here reads a store or runs a stage, so every stage, the
Dagster layer, the exports and the releases can share them.
"""
