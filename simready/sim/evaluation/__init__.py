"""Reading a rollout after the fact: outcomes and verdict inputs (evaluate), per-tick metrics (metrics), the rollout plot (plot)."""
