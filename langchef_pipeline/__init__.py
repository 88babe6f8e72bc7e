"""langchef_pipeline: the Dagster orchestration around langchef_core (assets, checks, CLI)."""
