"""A batch key added by hand (the UI's "Add a partition" takes any text) is removed with its reason (issue 19)."""

from __future__ import annotations

import dagster as dg

from simready.assets.orchestration import batch_keys_sensor, invalid_batch_keys
from simready.assets.partitions import batch_partitions


def test_only_keys_of_the_form_b0000_are_kept():
    bad = invalid_batch_keys(["b0000", "b0012", "nightly", "b12x", "B0001", "b"])
    assert sorted(bad) == ["B0001", "b", "b12x", "nightly"]
    assert "is not of the form b0000" in bad["nightly"] and "\n" not in bad["nightly"]


def test_the_sensor_deletes_a_bad_key_and_says_why():
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
        assert isinstance(batch_keys_sensor(dg.build_sensor_context(instance=instance)), dg.SkipReason)
        instance.add_dynamic_partitions(batch_partitions.name, ["tuesday"])
        result = batch_keys_sensor(dg.build_sensor_context(instance=instance))
        (request,) = result.dynamic_partitions_requests
        assert isinstance(request, dg.DeleteDynamicPartitionsRequest)
        assert (request.partitions_def_name, list(request.partition_keys)) == (batch_partitions.name, ["tuesday"])
        assert "tuesday" in result.skip_reason.skip_message and "b0000" in result.skip_reason.skip_message
