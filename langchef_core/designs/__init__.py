"""The pre-registration: design model and parsing, approval, the append-only ledger, and the
gate rules that must hold before anything is read out."""
