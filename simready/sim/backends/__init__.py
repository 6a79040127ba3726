"""Physics backends: ``kinematic-v1`` (path following) and ``dynamic-v1`` (PyBullet)."""
