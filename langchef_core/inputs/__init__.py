"""The workspace on disk and what is read from it: paths and names, table reading, pandera
schemas and the one error type every bad input is reported with."""
