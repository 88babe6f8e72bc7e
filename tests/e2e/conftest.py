"""The headless Chromium fixture, shared by every browser test of this folder."""

from tests.e2e.test_browser_report import browser  # noqa: F401  (a pytest fixture)
