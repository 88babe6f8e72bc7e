"""The embedded demo: a generated workspace with planted effects known in advance.

``build_demo_workspace(root)`` writes a recipe assistant's evaluation workspace (handbook,
90 goldens with user slices and clusters, qrels, pools, arm runs, anchors, approved designs)
and returns a ``DemoManifest`` saying, per experiment, what was planted and what the
readout must show. The same seed writes byte-identical files.
"""

from .build import (DEMO_SEED, MANIFEST_NAME, DemoManifest, DemoPlan, PlantedAnchors,
                    PlantedExperiment, approve_demo_designs, build_demo_workspace, plan_demo)

__all__ = ["DEMO_SEED", "MANIFEST_NAME", "DemoManifest", "DemoPlan", "PlantedAnchors",
           "PlantedExperiment", "approve_demo_designs", "build_demo_workspace", "plan_demo"]
