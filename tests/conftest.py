from __future__ import annotations

import os
import subprocess

import pytest
from hypothesis import HealthCheck, settings

import book

settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


class KernelLost(Exception):
    """A kernel stopped answering while the book was built: the machine was busy, no page failed."""


# Tests that need the built book are run once more, with a new build, only when a kernel was lost.
BOOK_FIXTURES = {"book_build", "book_html"}


@pytest.fixture(scope="session")
def book_build(request) -> subprocess.CompletedProcess | None:
    """The book built once per session by the README's command (tests/book.py), clean and strict; None when
    ATTN_BOOK_HTML names a book built elsewhere (tests/browser then reads that one, and nothing is built).

    A build that lost a kernel raises KernelLost the first time, so that pytest-rerunfailures runs the test
    once more and this fixture builds again; a second failed build is returned as it is, for the test to
    report with its log (never a third build)."""
    if os.environ.get("ATTN_BOOK_HTML"):
        return None
    builds = request.config.stash.setdefault(book.BUILDS, [])
    result = book.build()
    builds.append(result)
    if book.kernel_trouble(result) and len(builds) == 1:
        raise KernelLost("a kernel stopped answering while the book was built; building once more:\n"
                         + (result.stdout + result.stderr)[-2000:])
    return result


def pytest_collection_modifyitems(config, items):
    for item in items:
        if BOOK_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.flaky(reruns=1, only_rerun=["KernelLost"]))
