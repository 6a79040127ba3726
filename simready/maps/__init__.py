"""ASAM formats at the project's boundary (SPEC §14, §15): OpenDRIVE maps in and out, OpenSCENARIO in and out.

``opendrive`` reads an OpenDRIVE file into plain records (with each element's
XML line), ``refline`` evaluates reference lines, ``xodr_import`` builds a
world template from them, ``xodr_export`` writes a template back to
OpenDRIVE, ``xosc_import`` reads an OpenSCENARIO file into a scenario manifest
and ``xosc_export`` writes a scenario manifest as OpenSCENARIO (the importers and
the OpenSCENARIO export are packages, one module per part of the format).
Everything here is plain Python: no Dagster.
"""
