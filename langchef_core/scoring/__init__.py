"""Scoring each golden in each arm: judges (recorded, rubric, OpenAI-compatible), retrieval
metrics, classification correctness, and the re-judging of human-reviewed anchors."""
