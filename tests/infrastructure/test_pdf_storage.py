"""Render and ReadScans stream a document's PDF to /tmp (drac.aws.pdf_files): their ephemeral
storage holds the largest PDF an upload may be, and one more left by an invocation stopped
by its timeout."""

from __future__ import annotations

from drac.settings import Settings
from infra.stages import EPHEMERAL_MIB, pdf_storage
from tests.infrastructure.conftest import Synth

MIB = 1024 * 1024


def test_render_and_read_scans_hold_the_largest_pdf_twice_in_tmp(synth: Synth) -> None:
    settings = synth.stack.pipeline.stages.settings
    stages = synth.stack.pipeline.stages
    for fn in (stages.render, stages.read_scans):
        props = synth.resources[synth.logical_id(fn)]["Properties"]
        size_mib = props["EphemeralStorage"]["Size"]
        assert size_mib * MIB >= 2 * settings.conversion.max_file_bytes
        assert EPHEMERAL_MIB[0] <= size_mib <= EPHEMERAL_MIB[1]
    # the other functions keep Lambda's default 512 MB (billed beyond it)
    convert = synth.resources[synth.logical_id(stages.convert)]["Properties"]
    assert "EphemeralStorage" not in convert


def test_the_storage_follows_the_upload_limit_within_lambdas_range() -> None:
    assert pdf_storage(Settings()).to_mebibytes() == 2 * 500 + 64
    assert pdf_storage(Settings(max_file_bytes=MIB)).to_mebibytes() == 512
    assert pdf_storage(Settings(max_file_bytes=8 * 1024 * MIB)).to_mebibytes() == 10_240
