"""A rollout on disk: traces (trace) and checkpoints (checkpoint), each one file format with its reader and writer."""
