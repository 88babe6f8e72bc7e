"""The Dagster definitions loaded by workspace.yaml (`dagster dev`)."""

import dagster as dg

defs = dg.Definitions(assets=[])
