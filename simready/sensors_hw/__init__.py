"""Sensor hardware models: frames, rigs, cameras, LiDAR, radar (no Dagster).

Not to be confused with Dagster "sensors", which watch for changes.
"""
