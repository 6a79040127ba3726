"""ASAM formats at the project's boundary (SPEC §14, §15): OpenDRIVE maps in and out, OpenSCENARIO out.

``opendrive`` reads an OpenDRIVE file into plain records (with each element's
XML line), ``refline`` evaluates reference lines, ``xodr_import`` builds a
world template from them, ``xodr_export`` writes a template back to
OpenDRIVE and ``xosc_export`` writes a scenario manifest as OpenSCENARIO.
Everything here is plain Python: no Dagster.
"""
