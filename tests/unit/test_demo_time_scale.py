"""The demo's time scale (docagent/drills/demo_cloud.py ``default_time_scale``): it grows with the job, and
never compresses the function timeout below MIN_SCALED_FUNCTION_SECONDS (issue #53: 120 s x 0.05 timed the
first model calls out on a loaded machine)."""

from __future__ import annotations

import pytest

from docagent.drills.demo_cloud import MIN_SCALED_FUNCTION_SECONDS, default_time_scale


@pytest.mark.parametrize(
    ("documents", "timeout", "scale"),
    [
        (8, None, 0.125),  # the floor: 120 s lasts 15 s
        (200, None, 0.125),
        (1000, None, 0.25),  # the job's size: 0.05 per 200 documents
        (20_000, None, 1.0),  # never slower than real time
        (200, 300, 0.05),  # a longer function timeout: the size's scale already leaves 15 s
        (200, 10, 1.0),
    ],
)
def test_the_demo_scale_grows_with_the_job_and_leaves_the_function_its_floor(
    documents: int, timeout: float | None, scale: float
) -> None:
    assert default_time_scale(documents, timeout) == pytest.approx(scale)
    assert default_time_scale(documents, timeout) * (timeout or 120) >= min(
        MIN_SCALED_FUNCTION_SECONDS, timeout or 120
    )
