"""The table formats a workspace may hold, chosen by file extension (ARCHITECTURE §4).

Kept apart from ``tables`` so that naming files (``workspace``) never imports pandas."""

TABLE_SUFFIXES = (".jsonl", ".csv", ".parquet")
