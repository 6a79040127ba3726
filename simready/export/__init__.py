"""Exports of observed samples to the formats teams train and debug with (SPEC §17): MCAP with Foxglove schemas
(:mod:`.mcap_file`, its messages :mod:`.mcap_messages`) and nuScenes (:mod:`.nuscenes`), both reading a sample
as :mod:`.observed` gives it.

Exports read the published files of a sample (``SampleDir``: manifest, trace, observations) and nothing of the
pipeline's memory, so they work on any copy of the artifacts.
"""
