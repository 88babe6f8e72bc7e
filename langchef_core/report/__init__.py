"""The readout report: a versioned, self-contained HTML page per readout, and the index.

``render_report(readout, created_at)`` is the renderer ``publish_readout`` plugs in;
``template_sha256()`` goes into each version's manifest; ``write_index(reports_root,
created_at)`` lists every experiment and version in ``reports/index.html``.
"""

from .index import experiment_folder, read_listings, render_index, write_index
from .render import render_report, template_sha256, templates_folder
from .view_model import build_report_view, verdict_sentence

__all__ = ["build_report_view", "experiment_folder", "read_listings", "render_index",
           "render_report", "template_sha256", "templates_folder", "verdict_sentence",
           "write_index"]
