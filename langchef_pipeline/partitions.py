"""One dynamic partition per experiment (design file); the sensor adds new ones."""

import dagster as dg

experiments = dg.DynamicPartitionsDefinition(name="experiments")
