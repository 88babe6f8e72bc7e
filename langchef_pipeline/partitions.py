"""One dynamic partition per experiment (design file); the sensor adds new ones."""

import warnings

import dagster as dg

# Checks on partitioned assets must share their partitions; Dagster marks that as a preview
# feature and warns on every definition. The warning is about Dagster, not about the user's data.
warnings.filterwarnings("ignore", message="Specifying a partitions_def on an AssetCheckSpec")

experiments = dg.DynamicPartitionsDefinition(name="experiments")
